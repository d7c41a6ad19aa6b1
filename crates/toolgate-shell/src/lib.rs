//! The bash parser and the command model toolgate's classifier reads
//! (DESIGN.md §2, §9).
//!
//! [`parse_command`] turns a command line into a [`ParsedCommand`]: every
//! simple command with its program (wrappers and assignments stripped), its
//! argv with quotes removed ([`Word`]), its redirections and its context.
//! The classification itself (`safe`, `dev`, `dangerous`, the blocklist) is
//! in `toolgate-policy`, which re-exports the types here that its callers
//! need.
//!
//! # Rules
//!
//! - Pure: no I/O, no clocks, no global state of ours; the answers are a
//!   function of the input.
//! - Nothing of brush-parser's syntax tree leaks out: [`model`] holds our
//!   own types.
//! - What is judged while parsing (a wrapper's options in [`wrappers`], a
//!   builtin that sets a variable in [`builtins`], a fork in [`forks`]) is
//!   recorded as a [`judgement::Judgement`] on the command for the
//!   classifier to read; this crate decides no class for a line.
//! - The modules that are `pub` beyond the re-exported types ([`builtins`],
//!   [`forks`], [`judgement`], [`model`], [`options`], [`variables`],
//!   [`words`], [`wrappers`]) serve `toolgate-policy`'s classifier; other
//!   users need only the items at the crate root.
//!
//! # The parser
//!
//! We use [brush-parser](https://docs.rs/brush-parser), the parser of the
//! [brush](https://github.com/reubeno/brush) shell. Evaluated against the
//! alternatives (2025):
//!
//! - **brush-parser** (MIT, pure Rust): written to run real bash scripts,
//!   with a test suite that compares brush with bash, so its coverage of
//!   bash syntax is broad: pipelines, `;`/`&&`/`||`/newlines, subshells, brace
//!   groups, `if`/`for`/`while`/`case`, functions, `[[ ]]`, `(( ))`,
//!   here-documents and here-strings, `&>`/`>|`/`<>`, command and process
//!   substitution, ANSI-C quoting, extglob. It returns a typed syntax tree
//!   and a typed error; words come with their quoting pieces. It is actively
//!   maintained (releases through 2025) and builds in under a minute with no
//!   C toolchain. Its cost: a few dependencies we would not otherwise need
//!   (`peg`, `bon`, `cached`, and `insta`, which it lists as a normal
//!   dependency), and it is not hardened against hostile input. Fuzzing it
//!   through our classifier (`fuzz/fuzz_targets/command_classify.rs`) found
//!   two `unwrap` panics (a file descriptor number beyond `i32`; a
//!   here-document meeting `$((…))`), an endless loop (a here-document
//!   operator with no delimiter inside `$(…)`), and exponential
//!   backtracking on unclosed `(`/`$(`/`${`/`case`. So every call is
//!   guarded by `catch_unwind`, and the raw text is checked first
//!   (`limits.rs`): length ([`MAX_COMMAND_LEN`]), nesting
//!   ([`MAX_NESTING`], which also bounds stack use), unclosed openers, and
//!   the constructs above; what fails a check is `dangerous`.
//! - **tree-sitter-bash** (MIT, C): error-tolerant and fast, but a 10 MB
//!   generated C parser plus the tree-sitter runtime to compile, C code in a
//!   security path, stringly-typed node kinds, and error recovery that
//!   builds a tree for invalid input (we would have to reject every `ERROR`
//!   node anyway, since a shell would not run that input as we read it).
//! - **yash-syntax** (pure Rust): GPL-3.0, which our MIT/Apache licence
//!   cannot take; it also targets POSIX sh rather than bash, and its API is
//!   built around an async lexer.
//!
//! brush-parser memoises word parsing in a small process-wide cache (64
//! entries). That is its business; the answers are a function of the input
//! alone, so this crate stays pure.
//!

pub use limits::{MAX_COMMAND_LEN, MAX_NESTING};
pub use model::{
    CommandContext, Origin, ParsedCommand, PipelineSlot, Redirection, RedirectionKind,
    ShellFeatures, SimpleCommand,
};
pub use operands::{Operand, OperandKind, command_operands};
pub use parse::{ParseError, parse_command};
pub use words::Word;

pub mod builtins;
pub mod forks;
pub mod judgement;
mod limits;
pub mod model;
mod operands;
pub mod options;
mod parse;
pub mod variables;
pub mod words;
pub mod wrappers;
