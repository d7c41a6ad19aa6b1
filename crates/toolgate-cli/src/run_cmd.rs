//! `toolgate run TASK`: the agent loop in the terminal.
//!
//! stdout carries the model's streamed text (or, with `--json`, one JSON
//! event per line) and the report; stderr carries one line per tool call,
//! notes and the final summary. Exit codes (DESIGN.md §11): 0 success,
//! 1 failed, 2 partial, 3 config error, 4 auth error, 5 timeout, 6 blocked
//! 130 interrupted.
//!
//! Everything but the printing and the terminal comes from the host
//! ([`toolgate_host::Host::prepare_run`]): the agent, the model, the
//! session in the store, the gate.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use toolgate_agent::{AgentEvent, CallDecision, Outcome, RunReport};
use toolgate_engine::{Approver, Decision, PlanVerdict};
use toolgate_host::{ErrorKind, HostError, LlmOverrides, RunControls, RunRequest};
use toolgate_policy::ConfirmationMode;

use crate::Setup;
use crate::approver::PromptApprover;
use crate::cli::{ApproverChoice, ReportFormat, RunArgs};
use crate::render::{CliError, Exit};

/// A host error as `run` reports it: configuration problems exit 3
/// (DESIGN.md §11), a missing key 4, no model server 3.
fn run_error(error: HostError) -> CliError {
    let kind = error.kind();
    let mut error = CliError::from(error);
    error.exit = match kind {
        ErrorKind::Auth => Exit::Auth,
        ErrorKind::Runtime => Exit::Failure,
        _ => Exit::Config,
    };
    error
}

/// A `⠋ thinking… step 3 · 2.1s` spinner on a terminal's stderr while the
/// model has not answered yet (indicatif); cleared before anything else is
/// printed.
#[derive(Clone)]
struct Progress {
    enabled: bool,
    bar: Arc<std::sync::Mutex<Option<ProgressBar>>>,
}

impl Progress {
    fn new(enabled: bool) -> Self {
        Self {
            enabled,
            bar: Arc::default(),
        }
    }

    fn show(&self, label: &str) {
        if !self.enabled {
            return;
        }
        let Ok(mut bar) = self.bar.lock() else { return };
        if let Some(old) = bar.take() {
            old.finish_and_clear();
        }
        let spinner = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} thinking… {msg} · {elapsed}")
        {
            spinner.set_style(style);
        }
        spinner.set_message(label.to_owned());
        spinner.enable_steady_tick(Duration::from_millis(100));
        *bar = Some(spinner);
    }

    fn hide(&self) {
        if let Ok(mut bar) = self.bar.lock()
            && let Some(old) = bar.take()
        {
            old.finish_and_clear();
        }
    }
}

/// Writes a JSON event or a report to stdout: exact but for secrets
/// ([`toolgate_core::redact`]).
fn write_data(text: &str) {
    write_out(&toolgate_core::redact(text));
}

/// Writes to stdout exactly.
fn write_out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Writes text a model or a tool wrote to stdout, neutralised
/// ([`toolgate_core::neutralize`]): the model's streamed answer must not
/// paint the terminal (conceal the prompt, write the clipboard, draw fake
/// lines).
fn write_text(text: &str) {
    write_out(&crate::render::clean(text));
}

/// Writes a line for people to stderr, neutralised.
fn write_err(text: &str) {
    let _ = writeln!(io::stderr().lock(), "{}", crate::render::clean(text));
}

/// `✓ NAME [decision] 12 ms` (and the person's time when they were asked),
/// the name neutralised to one line: a made-up tool name must not draw a
/// line of its own.
fn call_line(call: &toolgate_agent::ToolCallRecord, color: bool) -> String {
    use crate::render::{BAD, DIM, GOOD, paint};
    let (mark, style) = if call.success {
        ("✓", GOOD)
    } else {
        ("✗", BAD)
    };
    let ran = call.duration_ms.saturating_sub(call.waited_ms);
    let mut line = format!(
        "  {} {} [{}] {ran} ms",
        paint(style, mark, color),
        toolgate_core::neutralize_line(&call.name),
        call.decision
    );
    if call.approval.is_some() {
        let waited = format!(
            "(you took {:.1} s to answer)",
            millis_as_secs(call.waited_ms)
        );
        line.push(' ');
        line.push_str(&paint(DIM, &waited, color));
    }
    line
}

#[allow(
    clippy::cast_precision_loss,
    reason = "a person's answer time, shown to a tenth of a second"
)]
fn millis_as_secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// `toolgate run`, and `sessions resume`.
pub(crate) async fn run(setup: &Setup, args: RunArgs) -> Result<Exit, CliError> {
    let mut request = RunRequest::new(args.task.clone());
    request.agent = Some(args.agent.clone());
    request.session.clone_from(&args.session);
    request.llm = LlmOverrides::new(args.model.clone(), args.base_url.clone());
    request.max_steps = args.max_steps;
    request.timeout = args.timeout.map(Duration::from_secs);
    request.budget_usd = args.budget;
    let ui = match args.approver {
        ApproverChoice::Ui => {
            let server = crate::ui_cmd::approval_page(setup, args.ui_addr).await?;
            let approver = server.approver(Some(args.agent.clone()));
            Some((server, approver))
        }
        ApproverChoice::Default => None,
    };
    let json = setup.json;
    let color = crate::render::stderr_color();
    let progress = Progress::new(!json && io::stderr().is_terminal());
    let interactive = match &ui {
        Some((_, approver)) => Some(Arc::clone(approver) as Arc<dyn Approver>),
        None => PromptApprover::terminal().map(|p| {
            let spinner = progress.clone();
            Arc::new(p.before_asking(Arc::new(move || spinner.hide()))) as Arc<dyn Approver>
        }),
    };
    let prepared = match setup.host.prepare_run(request, interactive).await {
        Ok(prepared) => prepared,
        Err(error) => {
            if let Some((server, _)) = ui {
                server.shutdown(Duration::ZERO).await;
            }
            return Err(run_error(error));
        }
    };
    for status in &prepared.gate().mcp_statuses {
        if let toolgate_mcp::ServerState::Failed(reason) = &status.state {
            crate::render::note(&format!(
                "warning: MCP server `{}` skipped: {reason}",
                status.name
            ));
        }
    }
    let session_id = prepared.session_id().to_owned();
    let never_asked = prepared.gate().engine.mode() == ConfirmationMode::DontAsk;
    let hub = ui.as_ref().map(|(server, approver)| {
        approver.bind(toolgate_ui::Binding {
            session: Some(session_id.clone()),
        });
        server.hub().clone()
    });
    if setup.json {
        write_data(&format!("{}\n", prepared.start_event()));
    }
    if let Some(hub) = &hub {
        hub.emit(&prepared.start_event());
    }

    // Ctrl-C: the first stops gracefully (summary), the second at once.
    // Either way the run returns here, so the session is recorded and the
    // MCP servers are shut down before toolgate exits.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (abort_tx, abort_rx) = tokio::sync::watch::channel(false);
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            write_err("\ninterrupted: stopping after a summary (Ctrl-C again to stop at once)");
            let _ = stop_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                write_err("stopping now");
                let _ = abort_tx.send(true);
            }
        }
    });

    let shown = progress.clone();
    let to_page = hub.map(|hub| hub.event_sink(&session_id));
    let events = Arc::new(move |e: &AgentEvent| {
        if let Some(to_page) = &to_page {
            to_page(e);
        }
        if json {
            if let Ok(line) = serde_json::to_string(e) {
                write_data(&format!("{line}\n"));
            }
            return;
        }
        // Waiting for the model from the start of a step (and of the
        // summary call) to its first output.
        match e {
            AgentEvent::Step { step, .. } => shown.show(&format!("step {step}")),
            AgentEvent::Summary { .. } => shown.show("summary"),
            _ => shown.hide(),
        }
        match e {
            AgentEvent::Text { delta } => write_text(delta),
            AgentEvent::ToolCall(c) => {
                // Painted by us after neutralising its parts.
                let line = call_line(c, color);
                let _ = writeln!(io::stderr().lock(), "\n{line}");
            }
            AgentEvent::ContextCompress { removed_chars } => {
                write_err(&format!(
                    "  (context compressed: {removed_chars} characters elided)"
                ));
            }
            AgentEvent::GateFailed { name } => write_err(&format!("  quality gate failed: {name}")),
            AgentEvent::ReplyCut { reason, .. } => {
                write_err(&format!("\n  reply cut off: {reason}"));
            }
            AgentEvent::TaskCheck { reason, .. } => {
                write_err(&format!("\n  not done yet: {reason}"));
            }
            AgentEvent::BudgetWarning {
                spent_usd,
                budget_usd,
            } => write_err(&format!(
                "  budget warning: ${spent_usd:.4} of ${budget_usd:.4} spent"
            )),
            AgentEvent::Summary { reason } => {
                write_err(&format!("\n  stopping: {reason}; asking for a summary"));
            }
            AgentEvent::Warning { message } => write_err(&format!("warning: {message}")),
            AgentEvent::Plan(plan) => write_err(&match (plan.answer, plan.mode) {
                (PlanVerdict::Approved, Some(mode)) => {
                    format!("  plan approved: the run goes on in mode {mode}")
                }
                (PlanVerdict::KeepPlanning, _) => {
                    "  plan not approved yet: plan mode stays on".to_owned()
                }
                _ => "  nobody could approve the plan: plan mode stays on".to_owned(),
            }),
            AgentEvent::ProviderSwitch(s) => {
                write_err(&format!("\n  model: {} → {} ({})", s.from, s.to, s.reason));
            }
            AgentEvent::Routed(r) => write_err(&format!(
                "  routing: {} — {} tools ({})",
                if r.categories.is_empty() {
                    "no category".to_owned()
                } else {
                    r.categories.join(", ")
                },
                r.tools.len(),
                r.reason
            )),
            _ => {}
        }
    });
    if progress.enabled {
        write_err(&format!("session {session_id}"));
    }
    let mut controls = RunControls::default();
    controls.events = Some(events);
    controls.stop = Some(stop_rx);
    controls.abort = Some(abort_rx);
    let report = prepared.run(controls).await;
    progress.hide();
    signals.abort();
    setup.host.flush().await;
    if let Some((server, _)) = ui {
        server
            .hub()
            .emit(&toolgate_host::done_event(&session_id, &report));
        server.shutdown(Duration::ZERO).await;
    }
    finish(setup, &args, &report, &session_id, never_asked)
}

/// The `toolgate rules add` lines that would allow the calls `dont-ask`
/// refused in `report`, from their declared effects (the same lines each
/// refusal told the model).
fn dont_ask_hint(report: &RunReport) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut uncovered = 0;
    for call in report
        .tool_calls
        .iter()
        .filter(|c| c.decision == CallDecision::Gate(Decision::NoApprover))
    {
        match toolgate_policy::allow_rule_for(&call.name, &call.effects) {
            Some(rule) => {
                let line = format!("`{}`", toolgate_policy::rules_add_line(&rule));
                if !lines.contains(&line) {
                    lines.push(line);
                }
            }
            None => uncovered += 1,
        }
    }
    let mut parts = Vec::new();
    if !lines.is_empty() {
        parts.push(format!("to allow such calls: {}", lines.join("; ")));
    }
    if uncovered > 0 {
        parts.push(format!(
            "{uncovered} call{} no single rule can allow (several files, or a command line \
             with shell syntax or variables)",
            if uncovered == 1 { "" } else { "s" }
        ));
    }
    parts.push("or run in another mode (`--mode`)".to_owned());
    parts.join("; ")
}

fn finish(
    setup: &Setup,
    args: &RunArgs,
    report: &RunReport,
    session_id: &str,
    never_asked: bool,
) -> Result<Exit, CliError> {
    let (tin, tout) = report.tokens();
    if setup.json {
        write_data(&format!(
            "{}\n",
            toolgate_host::done_event(session_id, report)
        ));
    } else {
        let cost = report
            .cost_usd()
            .map(|c| format!(" · ${c:.4}"))
            .unwrap_or_default();
        let files = if report.files_changed.is_empty() {
            "none".to_owned()
        } else {
            report.files_changed.join(", ")
        };
        let waited = match report.waited_ms() {
            0 => String::new(),
            ms => format!(" · {:.1} s waiting for you", millis_as_secs(ms)),
        };
        // What the server's prompt cache saved, when it says.
        let processed = report
            .processed_tokens()
            .map(|p| format!(" ({p} processed)"))
            .unwrap_or_default();
        write_out("\n");
        write_err(&format!(
            "\n{} · {} steps · {} tool calls · {tin} in{processed} / {tout} out tokens{cost}{waited} · files changed: {files} · session {session_id}",
            report.outcome.as_str(),
            report.steps,
            report.tool_calls.len()
        ));
    }
    if let Some(format) = args.report {
        let text = match format {
            ReportFormat::Json => format!("{:#}\n", report.to_json()),
            ReportFormat::Markdown => report.to_markdown(),
        };
        let text = toolgate_core::redact(&text);
        match &args.report_file {
            Some(p) => std::fs::write(p, text.as_bytes()).map_err(|e| {
                CliError::new(
                    Exit::Failure,
                    anyhow!(e).context(format!("cannot write the report {}", p.display())),
                )
            })?,
            None if io::stdout().is_terminal() => write_text(&text),
            None => write_out(&text),
        }
    }
    let exit = match report.outcome {
        Outcome::Completed => Exit::Success,
        Outcome::MaxSteps
        | Outcome::Interrupted
        | Outcome::Budget
        | Outcome::Repeating
        | Outcome::Unverified => Exit::Partial,
        Outcome::Timeout => Exit::Timeout,
        Outcome::Aborted => Exit::Aborted,
        Outcome::AuthFailed => Exit::Auth,
        Outcome::Failed => Exit::Failure,
        Outcome::Blocked => Exit::Blocked,
    };
    if report.outcome == Outcome::Blocked && never_asked {
        let n = report.blocked_calls();
        return Err(CliError::new(
            exit,
            anyhow!(
                "{n} tool call{} refused under --mode dont-ask, which never asks: \
                 the task was not done, whatever the model said",
                if n == 1 { " was" } else { "s were" },
            ),
        )
        .with_hint(dont_ask_hint(report)));
    }
    if report.outcome == Outcome::Blocked {
        let n = report.blocked_calls();
        return Err(CliError::new(
            exit,
            anyhow!(
                "{n} tool call{} refused because nobody could be asked to approve {}: \
                 the task was not done, whatever the model said",
                if n == 1 { " was" } else { "s were" },
                if n == 1 { "it" } else { "them" }
            ),
        )
        .with_hint(
            "answer approvals in a browser with `--approver ui`; or allow such calls with \
             `--mode yolo` (the sandbox and guardrails still apply) or a rule in \
             `confirmation.rules` (`toolgate rules add`); or see what would run with `--dry-run`",
        ));
    }
    if let Some(e) = &report.error {
        let mut err = CliError::new(exit, anyhow!(e.clone()));
        if exit == Exit::Auth {
            err = err.with_hint("check the key in the variable named by `llm.api_key_env`");
        }
        return Err(err);
    }
    Ok(exit)
}
