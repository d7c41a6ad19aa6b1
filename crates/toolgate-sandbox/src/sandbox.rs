//! [`Sandbox`]: the one way toolgate starts a process.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolgate_core::{DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, PathPatterns};

use crate::env::EnvPolicy;
use crate::linux::child::{self, Plan};
use crate::linux::landlock;
use crate::linux::plan::{self, Dynamic, Strictness, View};
use crate::placeholder::{Kind, Lease, Placeholders};
use crate::status::{Level, SandboxStatus};
use crate::{SandboxError, gitconfig, resolve, scan};

/// Paths under the home directory that processes may read (relative to
/// `$HOME`): toolchains and their caches. Everything else in the home
/// directory is hidden. `~/.gitconfig` is shown as a sanitised copy (see
/// [`gitconfig`](crate::gitconfig)).
pub const DEFAULT_HOME_READABLE: &[&str] = &[
    ".cargo",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".npm",
    ".cache",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    "go",
    ".sdkman",
];

/// Secrets under the home directory, masked wherever they are visible (in an
/// allowed toolchain directory, or because the workspace is the home
/// directory), relative to `$HOME`.
pub const DEFAULT_HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".docker",
    ".kube",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".config/toolgate",
    ".password-store",
    ".local/share/keyrings",
    ".local/share/fish",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".viminfo",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".cache/huggingface/token",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
];

/// Secrets of the system, masked for every process (root can read them).
pub const DEFAULT_SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/ssl/private",
];

/// Paths under `/run` kept visible: what name resolution and the system's
/// software need (`/run` otherwise hides the user's session sockets).
const RUN_KEEP: &[&str] = &[
    "/run/systemd/resolve",
    "/run/current-system",
    "/run/booted-system",
    "/run/opengl-driver",
];

/// How much of the sandbox to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Namespaces, mounts and Landlock (the default); falls back to
    /// [`LandlockOnly`](Self::LandlockOnly) where the kernel has no usable
    /// user namespaces, and says so in the [status](Sandbox::status).
    #[default]
    Full,
    /// Landlock only: writes confined, nothing hidden.
    LandlockOnly,
    /// No kernel sandbox at all (the environment is still built).
    Off,
}

/// What a process is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Profile {
    /// Reads only: no writes except `/dev/null`, no network, and `execve` of
    /// nothing but the shell and `programs` (names as written on the command
    /// line, resolved through `PATH`). For commands judged read-only.
    ReadOnly {
        /// The programs the command line names.
        programs: Vec<String>,
    },
    /// Writes beneath the workspace, the private `/tmp` and configured
    /// paths; toolgate's policy files and the workspace's protected paths
    /// stay read-only; the network as configured.
    Standard,
}

/// What to run: a shell line or a program with arguments, where, with what.
#[derive(Debug, Clone)]
pub struct Spawn {
    program: OsString,
    args: Vec<OsString>,
    shell: bool,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    profile: Profile,
    readable: Vec<PathBuf>,
    writable: Vec<PathBuf>,
}

impl Spawn {
    /// `bash -c LINE` (`/bin/sh -c LINE` where there is no bash): bash,
    /// because the command classifier reads lines as bash does; running
    /// them in another shell (dash's `time` is a program, it has no `$'…'`)
    /// would run something other than what was judged.
    pub fn shell(line: impl Into<OsString>) -> Self {
        Self {
            program: OsString::from(shell_path()),
            args: vec![OsString::from("-c"), line.into()],
            shell: true,
            cwd: None,
            env: Vec::new(),
            profile: Profile::Standard,
            readable: Vec::new(),
            writable: Vec::new(),
        }
    }

    /// A program (a path, or a name looked up in the built `PATH`) with its
    /// arguments, without a shell.
    pub fn program<I, S>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            shell: false,
            cwd: None,
            env: Vec::new(),
            profile: Profile::Standard,
            readable: Vec::new(),
            writable: Vec::new(),
        }
    }

    /// The working directory. By default, the workspace root.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds a variable on top of the built environment. By default, none.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Adds variables on top of the built environment.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// More paths this process may read where they would be hidden
    /// (absolute, or `~/…`), on top of the sandbox's. By default, none.
    #[must_use]
    pub fn readable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.readable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// More paths this process may write (absolute, or `~/…`), on top of the
    /// sandbox's; only in [`Profile::Standard`]. By default, none.
    #[must_use]
    pub fn writable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.writable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// The profile. By default, [`Profile::Standard`].
    #[must_use]
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The program, for messages.
    pub fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

/// The shell lines run in.
fn shell_path() -> &'static str {
    static SHELL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        if Path::new("/bin/bash").exists() {
            "/bin/bash"
        } else {
            "/bin/sh"
        }
    })
}

/// Configures a [`Sandbox`].
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    workspace: PathBuf,
    mode: SandboxMode,
    network: bool,
    sensitive: Vec<String>,
    protected: Vec<String>,
    home_readable: Vec<String>,
    deny_read: Vec<PathBuf>,
    readable: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    env: EnvPolicy,
    host_env: Option<Vec<(String, String)>>,
}

impl SandboxBuilder {
    /// How much of the sandbox to use. By default, [`SandboxMode::Full`].
    #[must_use]
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether [`Profile::Standard`] processes may use the network. By
    /// default, `true`. Read-only processes never may.
    #[must_use]
    pub fn network(mut self, allow: bool) -> Self {
        self.network = allow;
        self
    }

    /// The sensitive-file patterns (masked in every process). By default,
    /// [`DEFAULT_SENSITIVE_PATTERNS`]; this replaces them.
    #[must_use]
    pub fn sensitive_patterns<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.sensitive = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// The protected-path patterns (read-only in every process). By default,
    /// [`DEFAULT_PROTECTED_PATTERNS`]; this *adds* to them — the built-in
    /// ones cannot be removed.
    #[must_use]
    pub fn protected_patterns<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protected.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// The paths under the home directory that stay readable, relative to
    /// it. By default, [`DEFAULT_HOME_READABLE`]; this replaces them.
    #[must_use]
    pub fn home_readable<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.home_readable = paths.into_iter().map(Into::into).collect();
        self
    }

    /// More paths to mask wherever visible (absolute, or `~/…`), on top of
    /// [`DEFAULT_HOME_SECRETS`] and [`DEFAULT_SYSTEM_SECRETS`]. By default,
    /// none.
    #[must_use]
    pub fn deny_read<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.deny_read.extend(paths.into_iter().map(Into::into));
        self
    }

    /// More paths to show read-only where they would be hidden (absolute,
    /// or `~/…`): an MCP server's installation, say. By default, none.
    #[must_use]
    pub fn readable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.readable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// More paths [`Profile::Standard`] processes may write (absolute, or
    /// `~/…`): a package cache, say. By default, none.
    #[must_use]
    pub fn writable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.writable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// How the environment is built. By default, [`EnvPolicy::new`]: the
    /// core variables only.
    #[must_use]
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env = policy;
        self
    }

    /// The environment the policy takes variables from. By default,
    /// toolgate's own.
    #[must_use]
    pub fn host_env<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.host_env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// Checks the configuration, makes the private session directory, and
    /// returns the sandbox. The kernel is probed on first use.
    pub fn build(self) -> Result<Sandbox, SandboxError> {
        let workspace =
            std::fs::canonicalize(&self.workspace).map_err(|source| SandboxError::Scan {
                workspace: self.workspace.clone(),
                source,
            })?;
        let sensitive = PathPatterns::new(self.sensitive).map_err(SandboxError::Pattern)?;
        let protected = PathPatterns::new(self.protected).map_err(SandboxError::Pattern)?;
        let host: Vec<(String, String)> = self.host_env.unwrap_or_else(|| {
            std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect()
        });
        let env = self.env.build(host.iter().cloned());
        let home = env
            .get("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute() && h != Path::new("/"));
        let session = tempfile::Builder::new()
            .prefix("toolgate-")
            .tempdir()
            .map_err(SandboxError::Session)?;
        let tmp = session.path().join("tmp");
        std::fs::create_dir(&tmp).map_err(SandboxError::Session)?;
        let view = make_view(
            &workspace,
            &tmp,
            session.path(),
            home.as_deref(),
            &self.home_readable,
            &self.deny_read,
            &self.readable,
            &self.writable,
        )?;
        Ok(Sandbox {
            inner: Arc::new(Inner {
                view,
                mode: self.mode,
                network: self.network,
                sensitive,
                protected,
                env,
                status: OnceLock::new(),
                placeholders: Arc::new(Placeholders::new()),
                scanner: scan::Scanner::default(),
                _session: session,
            }),
        })
    }
}

/// The home directory of `uid` in `/etc/passwd` (accounts from other name
/// services are not looked up: `$HOME` covers them).
fn passwd_home(uid: u32) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        let (Some(id), Some(home)) = (fields.get(2), fields.get(5)) else {
            return None;
        };
        (id.parse::<u32>().ok()? == uid && home.starts_with('/')).then(|| PathBuf::from(home))
    })
}

fn expand(path: &Path, home: Option<&Path>) -> Option<PathBuf> {
    match path.strip_prefix("~") {
        Ok(rest) => home.map(|h| h.join(rest)),
        Err(_) => path.is_absolute().then(|| path.to_owned()),
    }
}

#[expect(clippy::too_many_arguments, reason = "one call site, the builder")]
fn make_view(
    workspace: &Path,
    tmp: &Path,
    session: &Path,
    home: Option<&Path>,
    home_readable: &[String],
    deny_read: &[PathBuf],
    readable: &[PathBuf],
    writable: &[PathBuf],
) -> Result<View, SandboxError> {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let canonical = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    // What is shown again on top of the covers; a cover beneath one of them
    // would be hidden by it, or hide part of it.
    let shown_roots: Vec<PathBuf> = [workspace.to_owned(), PathBuf::from("/tmp")]
        .into_iter()
        .chain(
            readable
                .iter()
                .chain(writable)
                .filter_map(|p| expand(p, home))
                .map(canonical),
        )
        .collect();
    let mut covered: Vec<PathBuf> = Vec::new();
    // `/var/run` is a link to `/run` (covered) nearly everywhere; where it
    // is a directory of its own, it holds the same sockets.
    let var_run = Path::new("/var/run");
    let var_run = std::fs::symlink_metadata(var_run)
        .is_ok_and(|m| m.is_dir())
        .then_some(var_run);
    for dir in [
        Some(Path::new("/home")),
        Some(Path::new("/root")),
        home,
        var_run,
    ]
    .into_iter()
    .flatten()
    {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        // A home directory inside the workspace (or /tmp) is the user's
        // choice of workspace: the workspace's own rules apply there, and
        // the home secrets are still masked.
        if !real.is_dir()
            || real == Path::new("/")
            || shown_roots.iter().any(|r| real.starts_with(r))
            || covered.iter().any(|c| real.starts_with(c))
        {
            continue;
        }
        covered.retain(|c| !c.starts_with(&real));
        covered.push(real);
    }
    // The toolchains of `$HOME` and of the account's own home directory
    // (they differ when HOME was changed: a test, a CI job), wherever that
    // home is hidden.
    let account_home = passwd_home(rustix::process::getuid().as_raw());
    let homes: Vec<&Path> = home.into_iter().chain(account_home.as_deref()).collect();
    let mut shown: Vec<PathBuf> = Vec::new();
    for home in homes
        .iter()
        .filter(|h| covered.iter().any(|c| h.starts_with(c)))
    {
        for rel in home_readable {
            let path = home.join(rel);
            if exists(&path) {
                shown.push(canonical(path));
            }
        }
    }
    for path in readable {
        if let Some(path) = expand(path, home).filter(|p| exists(p)) {
            shown.push(canonical(path));
        }
    }
    let writable: Vec<PathBuf> = writable
        .iter()
        .filter_map(|p| expand(p, home))
        .filter(|p| exists(p))
        .map(canonical)
        .collect();
    let mut gitconfig = None;
    if let Some(home) = home {
        let user = home.join(".gitconfig");
        let under_cover = covered.iter().any(|c| user.starts_with(c));
        if under_cover && let Ok(text) = std::fs::read_to_string(&user) {
            let clean = session.join("gitconfig");
            std::fs::write(&clean, gitconfig::sanitize(&text)).map_err(SandboxError::Session)?;
            gitconfig = Some((clean, canonical(home.to_owned()).join(".gitconfig")));
        }
    }
    let mut deny: Vec<PathBuf> = DEFAULT_SYSTEM_SECRETS.iter().map(PathBuf::from).collect();
    if let Ok(entries) = std::fs::read_dir("/etc/ssh") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("ssh_host_") && name.ends_with("_key") {
                deny.push(entry.path());
            }
        }
    }
    for home in &homes {
        deny.extend(DEFAULT_HOME_SECRETS.iter().map(|rel| home.join(rel)));
    }
    deny.extend(deny_read.iter().filter_map(|p| expand(p, home)));
    let deny = deny
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
        .map(canonical)
        .collect();
    let run_keep = RUN_KEEP
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .map(canonical)
        .filter(|p| p.starts_with("/run"))
        .collect();
    Ok(View {
        workspace: workspace.to_owned(),
        tmp: tmp.to_owned(),
        covered,
        readable: shown,
        writable,
        run_keep,
        gitconfig,
        deny,
        uid: rustix::process::getuid().as_raw(),
        gid: rustix::process::getgid().as_raw(),
        landlock_abi: landlock::abi_version().max(0),
    })
}

impl View {
    /// This view with more readable and writable paths (those that exist).
    fn with_extra(&self, readable: &[PathBuf], writable: &[PathBuf], home: Option<&Path>) -> Self {
        let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths
                .iter()
                .filter_map(|p| expand(p, home))
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect()
        };
        let mut view = self.clone();
        view.readable.extend(existing(readable));
        view.writable.extend(existing(writable));
        view
    }
}

#[derive(Debug)]
struct Inner {
    view: View,
    mode: SandboxMode,
    network: bool,
    sensitive: PathPatterns,
    protected: PathPatterns,
    env: BTreeMap<String, String>,
    status: OnceLock<SandboxStatus>,
    placeholders: Arc<Placeholders>,
    scanner: scan::Scanner,
    _session: tempfile::TempDir,
}

/// The one way toolgate starts a process: every command, background
/// process, hook, quality gate and MCP server goes through a `Sandbox`.
///
/// Cheap to clone (an [`Arc`] inside). Its private session directory (the
/// processes' `/tmp`) is removed when the last clone is dropped.
///
/// # Rules
///
/// Every process started through a sandbox with [`Level::Full`]:
///
/// 1. has its environment built by the [`EnvPolicy`], not inherited;
/// 2. sees the file system read-only, except the workspace, a private
///    `/tmp` (shared by the processes of this sandbox only) and the
///    configured writable paths ([`Profile::Standard`]); or nothing
///    writable but `/dev/null` ([`Profile::ReadOnly`]);
/// 3. cannot read the workspace's sensitive files, the home directory
///    (except [`DEFAULT_HOME_READABLE`] and a sanitised `~/.gitconfig`), the
///    [home secrets](DEFAULT_HOME_SECRETS) and [system
///    secrets](DEFAULT_SYSTEM_SECRETS), nor anything under `/run` but name
///    resolution: each is covered by an empty, unreadable mask or tmpfs;
/// 4. cannot change, create, rename or remove a protected path
///    (`toolgate.yaml`, `.toolgate/`, `.git/config`, `.git/hooks/`, the
///    configured ones): each is mounted read-only, over an empty placeholder
///    where it did not exist;
/// 5. sees only its own processes (PID namespace, fresh `/proc`), has no
///    controlling terminal, holds no capability, cannot gain privileges
///    (`no_new_privs`), cannot signal or connect to abstract sockets
///    outside its Landlock domain (ABI 6), cannot mount anything;
/// 6. has no network when read-only or configured so (its own network
///    namespace, plus Landlock's TCP rules);
/// 7. dies with toolgate, and everything it started dies with it.
///
/// With [`Level::LandlockOnly`], only writes are confined (rule 2) and
/// rules 1 and 7 hold; [`SandboxStatus::missing`] lists the rest.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

/// A process ready to be started.
#[derive(Debug)]
pub struct Prepared {
    command: tokio::process::Command,
    lease: Lease,
    report: Option<(OwnedFd, Arc<Plan>)>,
    program: String,
}

impl Prepared {
    /// The command, to set its standard streams.
    pub fn command_mut(&mut self) -> &mut tokio::process::Command {
        &mut self.command
    }

    /// Starts it. A failure to build the sandbox names the step that failed.
    pub fn spawn(mut self) -> Result<Running, SandboxError> {
        match self.command.spawn() {
            Ok(child) => Ok(Running {
                child,
                lease: self.lease,
            }),
            Err(source) => {
                if let Some((read, plan)) = &self.report
                    && let Some((step, code)) = child::read_report(read)
                {
                    return Err(SandboxError::Setup {
                        step: plan::describe_step(&plan.steps, step),
                        source: std::io::Error::from_raw_os_error(code),
                    });
                }
                Err(SandboxError::Spawn {
                    program: self.program,
                    source,
                })
            }
        }
    }

    /// Runs it with no input or output and waits, blocking the thread (for
    /// the probe, which may be asked for from synchronous code).
    fn wait_blocking(self) -> Result<std::process::ExitStatus, SandboxError> {
        let Self {
            command,
            lease: _lease,
            report,
            program,
        } = self;
        let mut command = command.into_std();
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let result = command.status();
        drop(command);
        result.map_err(|source| {
            if let Some((read, plan)) = &report
                && let Some((step, code)) = child::read_report(read)
            {
                return SandboxError::Setup {
                    step: plan::describe_step(&plan.steps, step),
                    source: std::io::Error::from_raw_os_error(code),
                };
            }
            SandboxError::Spawn { program, source }
        })
    }

    /// The command and what must be kept alive as long as the process runs
    /// (for callers that spawn it themselves, such as an MCP client).
    pub fn into_parts(self) -> (tokio::process::Command, Lease) {
        (self.command, self.lease)
    }
}

/// A started process, with what it holds.
#[derive(Debug)]
pub struct Running {
    /// The process (for a full sandbox, the keeper outside its PID
    /// namespace: its exit status is the command's, and killing it kills
    /// everything inside).
    pub child: tokio::process::Child,
    lease: Lease,
}

impl Running {
    /// The process and what it holds, to keep together as long as it runs.
    pub fn into_parts(self) -> (tokio::process::Child, Lease) {
        (self.child, self.lease)
    }
}

impl Sandbox {
    /// Starts configuring a sandbox for `workspace`.
    pub fn builder(workspace: impl Into<PathBuf>) -> SandboxBuilder {
        SandboxBuilder {
            workspace: workspace.into(),
            mode: SandboxMode::Full,
            network: true,
            sensitive: DEFAULT_SENSITIVE_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            protected: DEFAULT_PROTECTED_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            home_readable: DEFAULT_HOME_READABLE
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            deny_read: Vec::new(),
            readable: Vec::new(),
            writable: Vec::new(),
            env: EnvPolicy::new(),
            host_env: None,
        }
    }

    /// The workspace, canonical.
    pub fn workspace(&self) -> &Path {
        &self.inner.view.workspace
    }

    /// The environment every process starts from (before per-process
    /// additions).
    pub fn base_env(&self) -> &BTreeMap<String, String> {
        &self.inner.env
    }

    /// What is enforced on this machine. The first call probes the kernel
    /// by starting `/bin/true` in the read-only profile (a few
    /// milliseconds); the answer is kept.
    pub fn status(&self) -> &SandboxStatus {
        self.inner.status.get_or_init(|| {
            let status = self.probe();
            if status.level != Level::Full || !status.missing.is_empty() {
                // Said once per sandbox: what the kernel does not enforce here.
                tracing::warn!("sandbox: {status}");
            }
            status
        })
    }

    fn probe(&self) -> SandboxStatus {
        let abi = self.inner.view.landlock_abi;
        let mut missing = Vec::new();
        if abi <= 0 && self.inner.mode == SandboxMode::Full {
            missing.push(
                "this kernel has no Landlock: a read-only command cannot be held to the programs \
                 it names, so every command asks"
                    .to_owned(),
            );
        }
        if abi < 6 && abi > 0 {
            missing.push(format!(
                "Landlock ABI {abi} < 6: signals and abstract Unix sockets are not scoped \
                 (the PID namespace still hides other processes)"
            ));
        }
        let landlock_only = |mut missing: Vec<String>, why: String| {
            missing.insert(0, why);
            if abi > 0 {
                missing.push(
                    "sensitive files, the home directory and other processes are visible to \
                     commands"
                        .to_owned(),
                );
                SandboxStatus {
                    level: Level::LandlockOnly,
                    landlock_abi: abi,
                    missing,
                }
            } else {
                missing.push("this kernel has no Landlock: nothing is confined".to_owned());
                SandboxStatus {
                    level: Level::Off,
                    landlock_abi: 0,
                    missing,
                }
            }
        };
        match self.inner.mode {
            SandboxMode::Off => SandboxStatus {
                level: Level::Off,
                landlock_abi: abi,
                missing: vec!["the sandbox is switched off by configuration".to_owned()],
            },
            SandboxMode::LandlockOnly => landlock_only(
                missing,
                "namespaces are switched off by configuration (sandbox: landlock)".to_owned(),
            ),
            SandboxMode::Full if self.inner.view.workspace == Path::new("/") => landlock_only(
                missing,
                "the workspace is `/`, which leaves nothing to confine".to_owned(),
            ),
            SandboxMode::Full => match self.try_full() {
                Ok(()) => SandboxStatus {
                    level: Level::Full,
                    landlock_abi: abi,
                    missing,
                },
                Err(error) => {
                    let why = toolgate_core::error_chain(&error);
                    landlock_only(
                        missing,
                        format!("user namespaces are not usable here ({why})"),
                    )
                }
            },
        }
    }

    /// Starts `/bin/true` read-only in the full sandbox and waits for it.
    fn try_full(&self) -> Result<(), SandboxError> {
        let spawn =
            Spawn::program("/bin/true", Vec::<OsString>::new()).profile(Profile::ReadOnly {
                programs: vec!["/bin/true".to_owned()],
            });
        let prepared = self.prepare_at(&spawn, Level::Full, false)?;
        let status = prepared.wait_blocking()?;
        if status.success() {
            Ok(())
        } else {
            Err(SandboxError::Setup {
                step: "a probe run of /bin/true".to_owned(),
                source: std::io::Error::other(format!("it exited with {status}")),
            })
        }
    }

    /// Runs `spawn` with no input or output and waits for it, blocking the
    /// thread: for short helper programs started from synchronous code
    /// (`apply_patch`'s GNU `patch` fallback). Use [`run`](Self::run)
    /// elsewhere.
    pub fn run_blocking(&self, spawn: &Spawn) -> Result<std::process::ExitStatus, SandboxError> {
        self.prepare(spawn)?.wait_blocking()
    }

    /// Prepares `spawn` in this sandbox (scans the workspace, creates
    /// placeholders, builds the plan), ready to start.
    pub fn prepare(&self, spawn: &Spawn) -> Result<Prepared, SandboxError> {
        self.prepare_at(spawn, self.status().level, true)
    }

    /// `scan: false` only for the probe, which reads nothing of the
    /// workspace.
    fn prepare_at(
        &self,
        spawn: &Spawn,
        level: Level,
        scan: bool,
    ) -> Result<Prepared, SandboxError> {
        let inner = &self.inner;
        let mut env = inner.env.clone();
        for (name, value) in &spawn.env {
            env.insert(name.clone(), value.clone());
        }
        let cwd = spawn
            .cwd
            .clone()
            .unwrap_or_else(|| inner.view.workspace.clone());
        let mut command = tokio::process::Command::new(&spawn.program);
        command
            .args(&spawn.args)
            .env_clear()
            .envs(&env)
            .current_dir(&cwd)
            .process_group(0)
            .kill_on_drop(true);
        let program = spawn.program_name();
        if level == Level::Off {
            return Ok(Prepared {
                command,
                lease: Lease::empty(),
                report: None,
                program,
            });
        }
        let strictness = match &spawn.profile {
            Profile::ReadOnly { .. } => Strictness::ReadOnly,
            Profile::Standard => Strictness::Standard,
        };
        let executables = match &spawn.profile {
            Profile::ReadOnly { programs } => {
                let path = env.get("PATH").map_or("", String::as_str);
                let mut all = programs.clone();
                all.push(spawn.program.to_string_lossy().into_owned());
                if spawn.shell {
                    all.push(shell_path().to_owned());
                }
                resolve::executables(&all, path, &cwd)
            }
            Profile::Standard => Vec::new(),
        };
        let mut lease = Lease::empty();
        let mut extra_protected = Vec::new();
        if level == Level::Full && strictness == Strictness::Standard {
            let (wanted, whole_git) = self.placeholders_wanted();
            lease = inner.placeholders.acquire(&wanted).map_err(|source| {
                SandboxError::Placeholder {
                    path: inner.view.workspace.clone(),
                    source,
                }
            })?;
            if whole_git {
                extra_protected.push(PathBuf::from(".git"));
            }
        }
        let found = if level == Level::Full && scan {
            inner
                .scanner
                .scan(&inner.view.workspace, &inner.sensitive, &inner.protected)
                .map_err(|source| SandboxError::Scan {
                    workspace: inner.view.workspace.clone(),
                    source,
                })?
        } else {
            scan::Found::default()
        };
        let mut protected = found.protected;
        protected.extend(extra_protected);
        protected.sort();
        protected.dedup();
        let pins = scan::pins(&protected);
        let (read, write) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )
        .map_err(|e| SandboxError::Session(e.into()))?;
        let dynamic = Dynamic {
            strictness,
            network: inner.network,
            executables: &executables,
            sensitive: &found.sensitive,
            sensitive_outside: &found.sensitive_outside,
            pins: &pins,
            protected: &protected,
            cwd: &cwd,
        };
        let extended;
        let view = if spawn.readable.is_empty() && spawn.writable.is_empty() {
            &inner.view
        } else {
            extended = inner.view.with_extra(
                &spawn.readable,
                &spawn.writable,
                env.get("HOME").map(Path::new),
            );
            &extended
        };
        let plan = if level == Level::Full {
            plan::build(view, &dynamic, write.as_raw_fd())?
        } else {
            plan::landlock_only(view, &dynamic, write.as_raw_fd())?
        };
        let plan = Arc::new(plan);
        let child_plan = Arc::clone(&plan);
        let mut fds: Vec<libc::c_int> = vec![-1; plan.captures.len()];
        // The write end must stay open until the child has run: it moves
        // into the closure, which lives as long as the command.
        let report_write = write;
        install(&mut command, move || {
            let _keep = &report_write;
            child::run(&child_plan, &mut fds)
        });
        Ok(Prepared {
            command,
            lease,
            report: Some((read, plan)),
            program,
        })
    }

    /// The policy paths that must exist (as placeholders if need be) so a
    /// process cannot create them; and whether `.git` itself is protected
    /// whole (it is missing, or a `gitdir:` file).
    fn placeholders_wanted(&self) -> (Vec<(PathBuf, Kind)>, bool) {
        let ws = &self.inner.view.workspace;
        let mut wanted = vec![
            (ws.join("toolgate.yaml"), Kind::File(b"")),
            (ws.join(".toolgate"), Kind::Dir),
        ];
        let git = ws.join(".git");
        let whole_git = match std::fs::symlink_metadata(&git) {
            Ok(meta) if meta.is_dir() => {
                wanted.push((git.join("config"), Kind::File(b"")));
                wanted.push((git.join("hooks"), Kind::Dir));
                // Git reads its configuration from where `commondir` points
                // (`.` is the repository itself, as if there were none), and
                // from `config.worktree` when the configuration says so.
                wanted.push((git.join("commondir"), Kind::File(b".\n")));
                wanted.push((git.join("config.worktree"), Kind::File(b"")));
                false
            }
            Ok(_) => true,
            Err(_) => {
                wanted.push((git, Kind::Dir));
                true
            }
        };
        (wanted, whole_git)
    }
}

/// Registers the child-side closure.
#[expect(unsafe_code, reason = "pre_exec runs code between fork and exec")]
fn install<F>(command: &mut tokio::process::Command, f: F)
where
    F: FnMut() -> std::io::Result<()> + Send + Sync + 'static,
{
    // SAFETY: the closure only calls `child::run`, which makes raw system
    // calls over data prepared before the fork (no allocation, no locks):
    // see the `linux::child` module docs.
    unsafe {
        command.pre_exec(f);
    }
}
