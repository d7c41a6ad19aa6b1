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
//! # Commands fail closed
//!
//! The classifier decides whether to ask; the kernel decides what a process
//! can do. A `safe` command runs without confirmation under a strict kernel
//! profile (no writes, no network, no program but those in
//! [`Verdict::programs`]), so `safe` is an allow-list: exact programs with
//! the options known to only read ([`CommandPolicy`]'s rules 5.13 and
//! 5.14), no variable that changes how programs are found or loaded
//! ([`CommandPolicy::classify_with_env`] for `run_command`'s `env`), no
//! arithmetic that evaluates a variable. Anything toolgate does not know is
//! `dev` or `dangerous`, and is asked for in the default mode.
//!
//! # Example
//!
//! ```
//! use toolgate_core::{CommandClass, Sensitivity};
//! use toolgate_policy::{CommandPolicy, ConfirmationMode, ConfirmationPolicy};
//!
//! let policy = ConfirmationPolicy::new(ConfirmationMode::ConfirmSensitive);
//! assert!(!policy.needs_confirmation(Sensitivity::ReadOnly));
//! assert!(policy.needs_confirmation(Sensitivity::Command(CommandClass::Dev)));
//!
//! let commands = CommandPolicy::default();
//! let verdict = commands.classify_with_env("git log --oneline -5 | head", &["LANG"]);
//! assert_eq!(verdict.command_class(), CommandClass::Safe);
//! assert_eq!(verdict.programs(), ["git", "head"]);
//! assert_eq!(commands.classify("sort --compress-prog=sh f").label(), "dangerous");
//! assert_eq!(commands.classify("ls --frobnicate").label(), "dev");
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
