//! `toolgate run TASK`: the agent loop in the terminal.
//!
//! stdout carries the model's streamed text (or, with `--json`, one JSON
//! event per line) and the report; stderr carries one line per tool call,
//! notes and the final summary. Exit codes (DESIGN.md §11): 0 success,
//! 1 failed, 2 partial, 3 config error, 4 auth error, 5 timeout,
//! 130 interrupted.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use serde_json::json;
use toolgate_agent::{
    AgentDef, AgentEvent, AgentRunner, AnthropicClient, ApiKey, GuardrailGates, HttpSettings,
    LlmClient, Message, OpenAiClient, Outcome, RunReport, SessionStore,
};
use toolgate_engine::Approver;
use toolgate_host::{Gate, LlmProvider};

use crate::Setup;
use crate::approver::PromptApprover;
use crate::cli::{ReportFormat, RunArgs};
use crate::render::{CliError, Exit};

fn config_error(msg: impl Into<String>, hint: &str) -> CliError {
    CliError::new(Exit::Config, anyhow!(msg.into())).with_hint(hint)
}

/// The session database path.
pub(crate) fn sessions_db(setup: &Setup) -> PathBuf {
    let workspace = setup.host.workspace();
    match &setup.host.config().llm.sessions_db {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => workspace.join(p),
        None => workspace.join(".toolgate").join("sessions.db"),
    }
}

pub(crate) fn open_store(setup: &Setup) -> Result<SessionStore, CliError> {
    let path = sessions_db(setup);
    SessionStore::open(&path).map_err(|e| {
        CliError::new(
            Exit::Failure,
            anyhow!(e).context(format!(
                "cannot open the session database {}",
                path.display()
            )),
        )
        .with_hint("set `llm.sessions_db` to a writable path")
    })
}

fn client(setup: &Setup, args: &RunArgs) -> Result<Arc<dyn LlmClient>, CliError> {
    let llm = &setup.host.config().llm;
    let model = args
        .model
        .clone()
        .or_else(|| llm.model.clone())
        .ok_or_else(|| {
            config_error(
                "no model is configured",
                "set `llm.model` in toolgate.yaml, or pass --model",
            )
        })?;
    let base_url = args
        .base_url
        .clone()
        .or_else(|| llm.base_url.clone())
        .unwrap_or_else(|| match llm.provider {
            LlmProvider::Openai => "https://api.openai.com/v1".to_owned(),
            LlmProvider::Anthropic => "https://api.anthropic.com/v1".to_owned(),
        });
    let key = match &llm.api_key_env {
        None => None,
        Some(var) => Some(std::env::var(var).map_err(|_| {
            CliError::new(
                Exit::Auth,
                anyhow!("the environment variable {var} (llm.api_key_env) is not set"),
            )
            .with_hint(format!("export {var}=… with your API key"))
        })?),
    };
    let mut settings = HttpSettings::new(base_url, model, ApiKey::new(key));
    settings.request_timeout = Duration::from_secs(llm.timeout.max(1));
    settings.max_retries = llm.max_retries;
    settings.stream = llm.stream;
    settings.max_tokens = llm.max_tokens;
    Ok(match llm.provider {
        LlmProvider::Openai => Arc::new(OpenAiClient::new(settings)),
        LlmProvider::Anthropic => Arc::new(AnthropicClient::new(settings)),
    })
}

/// A `⠋ thinking… step 3 · 2.1 s` line on a terminal's stderr while the
/// model has not answered yet; erased before anything else is printed.
#[derive(Clone)]
struct Spinner {
    state: Option<Arc<std::sync::Mutex<SpinnerState>>>,
}

struct SpinnerState {
    label: Option<(String, std::time::Instant)>,
    drawn: bool,
}

impl Spinner {
    /// A spinner that draws only when `enabled`.
    fn start(enabled: bool) -> Self {
        if !enabled {
            return Self { state: None };
        }
        let state = Arc::new(std::sync::Mutex::new(SpinnerState {
            label: None,
            drawn: false,
        }));
        let weak = Arc::downgrade(&state);
        tokio::spawn(async move {
            const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
            let mut frame = 0usize;
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tick.tick().await;
                let Some(state) = weak.upgrade() else { return };
                let Ok(mut state) = state.lock() else { return };
                if let Some((label, since)) = &state.label {
                    let line = format!(
                        "\r\x1b[K{} thinking… {label} · {:.1} s",
                        FRAMES[frame % FRAMES.len()],
                        since.elapsed().as_secs_f64()
                    );
                    let mut err = io::stderr().lock();
                    let _ = err.write_all(line.as_bytes());
                    let _ = err.flush();
                    state.drawn = true;
                    frame += 1;
                }
            }
        });
        Self { state: Some(state) }
    }

    fn enabled(&self) -> bool {
        self.state.is_some()
    }

    fn show(&self, label: String) {
        if let Some(state) = &self.state
            && let Ok(mut state) = state.lock()
        {
            state.label = Some((label, std::time::Instant::now()));
        }
    }

    fn hide(&self) {
        if let Some(state) = &self.state
            && let Ok(mut state) = state.lock()
        {
            state.label = None;
            if std::mem::take(&mut state.drawn) {
                let mut err = io::stderr().lock();
                let _ = err.write_all(b"\r\x1b[K");
                let _ = err.flush();
            }
        }
    }
}

fn write_out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

fn write_err(text: &str) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// `toolgate run`.
pub(crate) async fn run(setup: &Setup, args: RunArgs) -> Result<Exit, CliError> {
    run_task(setup, args).await
}

pub(crate) async fn run_task(setup: &Setup, args: RunArgs) -> Result<Exit, CliError> {
    let to_config = |mut e: CliError| {
        e.exit = Exit::Config;
        e
    };
    let agent = setup
        .host
        .agent(&args.agent)
        .map_err(|e| to_config(e.into()))?;
    let mode = setup
        .host
        .mode_for(Some(&agent))
        .map_err(|e| to_config(e.into()))?;
    let llm = client(setup, &args)?;
    let costs = costs(setup, &args)?;
    let store = open_store(setup)?;
    let (session_id, history) = match &args.session {
        Some(id) => {
            let history = store.messages(id).map_err(|e| {
                CliError::new(Exit::Failure, anyhow!(e))
                    .with_hint("`toolgate sessions list` shows the saved sessions")
            })?;
            (id.clone(), history)
        }
        None => (SessionStore::new_id(), Vec::new()),
    };
    let interactive = PromptApprover::terminal().map(|p| Arc::new(p) as Arc<dyn Approver>);
    // The gate's guardrails and hooks also serve the loop: lifecycle events
    // (with this session's id) and the quality gates.
    let gate = setup
        .host
        .gate()
        .mode(mode)
        .session_id(session_id.clone())
        .interactive(interactive)
        .build()
        .await
        .map_err(|e| to_config(e.into()))?;
    for status in &gate.mcp_statuses {
        if let toolgate_mcp::ServerState::Failed(reason) = &status.state {
            crate::render::note(&format!(
                "warning: MCP server `{}` skipped: {reason}",
                status.name
            ));
        }
    }
    let agent = agent.with_extra_tools(gate.mcp.tool_names());
    let run = Prepared {
        llm,
        costs,
        agent,
        store,
        session_id,
        history,
    };
    let result = run_agent(setup, &args, run, &gate).await;
    gate.shutdown().await;
    result
}

/// Token prices and the cost budget of a run.
struct Costs {
    /// USD per million input and output tokens.
    prices: Option<(f64, f64)>,
    budget_usd: Option<f64>,
}

/// The prices from `llm:`, and the budget (`--budget` over
/// `llm.budget_usd`), which needs them to be enforced.
fn costs(setup: &Setup, args: &RunArgs) -> Result<Costs, CliError> {
    let llm_cfg = &setup.host.config().llm;
    let prices = (llm_cfg.input_price_per_mtok.is_some()
        || llm_cfg.output_price_per_mtok.is_some())
    .then(|| {
        (
            llm_cfg.input_price_per_mtok.unwrap_or(0.0),
            llm_cfg.output_price_per_mtok.unwrap_or(0.0),
        )
    });
    let budget_usd = args.budget.or(llm_cfg.budget_usd);
    if let Some(budget) = budget_usd
        && (prices.is_none() || !budget.is_finite() || budget <= 0.0)
    {
        return Err(config_error(
            format!("a cost budget of {budget} USD cannot be enforced"),
            "the budget must be a positive number, and `llm.input_price_per_mtok` / \
             `llm.output_price_per_mtok` must be set so the cost can be counted",
        ));
    }
    Ok(Costs { prices, budget_usd })
}

/// What `run_task` resolved before the MCP servers started.
struct Prepared {
    llm: Arc<dyn LlmClient>,
    costs: Costs,
    agent: AgentDef,
    store: SessionStore,
    session_id: String,
    history: Vec<Message>,
}

async fn run_agent(
    setup: &Setup,
    args: &RunArgs,
    run: Prepared,
    gate: &Gate,
) -> Result<Exit, CliError> {
    let Prepared {
        llm,
        costs,
        agent,
        mut store,
        session_id,
        history,
    } = run;

    // Ctrl-C: the first stops gracefully (summary), the second aborts.
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            write_err("\ninterrupted: stopping after a summary (Ctrl-C again to abort)");
            let _ = cancel_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                write_err("aborted");
                std::process::exit(130);
            }
        }
    });

    let json = setup.json;
    let spinner = Spinner::start(!json && io::stderr().is_terminal());
    let events_spinner = spinner.clone();
    let events = Arc::new(move |e: &AgentEvent| {
        if json {
            if let Ok(line) = serde_json::to_string(e) {
                write_out(&format!("{line}\n"));
            }
            return;
        }
        // Waiting for the model from the start of a step (and of the
        // summary call) to its first output.
        match e {
            AgentEvent::Step { step } => events_spinner.show(format!("step {step}")),
            AgentEvent::Summary { .. } => events_spinner.show("summary".to_owned()),
            _ => events_spinner.hide(),
        }
        match e {
            AgentEvent::Text { delta } => write_out(delta),
            AgentEvent::ToolCall(c) => {
                let mark = if c.success { "✓" } else { "✗" };
                write_err(&format!(
                    "\n  {mark} {} [{}] {} ms",
                    c.name, c.decision, c.duration_ms
                ));
            }
            AgentEvent::ContextCompress { removed_chars } => {
                write_err(&format!(
                    "  (context compressed: {removed_chars} characters elided)"
                ));
            }
            AgentEvent::GateFailed { name } => write_err(&format!("  quality gate failed: {name}")),
            AgentEvent::BudgetWarning {
                spent_usd,
                budget_usd,
            } => write_err(&format!(
                "  budget warning: ${spent_usd:.4} of ${budget_usd:.4} spent"
            )),
            AgentEvent::Summary { reason } => {
                write_err(&format!("\n  stopping: {reason}; asking for a summary"));
            }
            _ => {}
        }
    });
    let gates = GuardrailGates::new(Arc::clone(&gate.guardrails), setup.host.workspace());
    let mut builder = AgentRunner::builder(llm, Arc::clone(&gate.engine), agent)
        .hooks(Arc::clone(&gate.hooks) as Arc<dyn toolgate_agent::LifecycleHooks>)
        .gates(Arc::new(gates))
        .events(events)
        .cancel(cancel_rx);
    if let Some(n) = args.max_steps {
        builder = builder.max_steps(n);
    }
    if let Some(t) = args.timeout {
        builder = builder.timeout(Duration::from_secs(t));
    }
    if let Some((input, output)) = costs.prices {
        builder = builder.prices(input, output);
    }
    if let Some(budget) = costs.budget_usd {
        builder = builder.budget_usd(budget);
    }
    if spinner.enabled() {
        write_err(&format!("session {session_id}"));
    }
    let report = builder.build().run(&args.task, history).await;
    spinner.hide();
    if let Err(e) = store.save_run(&session_id, &report) {
        write_err(&format!("warning: the session was not saved: {e}"));
    }
    finish(setup, args, &report, &session_id)
}

fn finish(
    setup: &Setup,
    args: &RunArgs,
    report: &RunReport,
    session_id: &str,
) -> Result<Exit, CliError> {
    let (tin, tout) = report.tokens();
    if setup.json {
        let mut done = report.to_json();
        done["type"] = json!("done");
        done["session"] = json!(session_id);
        write_out(&format!("{done}\n"));
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
        write_out("\n");
        write_err(&format!(
            "\n{:?} · {} steps · {} tool calls · {tin} in / {tout} out tokens{cost} · files changed: {files} · session {session_id}",
            report.outcome,
            report.steps,
            report.tool_calls.len()
        ));
    }
    if let Some(format) = args.report {
        let text = match format {
            ReportFormat::Json => format!("{:#}\n", report.to_json()),
            ReportFormat::Markdown => report.to_markdown(),
        };
        match &args.report_file {
            Some(p) => std::fs::write(p, text).map_err(|e| {
                CliError::new(
                    Exit::Failure,
                    anyhow!(e).context(format!("cannot write the report {}", p.display())),
                )
            })?,
            None => write_out(&text),
        }
    }
    let exit = match report.outcome {
        Outcome::Completed => Exit::Success,
        Outcome::MaxSteps | Outcome::Interrupted | Outcome::Budget => Exit::Partial,
        Outcome::Timeout => Exit::Timeout,
        Outcome::Aborted => Exit::Aborted,
        Outcome::AuthFailed => Exit::Auth,
        Outcome::Failed => Exit::Failure,
    };
    if let Some(e) = &report.error {
        let mut err = CliError::new(exit, anyhow!(e.clone()));
        if exit == Exit::Auth {
            err = err.with_hint("check the key in the variable named by `llm.api_key_env`");
        }
        return Err(err);
    }
    Ok(exit)
}
