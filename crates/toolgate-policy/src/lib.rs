//! Pure policy decisions for toolgate: no I/O, no clocks, no global state.
//!
//! Everything here is a function of its inputs, so it can be tested with
//! tables and fuzzed. Today it holds:
//!
//! - the confirmation modes ([`ConfirmationPolicy`] over a [`ModeCall`] →
//!   [`ModeDecision`]) and the user's persistent allow/ask/deny rules over
//!   a call's effects ([`ConfirmationRules`] of [`ConfirmationRule`]s →
//!   [`RuleMatch`]; [`allow_rule_for`] the one that would allow a call),
//!   and Claude Code's permission rules read as ours ([`claude_rule`],
//!   [`claude_mode`]) and ours written back ([`claude_text`]);
//! - shell commands, re-exported from `toolgate-command` (the classifier,
//!   a crate of its own) and `toolgate-shell` (the parser it reads): a bash
//!   parser front-end ([`parse_command`] → [`ParsedCommand`]), the
//!   blocklist and the `safe`/`dev`/`dangerous` classification
//!   ([`CommandPolicy`], [`classify`] → [`Verdict`]);
//! - the guardrail rules over a call's declared effects: sensitive and
//!   protected paths ([`PathRules`] → [`PathRefusal`]), the one way a path
//!   allow rule matches ([`allows_paths`] over [`FileGlobs`]), the edit
//!   limits ([`EditLimits`], [`EditCount`], [`EditUsage`]) and the code
//!   rules ([`CodeRules`] → [`BrokenRule`]). An opaque call (MCP, dynamic
//!   script tools) passes every deny rule and matches no allow rule; it is
//!   confirmed instead.
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
//! use toolgate_core::{CommandClass, Effects, Sensitivity};
//! use toolgate_policy::{
//!     CommandPolicy, ConfirmationMode, ConfirmationPolicy, ModeCall, ModeDecision,
//! };
//!
//! let policy = ConfirmationPolicy::new(ConfirmationMode::ConfirmSensitive);
//! let call = |sensitivity| ModeCall::new(sensitivity, &Effects::Opaque);
//! assert_eq!(policy.decide(call(Sensitivity::ReadOnly)), ModeDecision::Run);
//! let dev = call(Sensitivity::Command(CommandClass::Dev));
//! assert_eq!(policy.decide(dev), ModeDecision::Ask);
//! let ci = ConfirmationPolicy::new(ConfirmationMode::DontAsk);
//! assert_eq!(ci.decide(dev), ModeDecision::Refuse);
//!
//! let commands = CommandPolicy::default();
//! let verdict = commands.classify_with_env("git log --oneline -5 | head", &["LANG"]);
//! assert_eq!(verdict.command_class(), CommandClass::Safe);
//! assert_eq!(verdict.programs(), ["git", "head"]);
//! assert_eq!(commands.classify("sort --compress-prog=sh f").label(), "dangerous");
//! assert_eq!(commands.classify("ls --frobnicate").label(), "dev");
//! ```
//!
//! The guardrails judge what a call will do, before it runs:
//!
//! ```
//! use toolgate_core::{Change, Effect, Effects};
//! use toolgate_policy::{EditCount, EditLimits, EditUsage, PathRules};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rules = PathRules::builder("/ws").build()?;
//! let rename = Effects::known([Effect::Move { from: "notes.md".into(), to: ".env".into() }]);
//! let refusal = rules.check(&rename, &|_| None, &|_| Vec::new()).unwrap_err();
//! assert!(refusal.to_string().starts_with("`.env` is a sensitive file (pattern `.env*`)"));
//!
//! let write = Effects::known([Effect::write("a.rs", Change::counted(3, 1, false))]);
//! let limits = EditLimits::new().max_files_modified(Some(1));
//! limits.check(&EditUsage::new(), &EditCount::of(&write))?;
//! # Ok(())
//! # }
//! ```

pub use claude::{ClaudeContext, ClaudeTools, Unmappable, claude_mode, claude_rule, claude_text};
pub use confirmation::{ConfirmationMode, ConfirmationPolicy, ModeCall, ModeDecision};
pub use effects::{
    BrokenRule, CodeRule, CodeRules, EditCount, EditLimits, EditUsage, EffectsPolicyError,
    FileGlobs, LimitRefusal, PathRefusal, PathRules, PathRulesBuilder, Severity, Via, allows_paths,
    escape_glob,
};
pub use rules::{
    ANY_TOOL, Access, ConfirmationRule, ConfirmationRules, ConfirmationRulesBuilder, RuleDecision,
    RuleError, RuleMatch, plain_words,
};
pub use suggest::{allow_rule_for, narrow_allow_rule_for, rules_add_line};
pub use toolgate_command::{
    CommandContext, CommandPolicy, CommandPolicyBuilder, CommandPolicyError, MAX_COMMAND_LEN,
    MAX_NESTING, Operand, OperandKind, Origin, ParseError, ParsedCommand, PipelineSlot,
    Redirection, RedirectionKind, ShellFeatures, SimpleCommand, Verdict, VerdictKind, Word,
    classify, command_operands, parse_command,
};

mod claude;
mod confirmation;
mod effects;
mod rules;
mod suggest;
