//! The host's errors, each with what the user can do about it.

use std::path::PathBuf;

use crate::config::LoadError;

/// What kind of problem an error is, for front ends that map it to an exit
/// code or a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configuration (files, variables, flags) or the workspace is
    /// wrong: nothing ran.
    Config,
    /// The model server refused or lacks the credentials.
    Auth,
    /// No model server could be reached or chosen.
    ModelUnavailable,
    /// Something failed at run time (a database, a file).
    Runtime,
}

/// Why the host could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The workspace directory cannot be used.
    #[error("the workspace {} cannot be used", path.display())]
    Workspace {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The workspace is not a directory.
    #[error("the workspace {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The configuration could not be loaded.
    #[error("invalid configuration")]
    Load(#[source] LoadError),
    /// The trust store could not be read or written.
    #[error(transparent)]
    Trust(crate::config::trust::TrustError),
    /// `commands.blocked_patterns` or `guardrails.blocked_commands` holds a
    /// bad regex.
    #[error("invalid configuration")]
    BlockedPatterns(#[source] toolgate_policy::CommandPolicyError),
    /// A sensitive or protected pattern is not a glob.
    #[error("the workspace cannot be used")]
    Patterns(#[source] toolgate_core::WorkspaceError),
    /// The sandbox cannot be built.
    #[error("the sandbox cannot be set up")]
    Sandbox(#[source] toolgate_sandbox::SandboxError),
    /// `commands.limits` holds a limit too small to run anything.
    #[error("invalid configuration: `commands.limits`")]
    Limits(#[source] toolgate_sandbox::LimitsError),
    /// `confirmation.rules` holds a malformed or too broad rule.
    #[error("invalid configuration")]
    Rules(#[source] toolgate_policy::RuleError),
    /// The guardrails section is invalid.
    #[error("invalid configuration")]
    Guardrails(#[source] toolgate_engine::GuardrailsError),
    /// The hooks section is invalid.
    #[error("invalid configuration")]
    Hooks(#[source] toolgate_engine::HookConfigError),
    /// The audit file cannot be opened.
    #[error("could not open the audit file {}", path.display())]
    Audit {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A tool group's configuration is invalid.
    #[error("`tools.{group}` is invalid: {reason}")]
    ToolGroup {
        /// The group.
        group: &'static str,
        /// Why.
        reason: String,
    },
    /// A tool could not be registered.
    #[error("a tool could not be registered")]
    Registry(#[source] toolgate_core::Error),
    /// No agent has this name.
    #[error("unknown agent `{name}`")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are.
        known: Vec<String>,
    },
    /// Neither `XDG_DATA_HOME` nor `HOME` says where the store goes.
    #[error("there is no user data directory to keep sessions and the audit in")]
    NoDataDir,
    /// The store cannot be opened or used.
    #[error("{}", store_message(path, source))]
    Store {
        /// The database file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: toolgate_store::StoreError,
    },
    /// No model server is configured and none of the usual local ones
    /// answers.
    #[error("{}", no_model_text(model.as_deref(), tried))]
    NoModel {
        /// The model, when one is configured (without a server).
        model: Option<String>,
        /// The local servers tried and what happened, one clause each.
        tried: Vec<String>,
    },
    /// The server serves several models and none was named.
    #[error("{base_url} serves several models ({}) and none is configured", served.join(", "))]
    ChooseModel {
        /// The server.
        base_url: String,
        /// What it serves.
        served: Vec<String>,
    },
    /// The server does not list its models and none was named.
    #[error("no model is configured, and {base_url} does not say which models it serves")]
    UnnamedModel {
        /// The server.
        base_url: String,
    },
    /// The model server's keys are in a workspace file that is not trusted,
    /// so they were ignored and no server was found.
    #[error(
        "the model server is set in {} ({}), which is not trusted, so it was ignored and no model server was found",
        file.display(),
        keys.join(", ")
    )]
    ModelUntrusted {
        /// The workspace file.
        file: PathBuf,
        /// Its ignored `llm.*` keys.
        keys: Vec<String>,
    },
    /// The model server cannot be reached.
    #[error("the model server at {base_url} cannot be reached: {reason}")]
    Unreachable {
        /// The server.
        base_url: String,
        /// What happened.
        reason: String,
    },
    /// The model server refused the credentials.
    #[error("{reason}")]
    AuthRefused {
        /// What the server said.
        reason: String,
    },
    /// The variable `llm.api_key_env` names is not set, or empty.
    #[error("the environment variable {var} (llm.api_key_env) is {}", if *empty { "empty" } else { "not set" })]
    KeyMissing {
        /// The variable.
        var: String,
        /// Set, but to nothing.
        empty: bool,
    },
    /// The model's context window cannot hold the prompt and the tools.
    #[error("{0}")]
    ContextTooSmall(String),
    /// `llm.fallback` cannot be used as written.
    #[error("llm.fallback: {0}")]
    Fallback(String),
    /// `routing` cannot be used as written.
    #[error("routing")]
    Routing(#[source] toolgate_agent::RoutingError),
    /// A cost budget that cannot be enforced.
    #[error("a cost budget of {0} USD cannot be enforced")]
    Budget(f64),
    /// An agent's `mode` is not a confirmation mode.
    #[error("agent `{agent}` has an invalid mode: {reason}")]
    AgentMode {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// An agent's `delegate_to` cannot be used.
    #[error("agents.{agent}.delegate_to: {reason}")]
    Delegation {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// A rewind (or its undo) cannot be made as asked.
    #[error("{0}")]
    Rewind(String),
    /// A session is running in another process (a rewind is refused), or
    /// is being rewound (a run is refused).
    #[error(
        "session `{session}` {} {}",
        if *rewinding { "is being rewound by" } else { "is running in" },
        crate::claim::describe_holders(pids)
    )]
    SessionBusy {
        /// The session.
        session: String,
        /// The processes holding it, when known.
        pids: Vec<u32>,
        /// Whether a rewind holds it (else a run).
        rewinding: bool,
    },
    /// A file of the workspace could not be read or put back during a
    /// rewind.
    #[error("{what}")]
    RewindIo {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn no_model_text(model: Option<&str>, tried: &[String]) -> String {
    let mut text = match model {
        None => "no model is configured".to_owned(),
        Some(model) => format!("the model `{model}` is configured without a server (llm.base_url)"),
    };
    if !tried.is_empty() {
        text.push_str(" and no local model server answers: ");
        text.push_str(&tried.join("; "));
    }
    text
}

/// The one command that gets a model, for the errors that say there is none.
pub(crate) const GET_A_MODEL: &str = "run `toolgate init` to choose a provider (Ollama, llama.cpp, OpenAI, \
Anthropic, OpenRouter or any OpenAI-compatible URL)";

/// What to do when nothing answers at `base_url`: start the server that
/// usually listens there, or choose another.
fn start_the_server(base_url: &str) -> String {
    let local = |port: &str| {
        ["127.0.0.1", "localhost"]
            .iter()
            .any(|h| base_url.starts_with(&format!("http://{h}:{port}")))
    };
    if local("11434") {
        "start Ollama: `ollama serve`".to_owned()
    } else if local("8080") {
        "start llama.cpp: `llama-server --jinja -m MODEL.gguf`".to_owned()
    } else {
        format!("start the server at {base_url}, or choose another: `toolgate init --force`")
    }
}

/// `toolgate trust` for the workspace file `file`.
fn trust_command(file: &std::path::Path) -> String {
    match file.parent() {
        Some(dir) if file.file_name().is_some_and(|n| n == "toolgate.yaml") => {
            format!("`toolgate trust {}`", dir.display())
        }
        _ => format!("`toolgate trust --config {}`", file.display()),
    }
}

impl From<LoadError> for HostError {
    fn from(error: LoadError) -> Self {
        match error {
            LoadError::Trust(error) => Self::Trust(error),
            other => Self::Load(other),
        }
    }
}

impl HostError {
    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Workspace { .. } => "pass an existing directory with --workspace".to_owned(),
            Self::NotADirectory(_) => "pass a directory with --workspace".to_owned(),
            Self::Load(error) => return error.hint(),
            Self::Trust(error) => error.hint(),
            Self::BlockedPatterns(_) => "fix `commands.blocked_patterns` and `guardrails.blocked_commands`: each entry is a regular expression".to_owned(),
            Self::Patterns(_) => "fix `guardrails.sensitive_files` and `guardrails.protected_files`: each entry is a glob".to_owned(),
            Self::Sandbox(_) => "check `commands.readable`, `commands.writable` and the sensitive and protected patterns".to_owned(),
            Self::Limits(_) => "raise it in `commands.limits`, or remove the key to get the default".to_owned(),
            Self::Rules(_) => "fix `confirmation.rules` (`toolgate rules list` shows them, `toolgate rules remove N` drops one)".to_owned(),
            Self::Guardrails(_) => "fix the `guardrails` section; `toolgate config check` shows it".to_owned(),
            Self::Hooks(_) => "fix the `hooks` section; `toolgate config check` shows it".to_owned(),
            Self::Audit { .. } => "fix `audit.path` in the configuration, or remove it".to_owned(),
            Self::Registry(_) | Self::ContextTooSmall(_) => return None,
            Self::ToolGroup { group, .. } => format!("fix `tools.{group}` in the configuration"),
            Self::NoDataDir => "set HOME or XDG_DATA_HOME, or `store.path` in the configuration".to_owned(),
            Self::Store { path, source } => store_hint(path, source),
            Self::UnknownAgent { known, .. } => format!("the agents are {}", known.join(", ")),
            Self::AgentMode { .. } => {
                let modes = toolgate_policy::ConfirmationMode::ALL.map(toolgate_policy::ConfirmationMode::as_str);
                format!("use one of {}", modes.join(", "))
            }
            Self::Delegation { .. } => "list other configured agents (or `improve` with \
                `tools.persona.enabled`); an agent never lists itself"
                .to_owned(),
            Self::Rewind(_) => "list the steps and what each changed with `toolgate checkpoints SESSION`".to_owned(),
            Self::SessionBusy {
                rewinding: true, ..
            } => "run it again when the rewind has finished".to_owned(),
            Self::SessionBusy { pids, .. } => format!(
                "a rewind now would change files under the running agent: wait for the run to \
                 end, or stop it ({}), then rewind",
                match pids.as_slice() {
                    [] => "Ctrl-C in its terminal".to_owned(),
                    pids => format!(
                        "Ctrl-C in its terminal, or `kill {}`",
                        pids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
                    ),
                }
            ),
            Self::RewindIo { .. } => "fix the file's permissions, then run the rewind again; what was put back so far is listed by `toolgate checkpoints`".to_owned(),
            Self::NoModel { .. } => GET_A_MODEL.to_owned(),
            Self::ChooseModel { served, .. } => format!(
                "name one: `toolgate run --model {} …` (or set `llm.model`)",
                served.first().map_or("NAME", String::as_str)
            ),
            Self::UnnamedModel { .. } => {
                "name the model: `toolgate run --model NAME …` (or set `llm.model`)".to_owned()
            }
            Self::ModelUntrusted { file, .. } => {
                format!("review the file, then trust it: {}", trust_command(file))
            }
            Self::Unreachable { base_url, .. } => start_the_server(base_url),
            Self::KeyMissing { var, .. } => format!("put your API key in it: `read -rs {var} && export {var}`"),
            Self::AuthRefused { .. } => "check the key in the variable named by `llm.api_key_env`".to_owned(),
            Self::Fallback(_) => "fix `llm.fallback`: each entry needs a `model`, distinct names, \
                and its `api_key_env` variable set"
                .to_owned(),
            Self::Routing(_) => "fix the `routing` section: `max_tools` above the pinned tools, \
                category names in lower case"
                .to_owned(),
            Self::Budget(_) => "the budget must be a positive number, and `llm.input_price_per_mtok` / \
                `llm.output_price_per_mtok` must be set so the cost can be counted"
                .to_owned(),
        })
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Audit { .. }
            | Self::Registry(_)
            | Self::Store { .. }
            | Self::Rewind(_)
            | Self::SessionBusy { .. }
            | Self::RewindIo { .. } => ErrorKind::Runtime,
            Self::NoModel { .. }
            | Self::ChooseModel { .. }
            | Self::UnnamedModel { .. }
            | Self::ModelUntrusted { .. }
            | Self::Unreachable { .. } => ErrorKind::ModelUnavailable,
            Self::KeyMissing { .. } | Self::AuthRefused { .. } => ErrorKind::Auth,
            _ => ErrorKind::Config,
        }
    }
}

/// The directory of the store at `path`.
fn store_dir(path: &std::path::Path) -> Option<&std::path::Path> {
    path.parent().filter(|d| !d.as_os_str().is_empty())
}

/// What went wrong with the store, in the words of its [`Fault`]
/// (`toolgate_store::Fault`).
fn store_message(path: &std::path::Path, source: &toolgate_store::StoreError) -> String {
    use toolgate_store::Fault;
    let dir = store_dir(path);
    match source.fault(dir) {
        Fault::Damaged => format!("the store {} is damaged", path.display()),
        Fault::NoSpace => format!(
            "no space left on device at {} (the store {})",
            dir.unwrap_or(path).display(),
            path.display()
        ),
        Fault::Busy => format!("the store {} is locked by another toolgate", path.display()),
        _ => format!("the store {} cannot be used", path.display()),
    }
}

/// What to do about it: each [`Fault`](toolgate_store::Fault) has its own
/// way out; a damaged store is moved aside only when the person asks.
fn store_hint(path: &std::path::Path, source: &toolgate_store::StoreError) -> String {
    use toolgate_store::{Fault, StoreError};
    // A PostgreSQL store (`store.url`): what to do is said by the error.
    match source {
        StoreError::MigrationNeeded { .. } => {
            return "run `toolgate store migrate` once (any worker), then try again".to_owned();
        }
        StoreError::NewerDatabase { .. } => {
            return "use the newer toolgate, or point `store.url` at another database".to_owned();
        }
        StoreError::Connect { .. } => {
            return "check that the PostgreSQL server runs and accepts this user, `store.url`, \
                    and the password in the variable `store.password_env` names"
                .to_owned();
        }
        StoreError::Config(_) => {
            return "fix `store.url` and `store.password_env` in the configuration".to_owned();
        }
        _ => {}
    }
    let dir = store_dir(path);
    match source.fault(dir) {
        Fault::Damaged => format!(
            "`toolgate store recover` moves it to {} (nothing is deleted) so that the next \
             command starts a new, empty store; sessions, audit and notes in the old one are \
             then no longer shown",
            toolgate_store::aside_path(path).display()
        ),
        Fault::NoSpace => format!(
            "free some space on the disk of {}, or set `store.path` to a file on another disk",
            dir.unwrap_or(path).display()
        ),
        Fault::Busy => "wait for the other toolgate to finish, then try again".to_owned(),
        Fault::Newer => "use the newer toolgate, or set `store.path` to another file".to_owned(),
        _ => "set `store.path` to a writable file, or fix the permissions of its directory"
            .to_owned(),
    }
}
