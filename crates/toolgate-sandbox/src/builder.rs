//! [`SandboxBuilder`]: configuring a [`Sandbox`], and the view of the file
//! system it gives processes.

use std::path::{Path, PathBuf};

use toolgate_core::{DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, PathPatterns};

use crate::env::EnvPolicy;
use crate::limits::Limits;
use crate::linux::landlock;
use crate::linux::plan::View;
use crate::sandbox::{Parts, Sandbox};
use crate::session::SessionDir;
use crate::{NetworkPolicy, SandboxError, gitconfig};

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

/// Configures a [`Sandbox`].
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    workspace: PathBuf,
    mode: SandboxMode,
    network: bool,
    network_policy: Option<NetworkPolicy>,
    sensitive: Vec<String>,
    protected: Vec<String>,
    home_readable: Vec<String>,
    deny_read: Vec<PathBuf>,
    readable: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    private: Vec<PathBuf>,
    env: EnvPolicy,
    host_env: Option<Vec<(String, String)>>,
    limits: Limits,
}

impl SandboxBuilder {
    pub(crate) fn new(workspace: PathBuf) -> Self {
        Self {
            workspace,
            mode: SandboxMode::Full,
            network: true,
            network_policy: None,
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
            private: Vec::new(),
            env: EnvPolicy::new(),
            host_env: None,
            limits: Limits::default(),
        }
    }

    /// How much of the sandbox to use. By default, [`SandboxMode::Full`].
    #[must_use]
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether [`Profile::Standard`](crate::Profile::Standard) processes
    /// may use the network. By default, `true`. Read-only processes never
    /// may. With `true`, a [`network_policy`](Self::network_policy) says
    /// where; `false` wins over any policy.
    #[must_use]
    pub fn network(mut self, allow: bool) -> Self {
        self.network = allow;
        self
    }

    /// Where [`Profile::Standard`](crate::Profile::Standard) processes may
    /// connect: only through toolgate's proxy, as `policy` says (the
    /// [`NetworkPolicy`] rules), unless [`network`](Self::network) is
    /// `false`. It needs the full sandbox (namespaces); where that is
    /// missing, processes get no TCP where Landlock (ABI 4) can take it
    /// away, and [`Sandbox::network_status`] says what is in force. By
    /// default, none: the network is all or nothing.
    #[must_use]
    pub fn network_policy(mut self, policy: NetworkPolicy) -> Self {
        self.network_policy = Some(policy);
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

    /// More paths [`Profile::Standard`](crate::Profile::Standard) processes may write (absolute, or
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

    /// Absolute paths that no process may read, list or write, wherever
    /// they are: toolgate's own state (its configuration and data
    /// directories, the store, the audit file), which a workspace may hold
    /// (the home directory as a workspace holds `~/.config/toolgate`). By
    /// default, none; this adds to them.
    ///
    /// # Rules
    ///
    /// 1. Each path must be absolute: [`build`](Self::build) refuses a
    ///    relative one ([`SandboxError::PrivateNotAbsolute`]). It is taken
    ///    as it resolves on disk when the sandbox is built (symlinks
    ///    followed as far as the path exists). One that lies beneath
    ///    another is covered by it; one that holds the workspace is left out
    ///    (the person chose to work inside it).
    /// 2. With [`Level::Full`](crate::Level::Full), each one that exists when
    ///    a process starts is covered by the empty, unreadable mask (a file
    ///    or a directory), in every profile: under the home directory or
    ///    not, under a path shown again ([`readable`](Self::readable)) or a
    ///    writable one. The mask is a read-only mount, so it also refuses
    ///    writes, creation beneath it, renaming and removal, whatever
    ///    Landlock grants (Landlock grants by hierarchy and cannot carve a
    ///    path out of the workspace's grant; the mount can).
    /// 3. Inside the workspace, where processes write and may have left
    ///    symlinks, the mask is mounted through a descriptor opened beneath
    ///    the workspace without following any symlink, and every directory
    ///    between the workspace root and it is pinned (bound onto itself),
    ///    so that no process can redirect the mask, nor rename an ancestor
    ///    away and create a fresh `.config/toolgate` in its place.
    /// 4. A private path that does not exist when a process starts is not
    ///    masked, and a process that may write where it would be could
    ///    create it: the caller creates beforehand what must not be
    ///    creatable (toolgate's host creates its own directories `0700` and
    ///    files `0600` before building the sandbox). Outside the workspace,
    ///    `/tmp` and the writable paths, no process can create anything.
    /// 5. With [`Level::LandlockOnly`](crate::Level::LandlockOnly) and
    ///    [`Level::Off`](crate::Level::Off) nothing can be masked: the
    ///    [status](crate::Sandbox::status) says so in
    ///    [`missing`](crate::SandboxStatus::missing).
    #[must_use]
    pub fn private<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.private.extend(paths.into_iter().map(Into::into));
        self
    }

    /// How the environment is built. By default, [`EnvPolicy::new`]: the
    /// core variables only.
    #[must_use]
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env = policy;
        self
    }

    /// What every command tree may consume (see [`Limits`] for how each
    /// limit is enforced). By default, [`Limits::default`]: 512 processes
    /// and threads, half of RAM (at most 8 GiB) of memory, an hour of CPU
    /// time per process, 16 GiB per file, 8192 open files, and a quarter of
    /// RAM (at most 4 GiB) each for `/tmp` and `/dev/shm`.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
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
        if let Some(path) = self.private.iter().find(|p| !p.is_absolute()) {
            return Err(SandboxError::PrivateNotAbsolute { path: path.clone() });
        }
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
        Ok(Sandbox::from_parts(Parts {
            sight: Sight {
                workspace,
                home,
                home_readable: self.home_readable,
                deny_read: self.deny_read,
                readable: self.readable,
                writable: self.writable,
                private: self.private,
            },
            mode: self.mode,
            network: self.network,
            network_policy: self.network_policy,
            sensitive,
            protected,
            env,
            limits: self.limits,
            session: SessionDir::new(),
        }))
    }
}

/// What the view of the file system is made from, kept until the first
/// process needs it: the view reads the home directory, `/etc` and the
/// paths configured (a few hundred `stat`s and `readlink`s), which a
/// sandbox that never starts a process (a one-off `toolgate call` of a
/// tool that runs no program) never needs.
#[derive(Debug)]
pub(crate) struct Sight {
    /// The workspace, canonical.
    pub(crate) workspace: PathBuf,
    home: Option<PathBuf>,
    home_readable: Vec<String>,
    deny_read: Vec<PathBuf>,
    readable: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    private: Vec<PathBuf>,
}

impl Sight {
    /// The view, and the sanitised `~/.gitconfig` the session directory
    /// must hold for it.
    pub(crate) fn view(&self, session: &SessionDir) -> (View, Option<String>) {
        let (mut view, gitconfig) = make_view(
            &self.workspace,
            session,
            self.home.as_deref(),
            &self.home_readable,
            &self.deny_read,
            &self.readable,
            &self.writable,
        );
        (view.private_inside, view.private) = split_private(&self.workspace, &self.private);
        (view, gitconfig)
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

fn make_view(
    workspace: &Path,
    session: &SessionDir,
    home: Option<&Path>,
    home_readable: &[String],
    deny_read: &[PathBuf],
    readable: &[PathBuf],
    writable: &[PathBuf],
) -> (View, Option<String>) {
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
    let mut gitconfig_text = None;
    if let Some(home) = home {
        let user = home.join(".gitconfig");
        let under_cover = covered.iter().any(|c| user.starts_with(c));
        if under_cover && let Ok(text) = std::fs::read_to_string(&user) {
            gitconfig_text = Some(gitconfig::sanitize(&text));
            gitconfig = Some((
                session.gitconfig(),
                canonical(home.to_owned()).join(".gitconfig"),
            ));
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
    let view = View {
        workspace: workspace.to_owned(),
        tmp: session.tmp(),
        covered,
        readable: shown,
        writable,
        run_keep,
        gitconfig,
        deny,
        private: Vec::new(),
        private_inside: Vec::new(),
        uid: rustix::process::getuid().as_raw(),
        gid: rustix::process::getgid().as_raw(),
        landlock_abi: landlock::abi_version().max(0),
    };
    (view, gitconfig_text)
}

/// The private paths (rule 1 of [`SandboxBuilder::private`]), canonical:
/// those inside the workspace relative to it, and the others absolute.
fn split_private(workspace: &Path, paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut all: Vec<PathBuf> = paths.iter().map(|p| canonical_lenient(p)).collect();
    all.sort_by_key(|p| p.components().count());
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in all {
        if workspace.starts_with(&path) {
            tracing::warn!(
                private = %path.display(),
                workspace = %workspace.display(),
                "the workspace lies inside toolgate's own state; it is not masked"
            );
            continue;
        }
        if !kept.iter().any(|k| path.starts_with(k)) {
            kept.push(path);
        }
    }
    let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) =
        kept.into_iter().partition(|p| p.starts_with(workspace));
    let inside = inside
        .into_iter()
        .filter_map(|p| p.strip_prefix(workspace).ok().map(Path::to_path_buf))
        .collect();
    (inside, outside)
}

/// `path` with symlinks resolved as far as it exists, the missing rest
/// appended.
fn canonical_lenient(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => canonical_lenient(parent).join(name),
        _ => path.to_owned(),
    }
}

impl View {
    /// This view with more readable and writable paths (those that exist).
    pub(crate) fn with_extra(
        &self,
        readable: &[PathBuf],
        writable: &[PathBuf],
        home: Option<&Path>,
    ) -> Self {
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
