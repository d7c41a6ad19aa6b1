//! `toolgate doctor`: one line per check, ✓ or ✗ with the fix.

use std::fmt::Write as _;

use toolgate_host::{Check, CheckState, DoctorOptions, LlmOverrides};

use crate::Setup;
use crate::cli::DoctorArgs;
use crate::render::{self, CliError, Exit};

/// `✓ name: detail`, or `✗`/`!` with `  fix: …` below; the mark
/// coloured when `color`, the words cleaned (they quote servers and files).
pub(crate) fn line(text: &mut String, check: &Check, color: bool) {
    let _ = writeln!(
        text,
        "{} {}: {}",
        render::mark(check.state, color),
        render::clean(&check.name),
        render::clean(&check.detail)
    );
    if let Some(fix) = &check.fix {
        let _ = writeln!(
            text,
            "    {}: {}",
            render::paint(render::HINT, "fix", color),
            render::clean(fix)
        );
    }
}

fn print(checks: &[Check], json: bool) -> Result<Exit, CliError> {
    let failed = checks.iter().any(|c| c.state == CheckState::Fail);
    if json {
        crate::out(&crate::json_text(&checks)?)?;
    } else {
        let color = render::stdout_color();
        let mut text = String::new();
        for check in checks {
            line(&mut text, check, color);
        }
        crate::out(&text)?;
    }
    Ok(if failed { Exit::Failure } else { Exit::Success })
}

/// `toolgate doctor`: exit 0 when nothing failed, 1 otherwise (warnings do
/// not fail).
pub(crate) async fn doctor(setup: &Setup, args: &DoctorArgs) -> Result<Exit, CliError> {
    let mut options = DoctorOptions::default();
    options.llm = LlmOverrides::new(args.model.clone(), args.base_url.clone());
    options.check_tools = args.check_tools && !args.no_check_tools;
    let checks = setup.host.doctor(&options).await;
    print(&checks, setup.json)
}

/// `toolgate doctor --apparmor-profile`: the profile that lets this binary
/// make user namespaces where AppArmor restricts them, on stdout.
pub(crate) fn apparmor_profile() -> Result<Exit, CliError> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| {
            CliError::new(
                Exit::Failure,
                anyhow::anyhow!(e).context("cannot tell where this toolgate binary is"),
            )
        })?;
    crate::out(&toolgate_sandbox::apparmor_profile(&exe))
}

/// The configuration did not load: the one check that failed, with its fix.
pub(crate) fn config_failed(error: &CliError, json: bool) -> Exit {
    print(&[failed_check(error)], json).unwrap_or(Exit::Failure)
}

/// The `configuration` check that failed with `error`.
pub(crate) fn failed_check(error: &CliError) -> Check {
    let detail = error
        .error
        .chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    Check::failed(
        "configuration",
        detail,
        error
            .hint
            .clone()
            .unwrap_or_else(|| "fix the file or variable named above".to_owned()),
    )
}
