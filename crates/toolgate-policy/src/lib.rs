//! Pure policy decisions for toolgate: no I/O, no clocks, no global state.
//!
//! Everything here is a function of its inputs, so it can be tested with
//! tables and fuzzed. Today it holds:
//!
//! - the confirmation table ([`ConfirmationPolicy`]);
//! - shell commands: a bash parser front-end ([`parse_command`] →
//!   [`ParsedCommand`]), the blocklist and the `safe`/`dev`/`dangerous`
//!   classification ([`CommandPolicy`], [`classify`] → [`Verdict`]).
//!
//! The guardrail rules join them as they land.
//!
//! # Example
//!
//! ```
//! use toolgate_core::{CommandClass, Sensitivity};
//! use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
//!
//! let policy = ConfirmationPolicy::new(ConfirmationMode::ConfirmSensitive);
//! assert!(!policy.needs_confirmation(Sensitivity::ReadOnly));
//! assert!(policy.needs_confirmation(Sensitivity::Command(CommandClass::Dev)));
//! ```

pub use command::{
    CommandContext, CommandPolicy, CommandPolicyBuilder, CommandPolicyError, MAX_COMMAND_LEN,
    MAX_NESTING, Operand, OperandKind, Origin, ParseError, ParsedCommand, PipelineSlot,
    Redirection, RedirectionKind, ShellFeatures, SimpleCommand, Verdict, VerdictKind, Word,
    classify, command_operands, parse_command,
};
pub use confirmation::{ConfirmationMode, ConfirmationPolicy};

mod command;
mod confirmation;
