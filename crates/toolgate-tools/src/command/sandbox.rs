//! The OS sandbox for commands: Landlock on Linux.
//!
//! # What it enforces
//!
//! A sandboxed command may read and execute anything the user can, but may
//! only *write* beneath the workspace, the temp directory (`$TMPDIR` or
//! `/tmp`) and `/dev/null`. With `network: deny` it may not open TCP
//! connections nor bind TCP ports (Landlock ABI 4 and later; UDP and Unix
//! sockets are not covered by Landlock, and that is said in the status).
//! Everything the command starts inherits the restriction, and nothing can
//! lift it: a Landlock domain only ever gets narrower.
//!
//! # How
//!
//! Landlock (<https://docs.kernel.org/userspace-api/landlock.html>) is a
//! stackable LSM that an unprivileged process applies to itself. The ruleset
//! is built in the parent, with the `landlock` crate: it opens the allowed
//! directories and registers them on a ruleset file descriptor. The child,
//! after `fork` and before `exec`, only makes two system calls:
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self(fd)`. Both are
//! async-signal-safe, which is all that may run between `fork` and `exec` in
//! a multi-threaded process (no allocation, no locks; see `fork(2)` and
//! `signal-safety(7)`). The ruleset descriptor is close-on-exec, so the
//! command never sees it.
//!
//! # When the kernel has no Landlock
//!
//! [`SandboxStatus`] says so. The caller decides, from configuration, whether
//! to run unsandboxed (with a warning, said once) or refuse (`required`).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr,
};

/// The newest Landlock ABI whose file-system rights we ask for (ABI 5 adds
/// `IOCTL_DEV`).
const FS_ABI: ABI = ABI::V5;
/// The first ABI with TCP rules.
const NET_ABI: ABI = ABI::V4;

/// What the kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Landlock works; the number is the kernel's ABI version.
    Available(i32),
    /// The kernel was built without Landlock, or it is not enabled at boot
    /// (`lsm=` does not list it).
    Unavailable,
}

impl SandboxStatus {
    /// Asks the running kernel.
    pub fn detect() -> Self {
        let version = landlock_abi_version();
        if version > 0 {
            Self::Available(version)
        } else {
            Self::Unavailable
        }
    }

    /// Whether TCP can be denied (ABI 4 and later).
    pub fn can_deny_network(self) -> bool {
        matches!(self, Self::Available(v) if v >= 4)
    }

    /// A sentence for people.
    pub fn describe(self) -> String {
        match self {
            Self::Available(v) => format!("Landlock ABI {v}"),
            Self::Unavailable => {
                "this kernel has no usable Landlock (not built in, or not enabled at boot), \
                 so commands cannot be confined to the workspace"
                    .to_owned()
            }
        }
    }
}

/// Queries the kernel's Landlock ABI version; 0 or less when unavailable.
#[expect(
    unsafe_code,
    reason = "the Landlock version query is a raw system call"
)]
fn landlock_abi_version() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: `landlock_create_ruleset(NULL, 0, VERSION)` reads no memory
    // (null attribute, size 0) and creates no descriptor; it only returns
    // the ABI version or -1 with errno set.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(-1)
}

/// A ready-to-apply restriction for one child process.
#[derive(Debug)]
pub struct Restriction {
    ruleset: OwnedFd,
}

impl Restriction {
    /// Builds the ruleset: read and execute everywhere, write beneath
    /// `writable` (directories that do not exist are skipped), TCP denied
    /// when `deny_network`.
    pub fn new(writable: &[PathBuf], deny_network: bool) -> io::Result<Self> {
        let read = AccessFs::from_read(FS_ABI);
        let all = AccessFs::from_all(FS_ABI);
        let mut ruleset = Ruleset::default()
            // On a kernel with an older ABI, rights it does not know are
            // left unhandled (so unrestricted) instead of failing: the
            // restriction is as strong as the kernel allows, and
            // `SandboxStatus` reports the ABI so that people know.
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(io::Error::other)?;
        if deny_network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(NET_ABI))
                .map_err(io::Error::other)?;
        }
        let mut created = ruleset
            .create()
            .map_err(io::Error::other)?
            .add_rule(PathBeneath::new(
                PathFd::new("/").map_err(io::Error::other)?,
                read,
            ))
            .map_err(io::Error::other)?;
        for dir in writable {
            if !dir.exists() {
                continue;
            }
            let fd = PathFd::new(dir).map_err(io::Error::other)?;
            created = created
                .add_rule(PathBeneath::new(fd, all))
                .map_err(io::Error::other)?;
        }
        // Commands routinely write to /dev/null (`2>/dev/null`).
        if Path::new("/dev/null").exists() {
            let fd = PathFd::new("/dev/null").map_err(io::Error::other)?;
            let file_rights = AccessFs::ReadFile | AccessFs::WriteFile;
            created = created
                .add_rule(PathBeneath::new(fd, file_rights))
                .map_err(io::Error::other)?;
        }
        let ruleset: Option<OwnedFd> = created.into();
        let ruleset = ruleset.ok_or_else(|| {
            io::Error::new(io::ErrorKind::Unsupported, "Landlock is not available")
        })?;
        Ok(Self { ruleset })
    }

    /// Arranges for `command`'s child to restrict itself before `exec`.
    #[expect(unsafe_code, reason = "pre_exec runs code between fork and exec")]
    pub fn apply_to(&self, command: &mut tokio::process::Command) {
        let fd = self.ruleset.as_raw_fd();
        // SAFETY: the closure runs in the child between fork and exec, where
        // only async-signal-safe operations are allowed. It makes two system
        // calls through libc and builds an `io::Error` from errno (no
        // allocation for OS errors), touching no locks and no heap. `fd`
        // stays open in the child until exec (close-on-exec), because the
        // parent keeps `self` alive until `spawn` returns.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::exec::{Spec, run};
    use std::time::Duration;

    async fn sandboxed(
        command: &str,
        cwd: &Path,
        writable: &[PathBuf],
        deny_network: bool,
    ) -> (Option<i32>, String) {
        let restriction = Restriction::new(writable, deny_network).unwrap();
        let spec = Spec {
            command,
            cwd,
            env: &[],
            timeout: Duration::from_secs(10),
            max_lines: 50,
            restriction: Some(&restriction),
        };
        let finished = run(&spec).await.unwrap();
        (
            finished.exit_code,
            format!("{}{}", finished.stdout, finished.stderr),
        )
    }

    #[tokio::test]
    async fn writes_are_confined_to_the_allowed_directories() {
        let status = SandboxStatus::detect();
        let SandboxStatus::Available(_) = status else {
            // Said loudly: on such a kernel the sandbox cannot be tested, and
            // the tool refuses or warns at run time instead.
            eprintln!("SKIPPED: {}", status.describe());
            return;
        };
        // Under /var/tmp: outside /tmp, which the sandbox leaves writable.
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let workspace = tempfile::tempdir_in("/var/tmp").unwrap();
        let writable = [workspace.path().to_owned()];

        let (code, out) = sandboxed(
            "echo inside > made.txt && cat made.txt",
            workspace.path(),
            &writable,
            false,
        )
        .await;
        assert_eq!((code, out.as_str()), (Some(0), "inside"));

        let target = outside.path().join("x");
        let cases = [
            format!("touch {}", target.display()),
            format!("echo data > {}", target.display()),
            format!("mkdir {}", outside.path().join("d").display()),
            format!("cd {} && touch y", outside.path().display()),
            "touch /tmp/../etc/toolgate-sandbox-probe".to_owned(),
            format!("HOME={} sh -c 'touch $HOME/x'", outside.path().display()),
        ];
        for command in &cases {
            let (code, out) = sandboxed(command, workspace.path(), &writable, false).await;
            assert_ne!(code, Some(0), "{command} must fail in the sandbox: {out}");
            assert!(
                out.contains("Permission denied") || out.contains("not permitted"),
                "{command}: {out}"
            );
        }
        assert!(
            std::fs::read_dir(outside.path()).unwrap().next().is_none(),
            "nothing was written outside"
        );
        assert!(!Path::new("/etc/toolgate-sandbox-probe").exists());

        // Reading outside is allowed.
        std::fs::write(outside.path().join("readable"), "r").unwrap();
        let (code, out) = sandboxed(
            &format!("cat {}", outside.path().join("readable").display()),
            workspace.path(),
            &writable,
            false,
        )
        .await;
        assert_eq!((code, out.as_str()), (Some(0), "r"));
    }

    #[tokio::test]
    async fn network_deny_blocks_tcp() {
        let status = SandboxStatus::detect();
        if !status.can_deny_network() {
            eprintln!("SKIPPED: {} (TCP rules need ABI 4)", status.describe());
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let workspace = tempfile::tempdir().unwrap();
        let writable = [workspace.path().to_owned()];
        // bash's /dev/tcp opens a TCP connection without any other tool.
        let probe = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo connected");
        let (code, out) = sandboxed(&probe, workspace.path(), &writable, false).await;
        assert_eq!(
            (code, out.as_str()),
            (Some(0), "connected"),
            "allowed when not denied"
        );
        let (code, out) = sandboxed(&probe, workspace.path(), &writable, true).await;
        assert_ne!(code, Some(0), "{out}");
        assert!(!out.contains("connected"), "{out}");
    }
}
