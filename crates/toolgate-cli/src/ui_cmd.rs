//! `toolgate ui`: serves the web app until Ctrl-C, and the approval page
//! that `run --approver ui` and `mcp serve --approver ui` start.

use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use toolgate_ui::{UiOptions, UiServer};

use crate::cli::{GlobalArgs, UiArgs};
use crate::render::{CliError, Exit, note};
use crate::{Setup, out};

/// How long runs get to end with their summary when the server stops.
const GRACE: Duration = Duration::from_secs(30);

/// `toolgate ui`: prints the URL (token included) on stdout once serving.
pub(crate) async fn ui(setup: &Setup, global: &GlobalArgs, args: UiArgs) -> Result<Exit, CliError> {
    let mut options = UiOptions::new(args.addr);
    options.allow_remote = args.allow_remote;
    options.reload = Some(crate::host_factory(global, &args.llm));
    let server = start(setup, options).await?;
    out(&format!("{}\n", server.url()))?;
    if !server.addr().ip().is_loopback() {
        note(&format!(
            "warning: serving on {}: anyone who has the URL above can run agents in {}",
            server.addr(),
            setup.host.workspace().display()
        ));
    }
    note("toolgate ui: open the URL above; Ctrl-C stops the server (runs end with a summary)");
    if args.open {
        open_browser(server.url());
    }
    crate::mcp_cmd::shutdown_signal().await;
    note("toolgate ui: stopping");
    server.shutdown(GRACE).await;
    setup.host.flush().await;
    Ok(Exit::Success)
}

/// Starts a server for `setup`'s host.
pub(crate) async fn start(setup: &Setup, options: UiOptions) -> Result<UiServer, CliError> {
    UiServer::start(Arc::clone(&setup.host), options)
        .await
        .map_err(|e| {
            let hint = e.hint();
            CliError::usage(anyhow!(e)).with_hint(hint)
        })
}

/// The approval page of `run|mcp serve --approver ui`, its URL on stderr
/// (stdout carries the run's output, or the MCP protocol).
pub(crate) async fn approval_page(
    setup: &Setup,
    addr: std::net::SocketAddr,
) -> Result<UiServer, CliError> {
    let mut options = UiOptions::new(addr);
    options.approver_only = true;
    let server = start(setup, options).await?;
    crate::render::note_own(&format!(
        "toolgate: calls that need confirmation are asked at {}",
        server.url()
    ));
    Ok(server)
}

/// `--open`: the platform's opener; a failure is a note, not an error.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(error) = spawned {
        note(&format!(
            "could not start `{opener}` ({error}): open the URL above by hand"
        ));
    }
}
