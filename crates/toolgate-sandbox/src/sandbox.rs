//! [`Sandbox`]: the one way toolgate starts a process.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolgate_core::PathPatterns;

use crate::builder::{SandboxBuilder, SandboxMode, Sight};
use crate::limits::Limits;
use crate::linux::bounds::Enforcement;
use crate::linux::child::{self, Bounds, Plan};
use crate::linux::plan::{self, Dynamic, Strictness, View};
use crate::net::SandboxNet;
use crate::placeholder::{Kind, Lease, Placeholders};
use crate::session::SessionDir;
use crate::spawn::{Profile, Spawn, shell_path};
use crate::status::{Level, SandboxStatus};
use crate::{
    NetworkAttachment, NetworkConsent, NetworkObserver, NetworkPolicy, NetworkStatus, SandboxError,
    resolve, scan,
};

/// What a builder hands over.
pub(crate) struct Parts {
    pub(crate) sight: Sight,
    pub(crate) mode: SandboxMode,
    pub(crate) network: bool,
    pub(crate) network_policy: Option<NetworkPolicy>,
    pub(crate) sensitive: PathPatterns,
    pub(crate) protected: PathPatterns,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) limits: Limits,
    pub(crate) session: SessionDir,
}

#[derive(Debug)]
struct Inner {
    sight: Sight,
    /// Made from `sight` when first needed, with the sanitised
    /// `~/.gitconfig` for the session directory.
    view: OnceLock<(View, Option<String>)>,
    mode: SandboxMode,
    net: SandboxNet,
    sensitive: PathPatterns,
    protected: PathPatterns,
    env: BTreeMap<String, String>,
    limits: Limits,
    status: OnceLock<SandboxStatus>,
    /// Whether processes get a user namespace of their own: false when
    /// user namespaces are refused here but toolgate may make the other
    /// namespaces directly (decided with the status).
    new_user: std::sync::atomic::AtomicBool,
    /// How the limits are enforced: decided with the status.
    enforcement: OnceLock<Enforcement>,
    placeholders: Arc<Placeholders>,
    scanner: scan::Scanner,
    session: SessionDir,
}

impl Inner {
    /// The view and the sanitised `~/.gitconfig`, made on first use.
    fn viewed(&self) -> &(View, Option<String>) {
        self.view.get_or_init(|| self.sight.view(&self.session))
    }

    fn view(&self) -> &View {
        &self.viewed().0
    }
}

/// The one way toolgate starts a process: every command, background
/// process, hook, quality gate and MCP server goes through a `Sandbox`.
///
/// Cheap to clone (an [`Arc`] inside). Its private session directory is
/// removed when the last clone is dropped.
///
/// # Rules
///
/// Every process started through a sandbox with [`Level::Full`]:
///
/// 1. has its environment built by the [`EnvPolicy`](crate::EnvPolicy), not inherited;
/// 2. sees the file system read-only, except the workspace, a private
///    `/tmp` and the configured writable paths ([`Profile::Standard`]); or
///    nothing writable but `/dev/null` ([`Profile::ReadOnly`]). `/tmp` and
///    `/dev/shm` are tmpfses of the command tree's own, of the sizes the
///    [`Limits`] set: not shared with other commands (files one command
///    leaves for the next belong in the workspace), gone when the tree
///    ends, and full at the cap (`ENOSPC`) rather than filling memory;
/// 3. cannot read the workspace's sensitive files, the home directory
///    (except [`DEFAULT_HOME_READABLE`](crate::DEFAULT_HOME_READABLE) and a sanitised `~/.gitconfig`), the
///    [home secrets](crate::DEFAULT_HOME_SECRETS) and [system
///    secrets](crate::DEFAULT_SYSTEM_SECRETS), nor anything under `/run` but name
///    resolution: each is covered by an empty, unreadable mask or tmpfs;
/// 4. cannot change, create, rename or remove a protected path
///    (`toolgate.yaml`, `.toolgate/`, `.git/config`, `.git/hooks/`, the
///    configured ones): each is mounted read-only, over an empty placeholder
///    where it did not exist;
/// 5. can neither read nor change toolgate's own state
///    ([`SandboxBuilder::private`]), wherever it lies, the workspace
///    included: each private path that exists is covered by the mask, and
///    its ancestors inside the workspace are pinned in place;
/// 6. sees only its own processes (PID namespace, fresh `/proc`), has no
///    controlling terminal, holds no capability, cannot gain privileges
///    (`no_new_privs`), cannot signal or connect to abstract sockets
///    outside its Landlock domain (ABI 6), cannot mount anything;
/// 7. has no network when read-only or configured so (its own network
///    namespace, plus Landlock's TCP rules);
/// 8. dies with toolgate, and everything it started dies with it;
/// 9. is bounded, with everything it starts, by the [`Limits`]: processes
///    and memory per command tree (a cgroup where toolgate can make one,
///    else resource limits), CPU time, file size and open files per
///    process (resource limits), `/tmp` and `/dev/shm` by their size.
///
/// With [`Level::LandlockOnly`], only writes are confined (rule 2, without
/// the private tmpfses) and rules 1, 8 and 9 hold; with [`Level::Off`],
/// rules 1 and 9. [`SandboxStatus::missing`] lists the rest, toolgate's own
/// state among it, and [`SandboxStatus::limits`] how each limit is enforced
/// here.
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
    pub(crate) lease: Lease,
}

impl Running {
    /// The process and what it holds, to keep together as long as it runs.
    pub fn into_parts(self) -> (tokio::process::Child, Lease) {
        (self.child, self.lease)
    }
}

impl Sandbox {
    pub(crate) fn from_parts(parts: Parts) -> Self {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        Self {
            inner: Arc::new(Inner {
                sight: parts.sight,
                view: OnceLock::new(),
                mode: parts.mode,
                net: SandboxNet::new(parts.network, parts.network_policy, uid, gid),
                sensitive: parts.sensitive,
                protected: parts.protected,
                env: parts.env,
                limits: parts.limits,
                status: OnceLock::new(),
                new_user: std::sync::atomic::AtomicBool::new(true),
                enforcement: OnceLock::new(),
                placeholders: Arc::new(Placeholders::new()),
                scanner: scan::Scanner::default(),
                session: parts.session,
            }),
        }
    }

    /// Starts configuring a sandbox for `workspace`.
    pub fn builder(workspace: impl Into<PathBuf>) -> SandboxBuilder {
        SandboxBuilder::new(workspace.into())
    }

    /// The workspace, canonical.
    pub fn workspace(&self) -> &Path {
        &self.inner.sight.workspace
    }

    /// Whether processes of the standard profile may reach the network,
    /// directly or through the proxy of a [`NetworkPolicy`] (the read-only
    /// profile never may).
    pub fn network(&self) -> bool {
        self.inner.net.any()
    }

    /// Which network mode standard processes are in, and whether a
    /// configured domain policy is in force. With a policy, the first call
    /// makes the network namespace and starts the proxy (a few
    /// milliseconds).
    pub fn network_status(&self) -> NetworkStatus {
        let status = self.status();
        self.inner.net.status(status, self.new_user())
    }

    /// Whether processes get user namespaces of their own (see
    /// [`SandboxStatus::namespaces`]).
    fn new_user(&self) -> bool {
        self.inner
            .new_user
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Who is asked about unlisted hosts (`consent`; `None`: they are
    /// refused) and who hears of every connection (`observer`), for as long
    /// as the returned value lives. The newest attachment alive is used.
    /// Without a [`NetworkPolicy`] nothing is ever asked or told.
    pub fn attach_network(
        &self,
        consent: Option<Arc<dyn NetworkConsent>>,
        observer: Option<Arc<dyn NetworkObserver>>,
    ) -> NetworkAttachment {
        self.inner.net.attach(consent, observer)
    }

    /// What every command tree may consume.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Whether `/tmp` and `/dev/shm` are capped tmpfses here.
    pub(crate) fn tmpfs_capped(&self) -> bool {
        self.inner.enforcement.get().is_some_and(Enforcement::tmpfs)
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
            let mut status = self.probe();
            let enforcement = Enforcement::new(status.level);
            let (limits, missing) = enforcement.status(&self.inner.limits);
            status.limits = limits;
            status.missing.extend(missing);
            let _ = self.inner.enforcement.set(enforcement);
            if status.level != Level::Full || !status.missing.is_empty() {
                // Said once per sandbox: what the kernel does not enforce here.
                tracing::warn!("sandbox: {status}");
            }
            status
        })
    }

    fn probe(&self) -> SandboxStatus {
        let mut status = self.probe_level();
        if status.level != Level::Full
            && let Some(line) = self.own_state_exposed(status.level)
        {
            status.missing.push(line);
        }
        status
    }

    /// What a sandbox below [`Level::Full`] leaves of toolgate's own state
    /// (rule 5 of [`SandboxBuilder::private`]): never silently.
    fn own_state_exposed(&self, level: Level) -> Option<String> {
        let view = self.inner.view();
        if view.private.is_empty() && view.private_inside.is_empty() {
            return None;
        }
        let writable = !view.private_inside.is_empty()
            || view
                .private
                .iter()
                .any(|p| view.writable.iter().any(|w| p.starts_with(w)));
        Some(if level == Level::Off {
            "toolgate's own configuration and data (user configuration, trust store, store, \
             audit) are not hidden: commands can read and change them"
                .to_owned()
        } else if writable {
            "toolgate's own configuration and data (user configuration, trust store, store, \
             audit) are not hidden: commands can read them, and change them where they lie in \
             the workspace or a writable path"
                .to_owned()
        } else {
            "toolgate's own configuration and data (user configuration, trust store, store, \
             audit) are not hidden: commands can read them"
                .to_owned()
        })
    }

    fn probe_level(&self) -> SandboxStatus {
        let abi = self.inner.view().landlock_abi;
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
        let landlock_only = |mut missing: Vec<String>, why: String, namespaces: String| {
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
                    limits: Vec::new(),
                    namespaces,
                }
            } else {
                missing.push("this kernel has no Landlock: nothing is confined".to_owned());
                SandboxStatus {
                    level: Level::Off,
                    landlock_abi: 0,
                    missing,
                    limits: Vec::new(),
                    namespaces,
                }
            }
        };
        match self.inner.mode {
            SandboxMode::Off => SandboxStatus {
                level: Level::Off,
                landlock_abi: abi,
                missing: vec!["the sandbox is switched off by configuration".to_owned()],
                limits: Vec::new(),
                namespaces: "none: the sandbox is switched off by configuration".to_owned(),
            },
            SandboxMode::LandlockOnly => landlock_only(
                missing,
                "namespaces are switched off by configuration (sandbox: landlock)".to_owned(),
                "none: switched off by configuration (sandbox: landlock)".to_owned(),
            ),
            SandboxMode::Full if self.inner.sight.workspace == Path::new("/") => landlock_only(
                missing,
                "the workspace is `/`, which leaves nothing to confine".to_owned(),
                "none: the workspace is `/`".to_owned(),
            ),
            SandboxMode::Full => {
                let full = |namespaces: String| SandboxStatus {
                    level: Level::Full,
                    landlock_abi: abi,
                    missing: missing.clone(),
                    limits: Vec::new(),
                    namespaces,
                };
                let error = match self.try_full() {
                    Ok(()) => {
                        return full("a user namespace of each command's own".to_owned());
                    }
                    Err(error) => error,
                };
                let why = crate::userns::refused_because(&toolgate_core::error_chain(&error));
                // Where user namespaces are refused but toolgate may make
                // the other namespaces itself (root, or the root of a
                // container), the full sandbox needs no user namespace.
                if crate::userns::has_sys_admin() {
                    self.set_new_user(false);
                    if self.try_full().is_ok() {
                        return full(format!(
                            "mount, PID, IPC and network namespaces made directly: user \
                             namespaces are refused here ({why}), and toolgate holds \
                             CAP_SYS_ADMIN"
                        ));
                    }
                    self.set_new_user(true);
                }
                landlock_only(
                    missing,
                    format!("user namespaces are not usable here ({why})"),
                    format!(
                        "none: user namespaces are refused here ({why}); {}",
                        crate::userns::remedy()
                    ),
                )
            }
        }
    }

    fn set_new_user(&self, yes: bool) {
        self.inner
            .new_user
            .store(yes, std::sync::atomic::Ordering::Relaxed);
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
    /// workspace and is not bounded by the limits (they are decided with
    /// its result).
    fn prepare_at(
        &self,
        spawn: &Spawn,
        level: Level,
        scan: bool,
    ) -> Result<Prepared, SandboxError> {
        let inner = &self.inner;
        let (view, gitconfig) = inner.viewed();
        inner.session.ensure(gitconfig.as_deref())?;
        let mut env = inner.env.clone();
        for (name, value) in &spawn.env {
            env.insert(name.clone(), value.clone());
        }
        let net = inner.net.for_process(
            level,
            matches!(spawn.profile, Profile::Standard),
            self.new_user(),
        );
        env.extend(net.env.iter().cloned());
        let cwd = spawn
            .cwd
            .clone()
            .unwrap_or_else(|| inner.sight.workspace.clone());
        let mut command = tokio::process::Command::new(&spawn.program);
        command
            .args(&spawn.args)
            .env_clear()
            .envs(&env)
            .current_dir(&cwd)
            .process_group(0)
            .kill_on_drop(true);
        let program = spawn.program_name();
        let (bounds, tree) = match inner.enforcement.get().filter(|_| scan) {
            Some(enforcement) => enforcement.bounds(&inner.limits)?,
            None => (Bounds::default(), None),
        };
        if level == Level::Off {
            let (read, write) = report_pipe()?;
            let plan = Arc::new(plan::bounds_only(bounds, write.as_raw_fd()));
            install_plan(&mut command, &plan, write, None);
            return Ok(Prepared {
                command,
                lease: Lease::empty().with_tree(tree),
                report: Some((read, plan)),
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
                    path: inner.sight.workspace.clone(),
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
                .scan(&inner.sight.workspace, &inner.sensitive, &inner.protected)
                .map_err(|source| SandboxError::Scan {
                    workspace: inner.sight.workspace.clone(),
                    source,
                })?
        } else {
            scan::Found::default()
        };
        let mut protected = found.protected;
        protected.extend(extra_protected);
        protected.sort();
        protected.dedup();
        let private = if level == Level::Full {
            self.private_inside()?
        } else {
            Vec::new()
        };
        let pinned: Vec<PathBuf> = protected
            .iter()
            .cloned()
            .chain(private.iter().map(|(path, _)| path.clone()))
            .collect();
        let pins = scan::pins(&pinned);
        let (read, write) = report_pipe()?;
        let dynamic = Dynamic {
            strictness,
            network: net.network,
            join: net.join,
            new_user: self.new_user(),
            executables: &executables,
            sensitive: &found.sensitive,
            sensitive_outside: &found.sensitive_outside,
            private: &private,
            pins: &pins,
            protected: &protected,
            cwd: &cwd,
            tmp_size: inner.limits.get(crate::Limit::TmpSize),
            shm_size: inner.limits.get(crate::Limit::ShmSize),
        };
        let extended;
        let view = if spawn.readable.is_empty() && spawn.writable.is_empty() {
            view
        } else {
            extended = view.with_extra(
                &spawn.readable,
                &spawn.writable,
                env.get("HOME").map(Path::new),
            );
            &extended
        };
        let mut plan = if level == Level::Full {
            plan::build(view, &dynamic, write.as_raw_fd())?
        } else {
            plan::landlock_only(view, &dynamic, write.as_raw_fd())?
        };
        plan.bounds = bounds;
        let plan = Arc::new(plan);
        // The namespace descriptors must stay open until the child joined.
        install_plan(&mut command, &plan, write, net.keep);
        Ok(Prepared {
            command,
            lease: lease.with_tree(tree),
            report: Some((read, plan)),
            program,
        })
    }

    /// The private paths inside the workspace that exist now, and whether
    /// each is a directory (rule 3 of [`SandboxBuilder::private`]). One that
    /// has become a symlink cannot carry a mask: no process is started.
    fn private_inside(&self) -> Result<Vec<(PathBuf, bool)>, SandboxError> {
        let view = self.inner.view();
        let mut out = Vec::new();
        for rel in &view.private_inside {
            let path = view.workspace.join(rel);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(SandboxError::PrivateReplaced { path });
                }
                Ok(meta) => out.push((rel.clone(), meta.is_dir())),
                Err(_) => {}
            }
        }
        Ok(out)
    }

    /// The policy paths that must exist (as placeholders if need be) so a
    /// process cannot create them; and whether `.git` itself is protected
    /// whole (it is missing, or a `gitdir:` file).
    fn placeholders_wanted(&self) -> (Vec<(PathBuf, Kind)>, bool) {
        let ws = &self.inner.sight.workspace;
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

/// The pipe the child reports a failed step on: (read end, write end).
fn report_pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK)
        .map_err(|e| SandboxError::Session(e.into()))
}

/// Has the child replay `plan` between `fork` and `exec`, reporting a
/// failure on `report_write`.
fn install_plan(
    command: &mut tokio::process::Command,
    plan: &Arc<Plan>,
    report_write: OwnedFd,
    keep_net: Option<Arc<crate::net::NsProxy>>,
) {
    let child_plan = Arc::clone(plan);
    let mut fds: Vec<libc::c_int> = vec![-1; plan.captures.len()];
    // The write end must stay open until the child has run, and the network
    // namespace's descriptors until it joined: they move into the closure,
    // which lives as long as the command.
    install(command, move || {
        let _keep = (&report_write, &keep_net);
        child::run(&child_plan, &mut fds)
    });
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
