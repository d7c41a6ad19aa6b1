//! `toolgate doctor`: is everything in place, and if not, what to do.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use toolgate_agent::{ProbeRequest, Provider, probe};
use toolgate_mcp::ServerState;
use toolgate_sandbox::{Level, NetworkMode};

use crate::assembly::host::Host;
use crate::assembly::llm::LlmOverrides;
use crate::config::LlmProvider;
use crate::config::trust::Trust;
use crate::error::{GET_A_MODEL, HostError};

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// In place.
    Ok,
    /// Works, but not as well as it could (a weaker sandbox, no structured
    /// tool calls).
    Warn,
    /// Broken: something will fail until it is fixed.
    Fail,
}

/// One line of `toolgate doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Check {
    /// What is checked (`sandbox`, `model server`, `mcp server time`).
    pub name: String,
    /// How it went.
    pub state: CheckState,
    /// What was found.
    pub detail: String,
    /// What to do, when it is not [`CheckState::Ok`].
    pub fix: Option<String>,
}

impl Check {
    /// A failed check (for a front end whose host did not even load).
    pub fn failed(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self::bad(CheckState::Fail, name, detail, fix)
    }

    fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            state: CheckState::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn bad(
        state: CheckState,
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            state,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// What `toolgate doctor` checks beyond the configuration.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DoctorOptions {
    /// `--model` and `--base-url`.
    pub llm: LlmOverrides,
    /// Whether to ask the model for one tiny tool call (it costs a model
    /// call). By default, no.
    pub check_tools: bool,
}

impl Host {
    /// Every check of `toolgate doctor`, in order: configuration layers,
    /// workspace trust, the modes of toolgate's own files, the kernel
    /// sandbox, the limits, the commands' network, the store, the model
    /// server (reachable, model present, context window, tool calling),
    /// each MCP server. Never fails: a problem is a [`CheckState::Fail`]
    /// line with its fix.
    ///
    /// The modes are looked at before the sandbox and the store are
    /// opened, since opening them tightens what it finds: the report says
    /// what was found.
    pub async fn doctor(&self, options: &DoctorOptions) -> Vec<Check> {
        let mut checks = vec![
            self.check_layers(),
            self.check_trust(),
            self.check_own_modes(),
        ];
        checks.extend(self.check_claude_import());
        checks.push(self.check_sandbox());
        checks.push(self.check_limits());
        checks.push(self.check_network());
        checks.push(self.check_store().await);
        checks.push(self.check_skills());
        checks.extend(self.check_model(options).await);
        checks.extend(self.check_mcp().await);
        checks
    }

    fn check_layers(&self) -> Check {
        let mut layers = String::from("defaults");
        for source in &self.loaded().sources {
            let _ = write!(layers, ", {source}");
        }
        Check::ok("configuration", format!("valid ({layers})"))
    }

    fn check_trust(&self) -> Check {
        let Some(project) = &self.loaded().project else {
            return Check::ok("workspace trust", "no workspace configuration file");
        };
        let file = project.file.display();
        match project.trust {
            Trust::NotNeeded => Check::ok(
                "workspace trust",
                format!("{file} needs no trust (it only tightens policy)"),
            ),
            Trust::Recorded => Check::ok("workspace trust", format!("{file} is trusted")),
            Trust::ThisRun => Check::ok(
                "workspace trust",
                format!("{file} is trusted for this run (--trust-workspace)"),
            ),
            Trust::Untrusted => Check::bad(
                CheckState::Warn,
                "workspace trust",
                format!(
                    "{file} is not trusted: {} ignored",
                    project.ignored().join(", ")
                ),
                "review it, then run `toolgate trust`",
            ),
        }
    }

    /// `confirmation.import: [claude]`: how many rules came from which
    /// files, and every entry that did not apply, with the reason.
    fn check_claude_import(&self) -> Option<Check> {
        let import = self.loaded().claude.as_ref()?;
        let name = "Claude Code settings";
        let mut detail = format!(
            "{} rule(s) imported from {} file(s)",
            import.rules.len(),
            import.files.iter().filter(|f| f.trust.applies()).count()
        );
        if let Some((mode, _)) = &import.mode {
            let how = if import.mode_applied {
                "applied"
            } else {
                "not applied: confirmation.mode or --mode is set"
            };
            let _ = write!(detail, "; defaultMode {} ({how})", mode.as_str());
        }
        if import.unmapped.is_empty() {
            return Some(Check::ok(name, detail));
        }
        for entry in &import.unmapped {
            let at = if entry.origin.key.is_empty() {
                entry.origin.file.display().to_string()
            } else {
                entry.origin.to_string()
            };
            let _ = write!(detail, "\n  not applied: {at}: {}", entry.reason);
        }
        let fix = if import.untrusted().next().is_some() {
            "review the workspace's .claude settings, then run `toolgate trust`; `toolgate rules list` shows every rule and its origin"
        } else {
            "`toolgate rules list` shows every rule and its origin; write what is not applied as confirmation.rules"
        };
        Some(Check::bad(CheckState::Warn, name, detail, fix))
    }

    /// toolgate's own files and directories readable by other accounts
    /// (an older toolgate, a umask of `022`, a copy), with the command that
    /// fixes them.
    fn check_own_modes(&self) -> Check {
        let loose = self.loose_own_state();
        if loose.is_empty() {
            return Check::ok(
                "own files",
                "toolgate's configuration and data are private to you",
            );
        }
        let shown: Vec<String> = loose
            .iter()
            .take(5)
            .map(|(path, mode)| format!("{} ({mode:o})", path.display()))
            .collect();
        let more = loose.len().saturating_sub(shown.len());
        let mut detail = format!(
            "{} of toolgate's own files and directories are readable by others: {}",
            loose.len(),
            shown.join(", ")
        );
        if more > 0 {
            let _ = write!(detail, " and {more} more");
        }
        let dirs: Vec<String> = loose
            .iter()
            .filter(|(path, _)| path.is_dir())
            .map(|(path, _)| crate::config::trust::quote(&path.display().to_string()))
            .collect();
        let files: Vec<String> = loose
            .iter()
            .filter(|(path, _)| !path.is_dir())
            .map(|(path, _)| crate::config::trust::quote(&path.display().to_string()))
            .collect();
        let mut fix = Vec::new();
        if !dirs.is_empty() {
            fix.push(format!("chmod go-rwx {}", dirs.join(" ")));
        }
        if !files.is_empty() {
            fix.push(format!("chmod 600 {}", files.join(" ")));
        }
        Check::bad(
            CheckState::Warn,
            "own files",
            detail,
            format!(
                "run `{}` (toolgate also does this when it next opens them)",
                fix.join(" && ")
            ),
        )
    }

    fn check_sandbox(&self) -> Check {
        let sandbox = match self.sandbox() {
            Ok(sandbox) => sandbox,
            Err(error) => {
                return Check::bad(
                    CheckState::Fail,
                    "sandbox",
                    toolgate_core::error_chain(&error),
                    error.hint().unwrap_or_default(),
                );
            }
        };
        let status = sandbox.status();
        let namespaces = status.namespaces();
        match status.level() {
            Level::Full if status.missing().is_empty() => {
                Check::ok("sandbox", format!("{status}; namespaces: {namespaces}"))
            }
            Level::Full => Check::bad(
                CheckState::Warn,
                "sandbox",
                format!("{status}; namespaces: {namespaces}"),
                "a newer kernel enforces more (Landlock ABI 4+ for network and signal rules)",
            ),
            // The namespaces line says which case applies here and the one
            // command that fixes it (toolgate_sandbox's userns rules).
            _ => Check::bad(
                CheckState::Warn,
                "sandbox",
                format!("{status}; every command asks before it runs"),
                format!(
                    "namespaces: {namespaces}; or set `commands.sandbox_required: true` to refuse \
                     commands instead of asking"
                ),
            ),
        }
    }

    /// How each of `commands.limits` is enforced here.
    fn check_limits(&self) -> Check {
        let sandbox = match self.sandbox() {
            Ok(sandbox) => sandbox,
            Err(error) => {
                return Check::bad(
                    CheckState::Fail,
                    "limits",
                    toolgate_core::error_chain(&error),
                    error.hint().unwrap_or_default(),
                );
            }
        };
        let status = sandbox.status();
        if status
            .limits()
            .iter()
            .all(toolgate_sandbox::LimitStatus::enforced)
        {
            return Check::ok("limits", status.limits_line());
        }
        Check::bad(
            CheckState::Warn,
            "limits",
            status.limits_line(),
            "processes and memory are limited per command by a cgroup: run toolgate as root, or \
             in a cgroup delegated to you (`systemd-run --user --scope -p Delegate=yes toolgate …`); \
             the /tmp and /dev/shm caps need the full sandbox",
        )
    }

    /// Which network mode commands are in (`commands.network`), and whether
    /// a domain policy is in force: its namespace made, its proxy started.
    fn check_network(&self) -> Check {
        let Ok(sandbox) = self.sandbox() else {
            return Check::bad(
                CheckState::Fail,
                "network",
                "unknown: the sandbox could not be built",
                "see the sandbox line",
            );
        };
        let status = sandbox.network_status();
        let setting = self.config().commands.network.describe();
        match (status.mode(), status.problem()) {
            (_, Some(_)) => Check::bad(
                CheckState::Warn,
                "network",
                format!("commands.network is {setting}; {status}"),
                "the domain policy needs the full sandbox (user and network namespaces); see \
                 the sandbox line",
            ),
            (NetworkMode::Host, None) => Check::ok(
                "network",
                format!("{status} (commands.network: allow; a list of hosts narrows it)"),
            ),
            _ => Check::ok("network", status.to_string()),
        }
    }

    /// Skills found, and the first that could not be read (file and line).
    fn check_skills(&self) -> Check {
        if !self.config().skills.enabled {
            return Check::ok("skills", "off (skills.enabled: false)");
        }
        let found = self.skills();
        let count = found.skills.len();
        match found.errors.first() {
            None => Check::ok("skills", format!("{count} found")),
            Some(error) => Check::bad(
                CheckState::Warn,
                "skills",
                format!("{count} found, {} skipped: {error}", found.errors.len()),
                "fix the SKILL.md at the file and line shown; `toolgate skills list` shows every problem",
            ),
        }
    }

    async fn check_store(&self) -> Check {
        let opened = self.store();
        // A server store connects on first use: ask it something (nothing
        // comes back) so that an unreachable server or an old schema shows.
        let used = match &opened {
            Ok(store) if self.config().store.url.is_some() => store
                .sessions_since(i64::MAX, 1)
                .await
                .map(drop)
                .map_err(|source| HostError::Store {
                    path: store.location().to_owned(),
                    source,
                }),
            _ => Ok(()),
        };
        match opened.and_then(|store| used.map(|()| store)) {
            Ok(store) => Check::ok("store", format!("{}", store.location().display())),
            Err(error) => Check::bad(
                CheckState::Fail,
                "store",
                toolgate_core::error_chain(&error),
                error.hint().unwrap_or_default(),
            ),
        }
    }

    /// The model checks of [`Host::doctor`] alone (what `toolgate init`
    /// checks): the server reachable with the key, the model served, its
    /// context window, tool calling.
    pub async fn model_checks(&self, options: &DoctorOptions) -> Vec<Check> {
        self.check_model(options).await
    }

    async fn check_model(&self, options: &DoctorOptions) -> Vec<Check> {
        let choice = match self.choose_model(&options.llm).await {
            Ok(choice) => choice,
            Err(error) => {
                let fix = error.hint().unwrap_or_else(|| GET_A_MODEL.to_owned());
                let state = match error {
                    HostError::NoModel { .. } | HostError::ModelUntrusted { .. } => {
                        "no model server"
                    }
                    HostError::KeyMissing { .. } => "api key",
                    _ => "model server",
                };
                return vec![Check::bad(
                    CheckState::Fail,
                    state,
                    toolgate_core::error_chain(&error),
                    fix,
                )];
            }
        };
        let provider = match choice.provider {
            LlmProvider::Openai => Provider::OpenAi,
            LlmProvider::Anthropic => Provider::Anthropic,
        };
        let mut request = ProbeRequest::new(provider, &choice.base_url)
            .model(&choice.model)
            .timeout(Duration::from_secs(3))
            .check_tools(options.check_tools);
        if let Ok(key) = self.api_key() {
            request = request.api_key(key);
        }
        let found = probe(&request).await;
        let kind = found.kind.map(|k| format!(" ({k})")).unwrap_or_default();
        let mut checks = vec![Check::ok(
            "model server",
            format!("{} reachable{kind}", choice.base_url),
        )];
        checks.push(match &found.model {
            Some(Ok(served)) => Check::ok("model", format!("{served} is served")),
            Some(Err(error)) => Check::bad(
                CheckState::Fail,
                "model",
                error.to_string(),
                "set `llm.model` (or --model) to one the server serves",
            ),
            None => Check::ok("model", choice.model.clone()),
        });
        checks.push(match &found.context_window {
            Ok(window) => Check::ok(
                "context window",
                format!("{} tokens (from {})", window.tokens, window.source),
            ),
            Err(error) => Check::bad(
                CheckState::Warn,
                "context window",
                error.to_string(),
                "set `llm.context_window` to the model's window in tokens",
            ),
        });
        let constrained = if self.config().llm.constrain == crate::config::Constrain::Off {
            "off (`llm.constrain: off`): tool calls go as `tools`, with text recovery".to_owned()
        } else if self.constrain(&choice, found.kind) {
            format!(
                "each reply held to one tool call or an answer by a JSON schema{kind}                  (`llm.constrain: auto`)"
            )
        } else {
            "not used: the server is not one known to take a JSON schema (llama.cpp, vLLM,              Ollama); tool calls go as `tools`, with text recovery"
                .to_owned()
        };
        checks.push(Check::ok("constrained replies", constrained));
        if let Ok(agent) = self.agent("build") {
            let facts = found.facts();
            let resolved = agent.profile.resolve(&facts);
            let why = match (agent.profile, facts.parameters, facts.window) {
                (toolgate_agent::Profile::Auto, Some(p), _) => {
                    // Tenths of a billion, in integers.
                    let tenths = p.div_ceil(100_000_000);
                    format!(
                        " (auto: the model has {}.{}B parameters)",
                        tenths / 10,
                        tenths % 10
                    )
                }
                (toolgate_agent::Profile::Auto, None, Some(w)) => {
                    format!(" (auto: a {w}-token window)")
                }
                (toolgate_agent::Profile::Auto, None, None) => {
                    " (auto: the server reports neither size nor window)".to_owned()
                }
                _ => " (agents.build.profile)".to_owned(),
            };
            checks.push(Check::ok(
                "agent profile",
                format!("build runs {}{why}", resolved.as_str()),
            ));
        }
        checks.push(match &found.tools {
            Some(Ok(call)) => Check::ok(
                "tool calling",
                format!("structured tool calls (the model called `{}`)", call.name),
            ),
            Some(Err(error)) => Check::bad(
                CheckState::Warn,
                "tool calling",
                error.to_string(),
                "use a model or a server chat template with tool calling (llama.cpp: --jinja)",
            ),
            None => Check::bad(
                CheckState::Warn,
                "tool calling",
                "not checked",
                "run `toolgate doctor --check-tools` (one small model call)",
            ),
        });
        checks
    }

    async fn check_mcp(&self) -> Vec<Check> {
        let config = &self.config().mcp;
        if config.servers.is_empty() {
            return Vec::new();
        }
        let Ok(statuses) = self.mcp_statuses().await else {
            return Vec::new();
        };
        statuses
            .into_iter()
            .map(|status| {
                let name = format!("mcp server {}", status.name);
                match &status.state {
                    ServerState::Connected => Check::ok(
                        name,
                        format!("{} connected, {} tools", status.transport, status.tools.len()),
                    ),
                    ServerState::Disabled => Check::ok(name, "disabled"),
                    ServerState::Failed(reason) => Check::bad(
                        CheckState::Fail,
                        name,
                        reason.clone(),
                        format!(
                            "fix `mcp.servers.{}` (command, url, token_env), or set `enabled: false`",
                            status.name
                        ),
                    ),
                    _ => Check::bad(CheckState::Warn, name, "unknown state", "rerun doctor"),
                }
            })
            .collect()
    }
}
