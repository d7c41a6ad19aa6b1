//! What runs in the child between `fork` and `exec`: the sandbox is built
//! here, by the child, for itself.
//!
//! # Why in `pre_exec`, and what that forbids
//!
//! The child of `fork` in a multi-threaded program (toolgate runs tokio) is a
//! copy with one thread; any lock another thread held at the fork stays held
//! forever, so the child may only make async-signal-safe calls until it
//! `exec`s: no allocation, no locks, no `std::io` buffers, no `tracing`
//! (`fork(2)`, `signal-safety(7)`). Everything below is therefore a sequence
//! of raw system calls over data the parent prepared in [`Plan`]: C strings,
//! flags, integers. Vectors are only read, or written in place through
//! indices (`fds`), never grown.
//!
//! Doing the work here instead of in a helper binary (as bubblewrap does)
//! saves two `exec`s per command — a millisecond or more on a small VM, which
//! is most of the budget for running `true` through the gate.
//!
//! # The sequence
//!
//! 0. Join the command tree's cgroups (write `0` to each `cgroup.procs`),
//!    before anything else, so every process the tree starts is born in
//!    them (see the `linux::cgroup` module). Then, with a network policy,
//!    join the sandbox's network namespace (and, to be allowed to, the user
//!    namespace that owns it): `setns`, see the `linux::netns` module.
//! 1. `unshare` new user, mount, PID and IPC namespaces (and a network
//!    namespace when the profile has no network). Mapping our own user and
//!    group ID into the new user namespace gives this process every
//!    capability *inside* it, which is what mounting needs; outside it, it
//!    gains nothing (`user_namespaces(7)`).
//! 2. Mount propagation is made private, so nothing we mount leaks back to
//!    the host, and nothing the host mounts later appears here.
//! 3. *Captures*: detached copies (`open_tree(OPEN_TREE_CLONE)`) of the
//!    trees that must stay visible — the workspace, the private temp
//!    directory, the allowed parts of the home directory, device nodes —
//!    taken before anything covers them.
//! 4. The whole tree becomes read-only, `nosuid` and `nodev` in one
//!    recursive `mount_setattr`.
//! 5. The *steps*: fresh `tmpfs`es over `/dev`, `/run` and the home
//!    directories, captures attached back where they belong
//!    (`move_mount`), the workspace's protected paths bound read-only onto
//!    themselves, sensitive paths covered by an empty, unreadable mask.
//!    Paths inside the workspace are opened with `openat2(RESOLVE_BENEATH |
//!    RESOLVE_NO_SYMLINKS)` and mounts are made onto those descriptors, so a
//!    symlink swapped in by another process cannot redirect a mount.
//! 6. `fork` again: a new PID namespace takes effect for children only. The
//!    first process stays outside as the *keeper*: it waits for the second
//!    and exits with its status, so the parent's `Child` handle and process
//!    group work as before, and killing the keeper kills everything (the
//!    second process has `PR_SET_PDEATHSIG`; when the namespace's first
//!    process dies, the kernel kills the rest).
//! 7. The second process is PID 1 of the new namespace. It mounts a fresh
//!    `/proc` (only its own processes are visible there), starts a new
//!    session (no controlling terminal: no `TIOCSTI` into the user's shell),
//!    drops every capability and the bounding set, sets `no_new_privs`
//!    (set-uid programs such as `sudo` gain nothing), applies the Landlock
//!    ruleset (which also forbids any later mount or unmount), marks every
//!    inherited descriptor close-on-exec, and changes to the working
//!    directory.
//! 8. The resource limits (`setrlimit`), last: `RLIMIT_NPROC` must come
//!    after the new user namespace, where the kernel counts this tree's
//!    tasks from zero, and a small `RLIMIT_NOFILE` must not stop the steps
//!    above from opening what they need. Then `std` calls `execve`.
//!
//! Any failure is written as `(step, errno)` to the report pipe, so the
//! parent can say which step failed, and `spawn` fails: a command never runs
//! in a half-built sandbox.
#![expect(
    unsafe_code,
    reason = "the sandbox is built with raw system calls between fork and exec"
)]

use std::ffi::CString;
use std::io;

use super::landlock::{self as ll, LandlockPlan};
use keeper::keeper_fork;
use sys::{bind_fd, open_target, set_attr, write_file};

mod keeper;
mod sys;

/// The mask mounted over sensitive files: an empty file nobody may read.
pub(crate) const MASK_FILE: &std::ffi::CStr = c"/dev/.toolgate-mask-file";
/// The mask mounted over sensitive directories: an empty directory nobody
/// may list.
pub(crate) const MASK_DIR: &std::ffi::CStr = c"/dev/.toolgate-mask-dir";

/// A detached copy of a host tree, taken before anything covers it.
#[derive(Debug)]
pub(crate) struct Capture {
    /// Absolute host path.
    pub(crate) path: CString,
    /// Copy the mounts beneath it too.
    pub(crate) recursive: bool,
    /// Mount attributes to set on the copy (`MOUNT_ATTR_*`).
    pub(crate) attr_set: u64,
}

/// One step of building the view (phase 5 in the module docs).
#[derive(Debug)]
pub(crate) enum Step {
    /// Mount a fresh tmpfs at `target` with `options` (`mode=0755`).
    Tmpfs { target: CString, options: CString },
    /// Mount a new devpts instance.
    Devpts { target: CString },
    /// Create a directory; an existing one is fine.
    Mkdir { path: CString, mode: libc::mode_t },
    /// Create an empty file (a mount point or a mask); an existing one is fine.
    Touch { path: CString, mode: libc::mode_t },
    /// Create a symlink.
    Symlink { target: CString, link: CString },
    /// Move capture `capture` onto `target`. A capture whose host path did
    /// not exist is skipped.
    Attach { capture: usize, target: CString },
    /// Change the attributes of the mount at `path`.
    SetAttr {
        path: CString,
        set: u64,
        clear: u64,
        recursive: bool,
    },
    /// Open the workspace (after it was attached); later steps with
    /// `beneath: true` resolve beneath it.
    OpenWorkspace { path: CString },
    /// Bind a path onto itself, read-only or not. A mount point cannot be
    /// renamed or removed, so this also pins it (and, for a directory, its
    /// name) in place. A path that has vanished is skipped.
    Rebind {
        path: CString,
        beneath: bool,
        read_only: bool,
    },
    /// Cover a path with the empty mask (file or directory). A path that
    /// has vanished is skipped.
    Mask {
        path: CString,
        beneath: bool,
        dir: bool,
    },
}

/// What the second process does before `exec` (phase 7).
#[derive(Debug)]
pub(crate) struct Finish {
    /// Mount a fresh `/proc` (inside a new PID namespace).
    pub(crate) mount_proc: bool,
    /// `setsid()`: leave the controlling terminal and the process group.
    pub(crate) new_session: bool,
    /// Drop every capability and the bounding set.
    pub(crate) drop_caps: bool,
    /// The Landlock ruleset, when the kernel has Landlock.
    pub(crate) landlock: Option<LandlockPlan>,
    /// Where to `chdir` once the view is built.
    pub(crate) cwd: CString,
}

/// What bounds the process's consumption: the cgroups it joins first and
/// the resource limits it sets last (phases 0 and 8 in the module docs).
#[derive(Debug, Default)]
pub(crate) struct Bounds {
    /// `cgroup.procs` files to write `0` to.
    pub(crate) cgroups: Vec<CString>,
    /// `(resource, soft, hard)` for `setrlimit`.
    pub(crate) rlimits: Vec<(rustix::process::Resource, u64, u64)>,
}

impl Bounds {
    /// The hard CPU time limit in seconds; 0 for none.
    fn cpu_hard(&self) -> u64 {
        self.rlimits
            .iter()
            .find(|(resource, ..)| *resource == rustix::process::Resource::Cpu)
            .map_or(0, |&(_, _, hard)| hard)
    }
}

/// Everything the child needs, prepared by the parent.
#[derive(Debug)]
pub(crate) struct Plan {
    /// `CLONE_NEW*` flags for `unshare`; 0 for a Landlock-only sandbox.
    pub(crate) unshare: libc::c_int,
    /// The user and network namespace descriptors to join before
    /// `unshare` (phase 0 in the module docs).
    pub(crate) join: Option<(libc::c_int, libc::c_int)>,
    /// Contents of `uid_map` and `gid_map` (`"1000 1000 1"`).
    pub(crate) uid_map: CString,
    pub(crate) gid_map: CString,
    pub(crate) captures: Vec<Capture>,
    pub(crate) steps: Vec<Step>,
    /// What the second process does; `None` without a sandbox (only the
    /// bounds apply).
    pub(crate) finish: Option<Finish>,
    pub(crate) bounds: Bounds,
    /// Write end of the report pipe (close-on-exec).
    pub(crate) report: libc::c_int,
}

/// Step numbers in reports that are not in `steps`.
pub(crate) mod phase {
    pub(crate) const UNSHARE: u32 = 10_000;
    pub(crate) const ID_MAP: u32 = 10_001;
    pub(crate) const PRIVATE: u32 = 10_002;
    pub(crate) const CAPTURE: u32 = 10_003;
    pub(crate) const READ_ONLY: u32 = 10_004;
    pub(crate) const FORK: u32 = 10_005;
    pub(crate) const PROC: u32 = 10_006;
    pub(crate) const SESSION: u32 = 10_007;
    pub(crate) const CAPS: u32 = 10_008;
    pub(crate) const LANDLOCK: u32 = 10_009;
    pub(crate) const CWD: u32 = 10_010;
    pub(crate) const DEATHSIG: u32 = 10_011;
    pub(crate) const CGROUP: u32 = 10_012;
    pub(crate) const RLIMIT: u32 = 10_013;
    pub(crate) const JOIN: u32 = 10_014;
}

/// A failure: which step, and the `errno`.
#[derive(Debug, Clone, Copy)]
struct Failed(u32, i32);

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn check(step: u32, ret: libc::c_long) -> Result<libc::c_long, Failed> {
    if ret < 0 {
        Err(Failed(step, errno()))
    } else {
        Ok(ret)
    }
}

fn check_int(step: u32, ret: libc::c_int) -> Result<libc::c_int, Failed> {
    check(step, libc::c_long::from(ret)).map(|_| ret)
}

/// A descriptor returned by `syscall` as a `long`.
fn check_fd(step: u32, ret: libc::c_long) -> Result<libc::c_int, Failed> {
    let ret = check(step, ret)?;
    libc::c_int::try_from(ret).map_err(|_| Failed(step, libc::EBADF))
}

/// Runs the plan in the child. `fds` has one slot per capture (filled here;
/// -1 when the captured path did not exist). On failure the step and `errno`
/// are written to the report pipe and the error is returned, so `spawn`
/// fails.
pub(crate) fn run(plan: &Plan, fds: &mut [libc::c_int]) -> io::Result<()> {
    match build(plan, fds) {
        Ok(()) => Ok(()),
        Err(Failed(step, code)) => {
            let mut record = [0u8; 8];
            record[..4].copy_from_slice(&step.to_ne_bytes());
            record[4..].copy_from_slice(&code.to_ne_bytes());
            // SAFETY: `write` on a descriptor we own, from a stack buffer of
            // the length given. A failed write only loses the detail.
            unsafe {
                libc::write(plan.report, record.as_ptr().cast(), record.len());
            }
            Err(io::Error::from_raw_os_error(code))
        }
    }
}

fn build(plan: &Plan, fds: &mut [libc::c_int]) -> Result<(), Failed> {
    for procs in &plan.bounds.cgroups {
        // SAFETY: `open`/`write`/`close` on a C string owned by the plan.
        unsafe { write_file(procs, c"0", phase::CGROUP)? };
    }
    if plan.unshare != 0 {
        namespaces(plan, fds)?;
        // `fork` for the PID namespace: only children enter it.
        if plan.unshare & libc::CLONE_NEWPID != 0 {
            keeper_fork(plan.bounds.cpu_hard())?;
        }
    }
    if let Some(last) = &plan.finish {
        finish(last)?;
    }
    for &(resource, soft, hard) in &plan.bounds.rlimits {
        // A raw `prlimit64` system call: no allocation.
        rustix::process::setrlimit(
            resource,
            rustix::process::Rlimit {
                current: Some(soft),
                maximum: Some(hard),
            },
        )
        .map_err(|e| Failed(phase::RLIMIT, e.raw_os_error()))?;
    }
    Ok(())
}

fn namespaces(plan: &Plan, fds: &mut [libc::c_int]) -> Result<(), Failed> {
    // SAFETY: every call below is a system call on C strings and integers
    // that live in `plan` for the duration of the call; none allocates.
    unsafe {
        // If toolgate dies, this process (the keeper, after the fork below)
        // dies with it, and takes the sandbox with it.
        check_int(
            phase::DEATHSIG,
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0),
        )?;
        if let Some((user, net)) = plan.join {
            // The user namespace first: joining the network namespace needs
            // a capability in our own user namespace too (`linux::netns`).
            if user >= 0 {
                check_int(phase::JOIN, libc::setns(user, libc::CLONE_NEWUSER))?;
            }
            check_int(phase::JOIN, libc::setns(net, libc::CLONE_NEWNET))?;
        }
        check_int(phase::UNSHARE, libc::unshare(plan.unshare))?;
        // A user namespace of our own gets our IDs mapped; without one (the
        // privileged variant, see `Sandbox::status`) there is nothing to map.
        if plan.unshare & libc::CLONE_NEWUSER != 0 {
            write_file(c"/proc/self/setgroups", c"deny", phase::ID_MAP)?;
            write_file(c"/proc/self/uid_map", &plan.uid_map, phase::ID_MAP)?;
            write_file(c"/proc/self/gid_map", &plan.gid_map, phase::ID_MAP)?;
        }
        check_int(
            phase::PRIVATE,
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ),
        )?;
        for (capture, slot) in plan.captures.iter().zip(fds.iter_mut()) {
            let mut flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC;
            if capture.recursive {
                flags |= libc::AT_RECURSIVE.cast_unsigned();
            }
            let fd = libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                capture.path.as_ptr(),
                flags,
            );
            if fd < 0 {
                let code = errno();
                if code == libc::ENOENT {
                    *slot = -1;
                    continue;
                }
                return Err(Failed(phase::CAPTURE, code));
            }
            *slot = check_fd(phase::CAPTURE, fd)?;
            if capture.attr_set != 0 {
                set_attr(
                    *slot,
                    c"",
                    libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
                    capture.attr_set,
                    0,
                    phase::CAPTURE,
                )?;
            }
        }
        set_attr(
            libc::AT_FDCWD,
            c"/",
            libc::AT_RECURSIVE,
            ll::MOUNT_ATTR_RDONLY | ll::MOUNT_ATTR_NOSUID | ll::MOUNT_ATTR_NODEV,
            0,
            phase::READ_ONLY,
        )?;
        let mut workspace: libc::c_int = -1;
        for (index, step) in plan.steps.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            run_step(step, index, fds, &mut workspace)?;
        }
        for fd in fds.iter() {
            if *fd >= 0 {
                libc::close(*fd);
            }
        }
        if workspace >= 0 {
            libc::close(workspace);
        }
    }
    Ok(())
}

unsafe fn run_step(
    step: &Step,
    index: u32,
    fds: &[libc::c_int],
    workspace: &mut libc::c_int,
) -> Result<(), Failed> {
    // SAFETY: each arm makes system calls on C strings owned by `step` and
    // descriptors owned by this process; none allocates.
    unsafe {
        match step {
            Step::Tmpfs { target, options } => {
                check_int(
                    index,
                    libc::mount(
                        c"tmpfs".as_ptr(),
                        target.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        options.as_ptr().cast(),
                    ),
                )?;
            }
            Step::Devpts { target } => {
                check_int(
                    index,
                    libc::mount(
                        c"devpts".as_ptr(),
                        target.as_ptr(),
                        c"devpts".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NOEXEC,
                        c"newinstance,ptmxmode=0666,mode=620".as_ptr().cast(),
                    ),
                )?;
            }
            Step::Mkdir { path, mode } => {
                // A directory that is already there (on a read-only mount,
                // say) is what was wanted.
                if libc::mkdir(path.as_ptr(), *mode) < 0
                    && libc::access(path.as_ptr(), libc::F_OK) < 0
                {
                    return Err(Failed(index, errno()));
                }
            }
            Step::Touch { path, mode } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                    libc::c_uint::from(*mode),
                );
                if fd < 0 {
                    let code = errno();
                    // A file that exists but may not be opened for writing
                    // (a read-only mount, mode 000) is still a mount point.
                    if code != libc::EEXIST && code != libc::EROFS && code != libc::EACCES {
                        return Err(Failed(index, code));
                    }
                } else {
                    libc::close(fd);
                }
            }
            Step::Symlink { target, link } => {
                if libc::symlink(target.as_ptr(), link.as_ptr()) < 0 && errno() != libc::EEXIST {
                    return Err(Failed(index, errno()));
                }
            }
            Step::Attach { capture, target } => {
                let Some(&fd) = fds.get(*capture) else {
                    return Err(Failed(index, libc::EINVAL));
                };
                if fd >= 0 {
                    check(
                        index,
                        libc::syscall(
                            libc::SYS_move_mount,
                            fd,
                            c"".as_ptr(),
                            libc::AT_FDCWD,
                            target.as_ptr(),
                            libc::MOVE_MOUNT_F_EMPTY_PATH,
                        ),
                    )?;
                }
            }
            Step::SetAttr {
                path,
                set,
                clear,
                recursive,
            } => {
                let flags = if *recursive { libc::AT_RECURSIVE } else { 0 };
                set_attr(libc::AT_FDCWD, path, flags, *set, *clear, index)?;
            }
            Step::OpenWorkspace { path } => {
                *workspace = check_int(
                    index,
                    libc::open(
                        path.as_ptr(),
                        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                    ),
                )?;
            }
            Step::Rebind {
                path,
                beneath,
                read_only,
            } => {
                if let Some(target) = open_target(path, *beneath, *workspace, index)? {
                    let attr = if *read_only { ll::MOUNT_ATTR_RDONLY } else { 0 };
                    let result = bind_fd(target, target, attr, index);
                    libc::close(target);
                    result?;
                }
            }
            Step::Mask { path, beneath, dir } => {
                if let Some(target) = open_target(path, *beneath, *workspace, index)? {
                    let source = libc::open(
                        if *dir { MASK_DIR } else { MASK_FILE }.as_ptr(),
                        libc::O_PATH | libc::O_CLOEXEC,
                    );
                    let result = if source < 0 {
                        Err(Failed(index, errno()))
                    } else {
                        let r = bind_fd(
                            source,
                            target,
                            ll::MOUNT_ATTR_RDONLY
                                | ll::MOUNT_ATTR_NOSUID
                                | ll::MOUNT_ATTR_NODEV
                                | ll::MOUNT_ATTR_NOEXEC,
                            index,
                        );
                        libc::close(source);
                        r
                    };
                    libc::close(target);
                    result?;
                }
            }
        }
    }
    Ok(())
}

/// `close_range(2)` as a raw system call: the C library's wrapper is only in
/// glibc 2.34 and later.
unsafe fn close_range(first: libc::c_uint, last: libc::c_uint, flags: libc::c_uint) {
    // SAFETY: the system call takes three integers and touches no memory.
    unsafe {
        libc::syscall(libc::SYS_close_range, first, last, flags);
    }
}

fn finish(finish: &Finish) -> Result<(), Failed> {
    // SAFETY: system calls on C strings owned by `finish` and stack
    // structures whose sizes are passed.
    unsafe {
        if finish.mount_proc {
            check_int(
                phase::PROC,
                libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ),
            )?;
        }
        if finish.new_session {
            check_int(phase::SESSION, libc::setsid())?;
        }
        if finish.drop_caps {
            drop_capabilities()?;
        }
        check_int(
            phase::LANDLOCK,
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        )?;
        if let Some(plan) = &finish.landlock {
            landlock(plan)?;
        }
        // Nothing toolgate holds open reaches the command.
        close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC);
        check_int(phase::CWD, libc::chdir(finish.cwd.as_ptr()))?;
    }
    Ok(())
}

/// Empties the bounding, ambient, effective, permitted and inheritable sets,
/// so that neither this process nor anything it `exec`s (set-uid root or
/// not) holds a capability, even inside its own user namespace.
unsafe fn drop_capabilities() -> Result<(), Failed> {
    // SAFETY: `prctl` with integer arguments; `capset` with stack structures
    // of the v3 layout.
    unsafe {
        let mut cap: libc::c_int = 0;
        loop {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 {
                match errno() {
                    // EINVAL: past the last capability the kernel knows.
                    // EPERM: without CAP_SETPCAP (a user's process outside
                    // a user namespace: the Landlock-only sandbox) the
                    // bounding set cannot be changed; it only matters to
                    // `execve` of a program with file capabilities, which
                    // `no_new_privs` (set before any `exec`) denies anyway.
                    libc::EINVAL | libc::EPERM => break,
                    code => return Err(Failed(phase::CAPS, code)),
                }
            }
            cap += 1;
        }
        check_int(
            phase::CAPS,
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            ),
        )?;
        let header = ll::CapHeader {
            version: ll::LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [ll::CapData::default(); 2];
        check(
            phase::CAPS,
            libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()),
        )?;
    }
    Ok(())
}

unsafe fn landlock(plan: &LandlockPlan) -> Result<(), Failed> {
    // SAFETY: Landlock system calls with stack structures whose sizes are
    // passed, and `open`/`fstat`/`close` on C strings owned by `plan`.
    unsafe {
        let attr = ll::RulesetAttr {
            handled_access_fs: plan.handled_fs,
            handled_access_net: plan.handled_net,
            scoped: plan.scoped,
        };
        let ruleset = check_fd(
            phase::LANDLOCK,
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const attr,
                plan.attr_size,
                0u32,
            ),
        )?;
        for rule in &plan.rules {
            let fd = libc::open(rule.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                if errno() == libc::ENOENT {
                    continue;
                }
                return Err(Failed(phase::LANDLOCK, errno()));
            }
            let mut stat: libc::stat = std::mem::zeroed();
            let mut access = rule.access & plan.handled_fs;
            if libc::fstat(fd, &raw mut stat) == 0 && stat.st_mode & libc::S_IFMT != libc::S_IFDIR {
                access &= ll::FILE_ACCESS;
            }
            let beneath = ll::PathBeneath {
                allowed_access: access,
                parent_fd: fd,
            };
            let ret = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                ll::RULE_PATH_BENEATH,
                &raw const beneath,
                0u32,
            );
            let code = errno();
            libc::close(fd);
            if ret < 0 {
                return Err(Failed(phase::LANDLOCK, code));
            }
        }
        check(
            phase::LANDLOCK,
            libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32),
        )?;
        libc::close(ruleset);
    }
    Ok(())
}

/// Reads a failure record from the report pipe's read end, if the child
/// wrote one.
pub(crate) fn read_report(read: &std::os::fd::OwnedFd) -> Option<(u32, i32)> {
    let mut record = [0u8; 8];
    let n = rustix::io::read(read, &mut record).ok()?;
    if n != record.len() {
        return None;
    }
    let step = u32::from_ne_bytes(record[..4].try_into().ok()?);
    let code = i32::from_ne_bytes(record[4..].try_into().ok()?);
    Some((step, code))
}
