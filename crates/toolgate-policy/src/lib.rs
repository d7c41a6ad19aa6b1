//! Pure policy decisions for toolgate: no I/O, no clocks, no global state.
//!
//! Everything here is a function of its inputs, so it can be tested with
//! tables and fuzzed. Today it holds the confirmation table
//! ([`ConfirmationPolicy`]); the command parser and classifier, the blocklist
//! and the guardrail rules join it as they land.
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

pub use confirmation::{ConfirmationMode, ConfirmationPolicy};

mod confirmation;
