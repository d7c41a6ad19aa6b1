//! How a host is loaded: [`HostBuilder`] (workspace, configuration file,
//! environment, overrides, dry-run, the [`TrustPolicy`] for an untrusted
//! workspace file, the [`HostPart`]s built at once), the workspace
//! resolved, the confirmation rules with Claude Code's imported, and the
//! trust of the workspace file decided.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolgate_policy::{CommandPolicy, ConfirmationRules, ConfirmationRulesBuilder};

use super::Host;
use crate::config;
use crate::config::trust::{Trust, TrustError, TrustStore};
use crate::config::{Loaded, Overrides, ProjectFile};
use crate::error::HostError;

/// How a workspace configuration file with keys that need trust is settled
/// when it is not in the trust store (see [`crate::config::trust`]).
#[non_exhaustive]
pub enum TrustPolicy {
    /// Its trust-only keys are ignored (reported in
    /// [`Loaded::project`]). The default.
    StoreOnly,
    /// It is trusted for this run, and nothing is recorded
    /// (`--trust-workspace`, for CI).
    ThisRun,
    /// A person is asked (the front end shows [`ProjectFile::review`]); a
    /// yes is recorded in the trust store.
    Ask(Box<dyn FnOnce(&ProjectFile) -> bool + Send>),
}

impl std::fmt::Debug for TrustPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::StoreOnly => "StoreOnly",
            Self::ThisRun => "ThisRun",
            Self::Ask(_) => "Ask",
        })
    }
}

/// Loads a workspace's configuration into a [`Host`].
///
/// ```no_run
/// # fn main() -> Result<(), toolgate_host::HostError> {
/// let host = toolgate_host::Host::builder().workspace("/path/to/repo").load()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HostBuilder {
    pub(super) workspace: Option<PathBuf>,
    pub(super) config_file: Option<PathBuf>,
    pub(super) env: Option<Vec<(String, String)>>,
    pub(super) overrides: Overrides,
    pub(super) dry_run: bool,
    pub(super) trust: TrustPolicy,
    pub(super) parts: Vec<HostPart>,
}

/// A part of a [`Host`] a front end asks to have built, and checked, by
/// [`HostBuilder::load`] (ripgrep's `SearcherBuilder` is the model: what is
/// asked for is valid once the builder returns). A part not asked for is
/// built on its first use, with the same checks and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostPart {
    /// The file tools' view of the workspace ([`Host::workspace_view`]):
    /// the sensitive and protected patterns compiled.
    WorkspaceView,
    /// The sandbox every process runs in ([`Host::sandbox`]).
    Sandbox,
    /// The store ([`Host::store`]): opened, its schema up to date.
    Store,
}

impl HostBuilder {
    /// The workspace directory. By default, the current directory.
    #[must_use]
    pub fn workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = Some(dir.into());
        self
    }

    /// The workspace configuration file, instead of `WORKSPACE/toolgate.yaml`
    /// (`--config`); it must exist. By default, `WORKSPACE/toolgate.yaml`
    /// when there is one.
    #[must_use]
    pub fn config_file(mut self, file: Option<PathBuf>) -> Self {
        self.config_file = file;
        self
    }

    /// The environment the configuration reads (`TOOLGATE_*` keys, `HOME`,
    /// `XDG_*`, the API key variables). By default, the process's.
    #[must_use]
    pub fn env(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        self.env = Some(vars.into_iter().collect());
        self
    }

    /// Flags that win over every configuration layer. By default, none.
    #[must_use]
    pub fn overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Dry-run: calls that pass the gate's checks are described, not run.
    /// By default, off.
    #[must_use]
    pub fn dry_run(mut self, yes: bool) -> Self {
        self.dry_run = yes;
        self
    }

    /// How an untrusted workspace file is settled. By default,
    /// [`TrustPolicy::StoreOnly`].
    #[must_use]
    pub fn trust(mut self, policy: TrustPolicy) -> Self {
        self.trust = policy;
        self
    }

    /// Builds `parts` at [`load`](Self::load), in this order, so that an
    /// invalid one (a bad glob, a sandbox that cannot be had, a damaged
    /// store) fails the load with the error it gives when built later;
    /// calling this again adds to the list. Each command asks for what it
    /// will use: a part asked for and never used is built for nothing. By
    /// default, none: each part is built on its first use.
    #[must_use]
    pub fn parts(mut self, parts: impl IntoIterator<Item = HostPart>) -> Self {
        self.parts.extend(parts);
        self
    }

    /// Reads every configuration layer and checks it, then builds the
    /// [`parts`](Self::parts) asked for.
    pub fn load(self) -> Result<Host, HostError> {
        let env = self.env.unwrap_or_else(|| std::env::vars().collect());
        let workspace = resolve_workspace(self.workspace.as_deref())?;
        let store = config::trust_store_path(&env);
        let policy = self.trust;
        let this_run = matches!(policy, TrustPolicy::ThisRun);
        let mut loaded = config::load(
            &workspace,
            self.config_file.as_deref(),
            &env,
            &self.overrides,
            |project| decide(project, policy, store.as_deref()),
        )?;
        import_claude(&mut loaded, &workspace, &env, this_run, store.as_deref())
            .map_err(config::LoadError::from)?;
        let config = &loaded.config;
        crate::secrets::register(
            &env,
            &serde_json::to_value(config).unwrap_or(serde_json::Value::Null),
        );
        let command_policy = CommandPolicy::builder()
            .blocked_patterns(
                config
                    .commands
                    .blocked_patterns
                    .iter()
                    .chain(&config.guardrails.blocked_commands)
                    .cloned(),
            )
            .build()
            .map_err(HostError::BlockedPatterns)?;
        let mut rules = confirmation_rules_builder();
        rules.rules(config.confirmation.rules.iter().cloned());
        // Imported rules after ours: the gate evaluates deny → ask → allow
        // over all of them, and numbers them in this order.
        if let Some(import) = &loaded.claude {
            rules.rules(import.rules.iter().map(|r| r.rule.clone()));
        }
        if let Some(root) = workspace.to_str() {
            rules.root(root);
        }
        let rules = rules.build().map_err(HostError::Rules)?;
        let host = Host {
            workspace,
            mode_flag: self.overrides.mode,
            loaded,
            env,
            command_policy: Arc::new(command_policy),
            rules,
            dry_run: self.dry_run,
            sandbox: OnceLock::new(),
            workspace_view: OnceLock::new(),
            store: OnceLock::new(),
            dynamic: OnceLock::new(),
            store_audit: OnceLock::new(),
            saved_rules: OnceLock::new(),
            capture: OnceLock::new(),
            skills: OnceLock::new(),
            group_outlines: OnceLock::new(),
            store_path: OnceLock::new(),
            own_state: OnceLock::new(),
        };
        for part in self.parts {
            match part {
                HostPart::WorkspaceView => {
                    host.workspace_view()?;
                }
                HostPart::Sandbox => {
                    host.sandbox()?;
                }
                HostPart::Store => {
                    host.store()?;
                }
            }
        }
        Ok(host)
    }
}

/// A builder of confirmation rules that knows which built-in tools run a
/// command line on every call
/// ([`ConfirmationRulesBuilder::command_tools`]): an allow rule for one of
/// them needs a command prefix. The host's rules, the rules file and the
/// web UI's look at the rules all start from it.
pub fn confirmation_rules_builder() -> ConfirmationRulesBuilder {
    let mut builder = ConfirmationRules::builder();
    builder.command_tools(toolgate_tools::command::COMMAND_LINE_TOOLS.iter().copied());
    builder
}

/// `confirmation.import: [claude]` (see [`config::claude`]): reads Claude
/// Code's settings, a workspace file trusted as `toolgate.yaml` is (this
/// run's flag, then the store; nobody is asked), and sets the imported
/// mode when no layer of ours sets one.
pub(super) fn import_claude(
    loaded: &mut Loaded,
    workspace: &Path,
    env: &[(String, String)],
    this_run: bool,
    store: Option<&Path>,
) -> Result<(), TrustError> {
    if !loaded
        .config
        .confirmation
        .import
        .contains(&config::claude::ImportSource::Claude)
    {
        return Ok(());
    }
    let store = match store {
        Some(path) if !this_run => Some(TrustStore::open(path)?),
        _ => None,
    };
    let trust = |file: &Path, sha256: &str| {
        if this_run {
            Trust::ThisRun
        } else if store.as_ref().is_some_and(|s| s.is_trusted(file, sha256)) {
            Trust::Recorded
        } else {
            Trust::Untrusted
        }
    };
    let home = env
        .iter()
        .find(|(k, _)| k == config::env_vars::HOME)
        .map(|(_, v)| PathBuf::from(v))
        .filter(|h| h.is_absolute());
    let mut import = config::claude::read(workspace, home.as_deref(), &trust);
    if let Some((mode, _)) = &import.mode
        && !loaded.mode_configured
    {
        loaded.config.confirmation.mode = *mode;
        import.mode_applied = true;
    }
    loaded.claude = Some(import);
    Ok(())
}

/// The trust rules of [`TrustPolicy`]: this run's flag, then the store,
/// then the person, whose yes is recorded.
pub(super) fn decide(
    project: &ProjectFile,
    policy: TrustPolicy,
    store: Option<&Path>,
) -> Result<Trust, TrustError> {
    if matches!(policy, TrustPolicy::ThisRun) {
        return Ok(Trust::ThisRun);
    }
    let mut store = store.map(TrustStore::open).transpose()?;
    if store
        .as_ref()
        .is_some_and(|s| s.is_trusted(&project.path, &project.sha256))
    {
        return Ok(Trust::Recorded);
    }
    let TrustPolicy::Ask(ask) = policy else {
        return Ok(Trust::Untrusted);
    };
    if !ask(project) {
        return Ok(Trust::Untrusted);
    }
    let Some(store) = store.as_mut() else {
        return Err(TrustError::NoPlace);
    };
    store.trust(project.path.clone(), project.sha256.clone());
    store.save()?;
    Ok(Trust::Recorded)
}

/// The workspace directory, canonical: `dir`, or the current directory.
pub fn resolve_workspace(dir: Option<&Path>) -> Result<PathBuf, HostError> {
    let workspace = match dir {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().map_err(|source| HostError::Workspace {
            path: PathBuf::from("."),
            source,
        })?,
    };
    let canonical = workspace
        .canonicalize()
        .map_err(|source| HostError::Workspace {
            path: workspace.clone(),
            source,
        })?;
    if !canonical.is_dir() {
        return Err(HostError::NotADirectory(canonical));
    }
    Ok(canonical)
}
