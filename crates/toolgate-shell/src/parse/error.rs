//! Why a command could not be analysed.

use std::error::Error as StdError;

/// Why a command could not be analysed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The command is longer than [`MAX_COMMAND_LEN`](crate::MAX_COMMAND_LEN).
    #[error("the command is {len} bytes long, more than the {max} bytes analysed")]
    TooLong {
        /// Length of the command in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The command nests deeper than the analysis allows.
    #[error("the command nests more than {max} levels deep")]
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// The command is not valid shell syntax.
    #[error("not valid shell syntax")]
    Syntax(#[source] Box<dyn StdError + Send + Sync>),
    /// The command combines constructs the parser is known to fail on.
    #[error("the command uses {0}, which toolgate does not analyse")]
    Unsupported(&'static str),
    /// The command holds a number the parser cannot represent (a file
    /// descriptor beyond `i32`, a brace-sequence bound beyond `i64`).
    #[error("the command has a number too large to analyse")]
    NumberTooLarge,
    /// The parser failed on this input instead of returning an error.
    #[error("the shell parser failed on this input")]
    ParserFailed,
}
