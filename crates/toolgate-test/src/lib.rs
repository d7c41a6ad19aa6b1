//! The test harness toolgate's crates share, a dev-dependency only:
//!
//! - [`model`]: a scripted OpenAI-compatible model server on 127.0.0.1
//!   (a [`wiremock`] server answering each request with the next reply of a
//!   script) and the replies tests build it from ([`model::answer`],
//!   [`model::tool_call`], [`model::sse`]);
//! - [`clean_command`]: a program (the `toolgate` binary) run with a
//!   cleared environment: only the variables a process needs to start, a
//!   given `HOME`, and nothing toolgate reads from the caller (no
//!   `TOOLGATE_*`, XDG directories or `RUST_LOG`);
//! - [`TempHome`]: a temporary directory holding a workspace and a home
//!   apart from it, so a test reads and writes neither the caller's
//!   configuration nor its data ([`TempHome::builder`] for another
//!   place or the workspace beside the home).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use toolgate_test::{TempHome, model};
//!
//! let server = model::server("/v1/chat/completions", vec![model::answer("hi")]).await;
//! let home = TempHome::new()?;
//! let output = home
//!     .command("toolgate")
//!     .args(["--model", "scripted", "--base-url"])
//!     .arg(format!("{}/v1", server.uri()))
//!     .args(["run", "say hi"])
//!     .output()?;
//! assert!(output.status.success());
//! # Ok(())
//! # }
//! ```

pub use env::{TempHome, TempHomeBuilder, clean_command};

mod env;
pub mod model;
