//! The one process runner of toolgate, and the kernel sandbox every process
//! runs in.
//!
//! **The classifier decides whether to ask; the kernel decides what a process
//! can do.** Every process toolgate starts — commands, background processes,
//! hooks, quality gates, MCP servers — is started by a [`Sandbox`], in a
//! [`Profile`]:
//!
//! - [`Profile::ReadOnly`], for commands judged read-only: nothing writable
//!   but `/dev/null`, no network, and `execve` of nothing but the programs
//!   the command line names. A misjudged command can only read.
//! - [`Profile::Standard`], for everything else: writes beneath the
//!   workspace and a private `/tmp`; toolgate's policy files and the
//!   protected paths read-only.
//!
//! In both, the workspace's sensitive files, the home directory, the
//! user's secrets and toolgate's own state ([`SandboxBuilder::private`]:
//! its configuration and data, wherever they lie) are unreadable, other
//! processes invisible, the environment built rather than inherited
//! ([`EnvPolicy`]). The network of standard processes is the host's, none,
//! or — with a [`NetworkPolicy`] — only a proxy that connects where the
//! allow and deny lists say and asks a person about the rest. The rules are
//! on [`Sandbox`]; how it is built, with namespaces, mounts and Landlock,
//! in the `linux::child` module. Every command tree is bounded by
//! [`Limits`] — processes, memory, CPU time, file size, open files, the
//! size of `/tmp` and `/dev/shm` — enforced with cgroups, resource limits
//! and tmpfs sizes (see the [`limits`] module); a run that hit one says so
//! ([`Finished::limits_hit`]). [`SandboxStatus`] says what the running
//! kernel allows; where it lacks a piece, callers ask before every command.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use toolgate_sandbox::{Level, Profile, RunOptions, Sandbox, Spawn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join(".env"), "API_KEY=hunter2\n")?;
//! let sandbox = Sandbox::builder(dir.path()).build()?;
//! // A command judged read-only, in the read-only profile.
//! let spawn = Spawn::shell("cat .env; ls -A; touch new.txt").profile(Profile::ReadOnly {
//!     programs: vec!["cat".into(), "ls".into(), "touch".into()],
//! });
//! let done = sandbox.run(&spawn, &RunOptions::new(Duration::from_secs(10))).await?;
//! if sandbox.status().level() == Level::Full {
//!     assert!(!done.stdout.contains("hunter2")); // .env is masked
//!     assert!(!dir.path().join("new.txt").exists()); // nothing is writable
//! }
//! # Ok(())
//! # }
//! ```

pub use builder::{
    DEFAULT_HOME_READABLE, DEFAULT_HOME_SECRETS, DEFAULT_SYSTEM_SECRETS, SandboxBuilder,
    SandboxMode,
};
pub use env::{CORE_VARIABLES, EnvPolicy, looks_like_credential};
pub use error::SandboxError;
pub use gitconfig::KEPT_SECTIONS;
pub use limits::{ByteSize, ByteSizeError, Limit, LimitHit, Limits, LimitsBuilder, LimitsError};
pub use net::{
    ConnectionRecord, ConsentAnswer, ConsentRequest, Decision, NetworkAttachment, NetworkConsent,
    NetworkMode, NetworkObserver, NetworkPolicy, NetworkPolicyBuilder, NetworkStatus, PatternError,
    Protocol, Resolve, SystemResolver,
};
pub use outcome::{limit_notes, outcome, with_run_metadata};
pub use placeholder::Lease;
pub use runner::{Capture, Finished, RunOptions, kill_group};
pub use sandbox::{Prepared, Running, Sandbox};
pub use scan::MAX_ENTRIES;
pub use spawn::{Profile, Spawn};
pub use status::{Level, LimitStatus, SandboxStatus};
#[doc(hidden)]
pub use toolgate_netproxy::fuzz_proxy_request;
pub use userns::apparmor_profile;

mod builder;
mod capture;
mod env;
mod error;
pub mod gitconfig;
pub mod limits;
mod linux;
mod net;
mod outcome;
mod placeholder;
mod resolve;
mod runner;
mod sandbox;
mod scan;
mod session;
mod spawn;
mod status;
mod userns;
