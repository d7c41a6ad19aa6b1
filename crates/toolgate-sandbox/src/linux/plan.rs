//! Turning a profile into the child's [`Plan`]: which trees stay visible,
//! what is covered, what is read-only, what Landlock allows.
//!
//! Everything here runs in the parent, so it may allocate and fail with a
//! typed error; the child only replays the result.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use super::child::{Bounds, Capture, Finish, MASK_DIR, MASK_FILE, Plan, Step};
use super::landlock::{
    self as ll, EXECUTE, IOCTL_DEV, LandlockPlan, READ_DIR, READ_FILE, TRUNCATE, WRITE_FILE,
};
use crate::SandboxError;

/// Device nodes bound into the sandbox's own `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// The part of the view that is the same for every process of a sandbox.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// The workspace, canonical.
    pub(crate) workspace: PathBuf,
    /// The host directory a Landlock-only sandbox writes as its temp
    /// directory (the full sandbox mounts a private tmpfs on `/tmp`).
    pub(crate) tmp: PathBuf,
    /// Directories hidden behind an empty tmpfs (`/home`, `/root`, `$HOME`).
    pub(crate) covered: Vec<PathBuf>,
    /// Paths under covered directories shown again, read-only.
    pub(crate) readable: Vec<PathBuf>,
    /// Paths outside the workspace that stay writable.
    pub(crate) writable: Vec<PathBuf>,
    /// Paths under `/run` shown again, read-only (`/run` is covered).
    pub(crate) run_keep: Vec<PathBuf>,
    /// A sanitised `.gitconfig` (host file) and where it appears.
    pub(crate) gitconfig: Option<(PathBuf, PathBuf)>,
    /// Absolute paths covered by the mask wherever they are visible.
    pub(crate) deny: Vec<PathBuf>,
    /// Private paths outside the workspace (absolute, canonical): masked
    /// wherever visible, checked again for each process.
    pub(crate) private: Vec<PathBuf>,
    /// Private paths inside the workspace (relative to it, canonical).
    pub(crate) private_inside: Vec<PathBuf>,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// The kernel's Landlock ABI (0: none).
    pub(crate) landlock_abi: i32,
}

/// How strict a process's profile is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// Reads only: no writes but `/dev/null`, no network, `execve` of the
    /// listed files only.
    ReadOnly,
    /// Writes beneath the workspace, the private `/tmp` and the configured
    /// writable paths.
    Standard,
}

/// What differs per process.
#[derive(Debug)]
pub(crate) struct Dynamic<'a> {
    pub(crate) strictness: Strictness,
    pub(crate) network: bool,
    /// The sandbox's network namespace to join, `(user, net)` descriptors
    /// (see `linux::netns`; `user` is -1 when there is no user namespace to
    /// join first); then `network` is its network.
    pub(crate) join: Option<(libc::c_int, libc::c_int)>,
    /// Whether the process gets a user namespace of its own. Without one
    /// (user namespaces refused here, and toolgate holding `CAP_SYS_ADMIN`
    /// in its own: root, or a container's root), the other namespaces are
    /// made directly (see `Sandbox::status`).
    pub(crate) new_user: bool,
    /// For [`Strictness::ReadOnly`]: the files it may `execve`.
    pub(crate) executables: &'a [PathBuf],
    /// Workspace-relative paths to cover with the mask: (path, is a directory).
    pub(crate) sensitive: &'a [(PathBuf, bool)],
    /// Absolute paths outside the workspace to cover (sensitive files'
    /// symlink targets): (path, is a directory).
    pub(crate) sensitive_outside: &'a [(PathBuf, bool)],
    /// Workspace-relative private paths that exist now, to cover with the
    /// mask: (path, is a directory). Their ancestors are among `pins`.
    pub(crate) private: &'a [(PathBuf, bool)],
    /// Workspace-relative directories to pin in place (ancestors of
    /// protected paths), shallowest first.
    pub(crate) pins: &'a [PathBuf],
    /// Workspace-relative paths to make read-only.
    pub(crate) protected: &'a [PathBuf],
    /// The working directory (absolute).
    pub(crate) cwd: &'a Path,
    /// The sizes of the private `/tmp` and `/dev/shm` tmpfses, in bytes.
    pub(crate) tmp_size: u64,
    pub(crate) shm_size: u64,
}

pub(crate) fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::NulInPath {
        path: path.to_owned(),
    })
}

fn cstr_bytes(bytes: &[u8], path: &Path) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|_| SandboxError::NulInPath {
        path: path.to_owned(),
    })
}

/// The covering mount a path lies under, if any: the deepest of `/tmp`,
/// `/dev`, `/run` and the covered directories that is a proper ancestor.
fn cover_of<'a>(path: &Path, covers: &'a [PathBuf]) -> Option<&'a Path> {
    covers
        .iter()
        .filter(|c| path != c.as_path() && path.starts_with(c))
        .max_by_key(|c| c.components().count())
        .map(PathBuf::as_path)
}

/// Steps that create the directories between `cover` and `target` (and
/// `target` itself: a directory, or an empty file when `file`).
fn mount_point(
    steps: &mut Vec<Step>,
    cover: &Path,
    target: &Path,
    file: bool,
) -> Result<(), SandboxError> {
    let Ok(rest) = target.strip_prefix(cover) else {
        return Ok(());
    };
    let mut at = cover.to_path_buf();
    let parts: Vec<&OsStr> = rest.iter().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts.len();
        if last && file {
            steps.push(Step::Touch {
                path: cstring(&at)?,
                mode: 0o644,
            });
        } else {
            steps.push(Step::Mkdir {
                path: cstring(&at)?,
                mode: 0o755,
            });
        }
    }
    Ok(())
}

/// Builds the plan for one process.
pub(crate) fn build(
    view: &View,
    dynamic: &Dynamic<'_>,
    report: libc::c_int,
) -> Result<Plan, SandboxError> {
    let read_only = dynamic.strictness == Strictness::ReadOnly;
    let mut unshare = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if dynamic.new_user {
        unshare |= libc::CLONE_NEWUSER;
    }
    let join = dynamic.join.filter(|_| !read_only);
    if join.is_none() && (!dynamic.network || read_only) {
        unshare |= libc::CLONE_NEWNET;
    }
    let locked = ll::MOUNT_ATTR_NOSUID | ll::MOUNT_ATTR_NODEV;
    let ro = locked | ll::MOUNT_ATTR_RDONLY;

    let mut captures: Vec<Capture> = Vec::new();
    let mut capture =
        |path: &Path, recursive: bool, attr_set: u64| -> Result<usize, SandboxError> {
            captures.push(Capture {
                path: cstring(path)?,
                recursive,
                attr_set,
            });
            Ok(captures.len() - 1)
        };

    // The mounts that cover something, and what is shown again beneath.
    let mut covers: Vec<PathBuf> = vec![
        PathBuf::from("/dev"),
        PathBuf::from("/run"),
        PathBuf::from("/tmp"),
    ];
    covers.extend(view.covered.iter().cloned());

    // (capture, target, is a file) to attach, in order of depth.
    let mut attaches: Vec<(usize, PathBuf, bool)> = Vec::new();
    for device in DEVICES {
        let path = Path::new("/dev").join(device);
        let index = capture(&path, false, ll::MOUNT_ATTR_NOSUID | ll::MOUNT_ATTR_NOEXEC)?;
        attaches.push((index, path, true));
    }
    for keep in &view.run_keep {
        attaches.push((capture(keep, true, ro)?, keep.clone(), false));
    }
    for path in &view.readable {
        attaches.push((capture(path, true, ro)?, path.clone(), false));
    }
    if let Some((host, target)) = &view.gitconfig {
        attaches.push((capture(host, false, ro)?, target.clone(), true));
    }
    if !read_only {
        for path in &view.writable {
            attaches.push((capture(path, true, locked)?, path.clone(), false));
        }
    }
    let ws_attr = if read_only { ro } else { locked };
    attaches.push((
        capture(&view.workspace, true, ws_attr)?,
        view.workspace.clone(),
        false,
    ));
    attaches.sort_by_key(|(_, target, _)| target.components().count());

    // A fresh /dev: the devices a program expects and nothing else (no
    // disks), ptys from a private devpts, a private /dev/shm, and the masks.
    let mut steps = vec![
        Step::Tmpfs {
            target: c"/dev".into(),
            options: c"mode=0755,size=64k".into(),
        },
        Step::Mkdir {
            path: c"/dev/pts".into(),
            mode: 0o755,
        },
        Step::Mkdir {
            path: c"/dev/shm".into(),
            mode: 0o1777,
        },
        Step::Touch {
            path: MASK_FILE.into(),
            mode: 0,
        },
        Step::Mkdir {
            path: MASK_DIR.into(),
            mode: 0,
        },
    ];
    for (target, link) in [
        ("/proc/self/fd", "/dev/fd"),
        ("/proc/self/fd/0", "/dev/stdin"),
        ("/proc/self/fd/1", "/dev/stdout"),
        ("/proc/self/fd/2", "/dev/stderr"),
        ("pts/ptmx", "/dev/ptmx"),
    ] {
        steps.push(Step::Symlink {
            target: cstring(Path::new(target))?,
            link: cstring(Path::new(link))?,
        });
    }
    // Sockets of the user's session (D-Bus, systemd, Docker, SSH agents)
    // live under /run; only the listed parts (DNS resolution) stay.
    steps.push(Step::Tmpfs {
        target: c"/run".into(),
        options: c"mode=0755,size=64k".into(),
    });
    // Each command tree has a /tmp of its own, of a fixed size, so it can
    // fill neither the disk nor memory through it (the kernel refuses the
    // write with ENOSPC at the cap). It is not shared with other commands:
    // files one command leaves for the next belong in the workspace.
    // Read-only processes get it read-only, once the mount points beneath
    // it (a workspace under /tmp) exist: see the end of the steps.
    steps.push(Step::Tmpfs {
        target: c"/tmp".into(),
        options: cstr_bytes(
            format!("mode=1777,size={}", dynamic.tmp_size).as_bytes(),
            Path::new("/tmp"),
        )?,
    });
    for dir in &view.covered {
        steps.push(Step::Tmpfs {
            target: cstring(dir)?,
            options: c"mode=0755,size=64k".into(),
        });
    }
    for (index, target, file) in &attaches {
        if let Some(cover) = cover_of(target, &covers) {
            mount_point(&mut steps, cover, target, *file)?;
        }
        steps.push(Step::Attach {
            capture: *index,
            target: cstring(target)?,
        });
    }
    steps.push(Step::Devpts {
        target: c"/dev/pts".into(),
    });
    steps.push(Step::Tmpfs {
        target: c"/dev/shm".into(),
        options: cstr_bytes(
            format!("mode=1777,size={}", dynamic.shm_size).as_bytes(),
            Path::new("/dev/shm"),
        )?,
    });
    // What was built on the tmpfses is fixed now.
    let tmp = read_only.then_some(Path::new("/tmp"));
    for dir in [Path::new("/dev"), Path::new("/run")]
        .into_iter()
        .chain(view.covered.iter().map(PathBuf::as_path))
        .chain(tmp)
    {
        steps.push(Step::SetAttr {
            path: cstring(dir)?,
            set: ll::MOUNT_ATTR_RDONLY,
            clear: 0,
            recursive: false,
        });
    }

    steps.push(Step::OpenWorkspace {
        path: cstring(&view.workspace)?,
    });
    if !read_only {
        for pin in dynamic.pins {
            steps.push(Step::Rebind {
                path: cstring(pin)?,
                beneath: true,
                read_only: false,
            });
        }
        for path in dynamic.protected {
            steps.push(Step::Rebind {
                path: cstring(path)?,
                beneath: true,
                read_only: true,
            });
        }
    }
    for (path, dir) in dynamic.sensitive {
        steps.push(Step::Mask {
            path: cstring(path)?,
            beneath: true,
            dir: *dir,
        });
    }
    for (path, dir) in dynamic.private {
        steps.push(Step::Mask {
            path: cstring(path)?,
            beneath: true,
            dir: *dir,
        });
    }
    for (path, dir) in dynamic.sensitive_outside {
        steps.push(Step::Mask {
            path: cstring(path)?,
            beneath: false,
            dir: *dir,
        });
    }
    // Private paths last: beneath every capture shown again, over every
    // other mask. A path that does not exist now has nothing to hide (rule
    // 4 of `SandboxBuilder::private`).
    for path in view.deny.iter().chain(&view.private) {
        // Whether it is a directory is only known on the host; a secret that
        // is not there now needs no mask.
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        steps.push(Step::Mask {
            path: cstring(path)?,
            beneath: false,
            dir: meta.is_dir(),
        });
    }

    let landlock = (view.landlock_abi > 0).then(|| landlock_rules(view, dynamic));
    let landlock = landlock.transpose()?;
    Ok(Plan {
        unshare,
        join,
        // Only a new user namespace gets maps (written by the child).
        uid_map: if dynamic.new_user {
            cstr_bytes(
                format!("{0} {0} 1", view.uid).as_bytes(),
                Path::new("uid_map"),
            )?
        } else {
            CString::default()
        },
        gid_map: if dynamic.new_user {
            cstr_bytes(
                format!("{0} {0} 1", view.gid).as_bytes(),
                Path::new("gid_map"),
            )?
        } else {
            CString::default()
        },
        captures,
        steps,
        finish: Some(Finish {
            mount_proc: true,
            new_session: true,
            drop_caps: true,
            landlock,
            cwd: cstring(dynamic.cwd)?,
        }),
        bounds: Bounds::default(),
        report,
    })
}

fn landlock_rules(view: &View, dynamic: &Dynamic<'_>) -> Result<LandlockPlan, SandboxError> {
    let read_only = dynamic.strictness == Strictness::ReadOnly;
    let mut plan = LandlockPlan::new(view.landlock_abi, !dynamic.network || read_only);
    let all = ll::fs_rights(view.landlock_abi);
    let device = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV;
    if read_only {
        plan.allow(c"/".into(), READ_FILE | READ_DIR);
        for file in dynamic.executables {
            plan.allow(cstring(file)?, EXECUTE | READ_FILE);
        }
        for device in ["/dev/null", "/dev/zero", "/dev/full"] {
            plan.allow(
                cstring(Path::new(device))?,
                READ_FILE | WRITE_FILE | TRUNCATE,
            );
        }
    } else {
        plan.allow(c"/".into(), READ_FILE | READ_DIR | EXECUTE);
        plan.allow(cstring(&view.workspace)?, all);
        plan.allow(c"/tmp".into(), all);
        plan.allow(c"/dev/shm".into(), all);
        plan.allow(c"/dev".into(), device | READ_DIR);
        for path in &view.writable {
            plan.allow(cstring(path)?, all);
        }
    }
    Ok(plan)
}

/// A Landlock-only plan, for kernels without usable user namespaces: writes
/// confined, signals and abstract sockets scoped (ABI 6), nothing hidden.
pub(crate) fn landlock_only(
    view: &View,
    dynamic: &Dynamic<'_>,
    report: libc::c_int,
) -> Result<Plan, SandboxError> {
    let read_only = dynamic.strictness == Strictness::ReadOnly;
    let landlock = if view.landlock_abi > 0 {
        let mut plan = LandlockPlan::new(view.landlock_abi, !dynamic.network || read_only);
        let all = ll::fs_rights(view.landlock_abi);
        if read_only {
            plan.allow(c"/".into(), READ_FILE | READ_DIR);
            for file in dynamic.executables {
                plan.allow(cstring(file)?, EXECUTE | READ_FILE);
            }
            plan.allow(c"/dev/null".into(), READ_FILE | WRITE_FILE | TRUNCATE);
        } else {
            plan.allow(c"/".into(), READ_FILE | READ_DIR | EXECUTE);
            plan.allow(cstring(&view.workspace)?, all);
            plan.allow(cstring(&view.tmp)?, all);
            plan.allow(
                c"/dev".into(),
                READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV | READ_DIR,
            );
            for path in &view.writable {
                plan.allow(cstring(path)?, all);
            }
        }
        Some(plan)
    } else {
        None
    };
    Ok(Plan {
        unshare: 0,
        join: None,
        uid_map: CString::default(),
        gid_map: CString::default(),
        captures: Vec::new(),
        steps: Vec::new(),
        finish: Some(Finish {
            mount_proc: false,
            new_session: false,
            drop_caps: true,
            landlock,
            cwd: cstring(dynamic.cwd)?,
        }),
        bounds: Bounds::default(),
        report,
    })
}

/// A plan without a sandbox (`SandboxMode::Off`): only the bounds apply.
pub(crate) fn bounds_only(bounds: Bounds, report: libc::c_int) -> Plan {
    Plan {
        unshare: 0,
        join: None,
        uid_map: CString::default(),
        gid_map: CString::default(),
        captures: Vec::new(),
        steps: Vec::new(),
        finish: None,
        bounds,
        report,
    }
}

/// A human name for a failed step, for error messages.
pub(crate) fn describe_step(plan_steps: &[Step], step: u32) -> String {
    use super::child::phase;
    match step {
        phase::UNSHARE => "creating the namespaces (unshare)".to_owned(),
        phase::JOIN => "joining the sandbox's network namespace (setns)".to_owned(),
        phase::ID_MAP => "mapping the user and group IDs".to_owned(),
        phase::PRIVATE => "making mounts private".to_owned(),
        phase::CAPTURE => "copying the visible trees (open_tree)".to_owned(),
        phase::READ_ONLY => "making the file system read-only (mount_setattr)".to_owned(),
        phase::FORK => "starting the namespace's first process".to_owned(),
        phase::PROC => "mounting /proc".to_owned(),
        phase::SESSION => "starting a new session".to_owned(),
        phase::CAPS => "dropping capabilities".to_owned(),
        phase::LANDLOCK => "applying the Landlock ruleset".to_owned(),
        phase::CWD => "changing to the working directory".to_owned(),
        phase::DEATHSIG => "tying the process to its parent".to_owned(),
        phase::CGROUP => "joining the command's cgroup".to_owned(),
        phase::RLIMIT => "setting the resource limits (setrlimit)".to_owned(),
        n => match plan_steps.get(n as usize) {
            Some(step) => format!("{step:?}"),
            None => format!("step {n}"),
        },
    }
}
