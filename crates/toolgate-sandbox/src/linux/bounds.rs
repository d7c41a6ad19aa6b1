//! Turning [`Limits`] into what the child applies ([`Bounds`]) and into
//! what the status says, at the sandbox's level and toolgate's user (see
//! the [`limits`](crate::limits) module docs for the rules).

use std::os::unix::fs::MetadataExt as _;
use std::sync::Arc;

use rustix::process::Resource;

use super::cgroup::{self, Found, Root, Tree};
use super::child::Bounds;
use crate::status::{Level, LimitStatus};
use crate::{Limit, Limits, SandboxError};

/// How the limits are enforced for one sandbox, decided once.
#[derive(Debug)]
pub(crate) struct Enforcement {
    root: Option<Arc<Root>>,
    found: Found,
    /// User ID 0 of the initial user namespace: exempt from
    /// `RLIMIT_NPROC`.
    real_root: bool,
    level: Level,
}

/// Whether this process is root of the initial user namespace (not root of
/// a container's user namespace, whose tasks the kernel counts as another
/// user's).
fn is_real_root() -> bool {
    rustix::process::getuid().is_root()
        && std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|map| {
            map.lines().any(|line| {
                let mut fields = line.split_whitespace();
                fields.next() == Some("0") && fields.next() == Some("0")
            })
        })
}

impl Enforcement {
    /// Finds (and makes) toolgate's cgroups, for a sandbox at `level`.
    pub(crate) fn new(level: Level) -> Self {
        let (root, found) = cgroup::root();
        Self {
            root,
            found,
            real_root: is_real_root(),
            level,
        }
    }

    /// Whether `/tmp` and `/dev/shm` are private, capped tmpfses.
    pub(crate) fn tmpfs(&self) -> bool {
        self.level == Level::Full
    }

    /// The status of each limit, and what is not enforced (for
    /// [`SandboxStatus::missing`](crate::SandboxStatus::missing)).
    pub(crate) fn status(&self, limits: &Limits) -> (Vec<LimitStatus>, Vec<String>) {
        let mut missing = Vec::new();
        let statuses = Limit::ALL
            .iter()
            .map(|&limit| {
                let amount = effective(limits, limit).map_or_else(
                    || limits.show(limit),
                    |v| {
                        crate::limits::show_value(limit, v)
                            + if v < limits.get(limit) {
                                " (toolgate's own hard limit)"
                            } else {
                                ""
                            }
                    },
                );
                let (value, enforced, how) = self.describe(limit, &amount, &mut missing);
                LimitStatus {
                    limit,
                    value,
                    enforced,
                    how,
                }
            })
            .collect();
        (statuses, missing)
    }

    fn describe(
        &self,
        limit: Limit,
        amount: &str,
        missing: &mut Vec<String>,
    ) -> (String, bool, String) {
        let per_process = format!("{amount} per process");
        match limit {
            Limit::Processes => {
                let value = format!("{amount} per command");
                match (&self.found.pids, self.real_root, self.level) {
                    (Ok(version), ..) => (value, true, format!("{} pids.max", version.name())),
                    (Err(_), false, Level::Full) => (
                        value,
                        true,
                        "RLIMIT_NPROC in the command's own user namespace".to_owned(),
                    ),
                    (Err(why), false, _) => (
                        value,
                        true,
                        format!(
                            "RLIMIT_NPROC above the user's task count at the start, so \
                             approximate; no cgroup: {why}"
                        ),
                    ),
                    (Err(why), true, _) => {
                        let how = format!(
                            "toolgate runs as root, which RLIMIT_NPROC exempts, and no cgroup \
                             can be made: {why}"
                        );
                        missing.push(format!("processes are not limited: {how}"));
                        (value, false, how)
                    }
                }
            }
            Limit::Memory => match &self.found.memory {
                Ok(version) => (
                    format!("{amount} per command"),
                    true,
                    format!(
                        "{} {}, and RLIMIT_DATA per process",
                        version.name(),
                        match version {
                            cgroup::Version::V1 => "memory.limit_in_bytes",
                            cgroup::Version::V2 => "memory.max",
                        }
                    ),
                ),
                Err(why) => {
                    missing.push(format!(
                        "memory is limited per process (RLIMIT_DATA), not per command: {why}"
                    ));
                    (
                        format!("{amount} per command"),
                        false,
                        format!("only per process, by RLIMIT_DATA; no cgroup: {why}"),
                    )
                }
            },
            Limit::CpuTime => (per_process, true, "RLIMIT_CPU".to_owned()),
            Limit::FileSize => (
                format!("{amount} per file"),
                true,
                "RLIMIT_FSIZE".to_owned(),
            ),
            Limit::OpenFiles => (per_process, true, "RLIMIT_NOFILE".to_owned()),
            Limit::TmpSize | Limit::ShmSize => {
                let dir = if limit == Limit::TmpSize {
                    "/tmp"
                } else {
                    "/dev/shm"
                };
                if self.tmpfs() {
                    (
                        format!("{amount} per command"),
                        true,
                        "a private tmpfs of that size".to_owned(),
                    )
                } else {
                    let how =
                        format!("{dir} is the host's, without the full sandbox's mount namespace");
                    missing.push(format!("{dir} is not size-capped: {how}"));
                    (format!("{amount} per command"), false, how)
                }
            }
        }
    }

    /// The bounds of one command tree: its cgroups (made here, removed when
    /// the returned tree is dropped) and the resource limits.
    pub(crate) fn bounds(&self, limits: &Limits) -> Result<(Bounds, Option<Tree>), SandboxError> {
        // In the full sandbox, the keeper outside the PID namespace is one
        // more task of the tree, in its cgroup and its user namespace.
        let keeper = u64::from(self.level == Level::Full);
        let processes = limits.get(Limit::Processes).saturating_add(keeper);
        let tree = match &self.root {
            Some(root) => Some(
                root.tree(processes, limits.get(Limit::Memory))
                    .map_err(SandboxError::Cgroup)?,
            ),
            None => None,
        };
        let mut rlimits = Vec::new();
        let mut set = |resource: Resource, soft: u64, hard: u64| {
            let ceiling = rustix::process::getrlimit(resource)
                .maximum
                .unwrap_or(u64::MAX);
            rlimits.push((resource, soft.min(ceiling), hard.min(ceiling)));
        };
        if !self.real_root {
            let nproc = if self.level == Level::Full {
                processes
            } else {
                user_tasks().saturating_add(limits.get(Limit::Processes))
            };
            set(Resource::Nproc, nproc, nproc);
        }
        let memory = limits.get(Limit::Memory);
        set(Resource::Data, memory, memory);
        let cpu = limits.get(Limit::CpuTime);
        set(Resource::Cpu, cpu, cpu.saturating_add(1));
        let fsize = limits.get(Limit::FileSize);
        set(Resource::Fsize, fsize, fsize);
        let nofile = limits.get(Limit::OpenFiles);
        set(Resource::Nofile, nofile, nofile);
        let cgroups = tree
            .as_ref()
            .map(|t| t.procs().to_vec())
            .unwrap_or_default();
        Ok((Bounds { cgroups, rlimits }, tree))
    }
}

/// The value a resource limit gets here: the configured one, or
/// toolgate's own hard limit where that is lower. `None` for the limits
/// that are not resource limits.
fn effective(limits: &Limits, limit: Limit) -> Option<u64> {
    let resource = match limit {
        Limit::Memory => Resource::Data,
        Limit::CpuTime => Resource::Cpu,
        Limit::FileSize => Resource::Fsize,
        Limit::OpenFiles => Resource::Nofile,
        _ => return None,
    };
    let ceiling = rustix::process::getrlimit(resource)
        .maximum
        .unwrap_or(u64::MAX);
    Some(limits.get(limit).min(ceiling))
}

/// The tasks (processes and threads) of toolgate's user, as
/// `RLIMIT_NPROC` counts them: from the owners of `/proc/PID` and the
/// link counts of `/proc/PID/task` (two plus the threads).
fn user_tasks() -> u64 {
    let uid = rustix::process::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut count: u64 = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let path = entry.path();
        if std::fs::metadata(&path).is_ok_and(|m| m.uid() == uid) {
            let threads = std::fs::metadata(path.join("task"))
                .map_or(1, |m| m.nlink().saturating_sub(2).max(1));
            count = count.saturating_add(threads);
        }
    }
    count
}
