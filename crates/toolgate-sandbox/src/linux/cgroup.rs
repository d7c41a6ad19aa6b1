//! Cgroups for command trees: where toolgate may make them, one per tree,
//! its limits, what its counters say afterwards, and its removal.
//!
//! # Where
//!
//! A cgroup limits a whole tree of processes however they fork, and root is
//! not exempt from it (it is from `RLIMIT_NPROC`). toolgate makes its
//! cgroups under the one it runs in (`/proc/self/cgroup`), in a
//! `toolgate-PID` directory of its own, one numbered cgroup per command
//! tree beneath that:
//!
//! - **cgroup v1** (one hierarchy per controller, `pids` and `memory`
//!   mounted under `/sys/fs/cgroup/pids` and `/sys/fs/cgroup/memory`):
//!   creating a directory is enough; root may, others only where the
//!   directory was delegated to them. Limits: `pids.max`,
//!   `memory.limit_in_bytes` and, with swap accounting,
//!   `memory.memsw.limit_in_bytes` (memory plus swap) set to the same.
//! - **cgroup v2** (one hierarchy; `cgroup.controllers` lists what may be
//!   used): a controller reaches a child only once enabled in the parent's
//!   `cgroup.subtree_control`, which the kernel refuses while the parent
//!   holds processes of its own ("no internal processes", see
//!   <https://docs.kernel.org/admin-guide/cgroup-v2.html>). toolgate's own
//!   cgroup holds toolgate, so when toolgate is the only process in it (a
//!   `systemd-run --user --scope -p Delegate=yes` scope, or a service), it
//!   moves itself into `toolgate-PID/toolgate` first, as container runtimes
//!   do. Limits: `pids.max`, `memory.max`, and `memory.swap.max` 0.
//!
//! The cgroup is made by the parent before the fork; the child joins it
//! first thing, by writing `0` ("myself") to its `cgroup.procs`, before it
//! makes namespaces or starts anything, so every process of the tree is
//! born inside. Stale `toolgate-PID` directories of toolgate processes that
//! are gone are removed when the next one starts.
//!
//! # Counters
//!
//! After a run, `pids.events` says how often a fork was refused at
//! `pids.max`, and `memory.events` (v2) or `memory.oom_control` (v1) how
//! often the kernel killed a process of the tree because it was out of
//! memory: the result can then name the limit for certain.
//!
//! # Removal
//!
//! A cgroup can be removed (`rmdir`) once no process is left in it. The
//! runner kills the tree's process group when a run ends; in the full
//! sandbox the kernel then kills the whole PID namespace. Processes that
//! left the group (without a PID namespace, a `setsid` daemon) are killed
//! through the cgroup: `cgroup.kill` on v2, each process in `cgroup.procs`
//! on v1 (a process ID read there can in theory be reused before the
//! signal, if the PID space wraps around in between). The runner waits (a
//! few seconds at most) for processes still dying, so a run has left
//! nothing behind when its result is there; a tree dropped otherwise (a
//! background session, an MCP server) leaves that to a helper thread.
//!
//! Making and removing a memory cgroup costs a few tenths of a
//! millisecond, a tenth of the budget of a command such as `true`. So a
//! few empty sets of a finished tree's cgroups are kept for the next trees
//! (counters are compared with what they were when a tree took the set,
//! limits rewritten when they differ); the rest are removed, and the spares
//! with `toolgate-PID` when the last sandbox goes.

use std::ffi::CString;
use std::fs;
use std::io::{self, Write as _};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use mounts::{locate, parse_membership, parse_mounts};

mod mounts;

/// Which cgroup interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

impl Version {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::V1 => "cgroup v1",
            Self::V2 => "cgroup v2",
        }
    }
}

/// Where toolgate's own cgroup is for a controller, or why there is none.
type Place = Result<(Version, PathBuf), String>;

/// Whether each controller toolgate uses is available, and if not why.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) pids: Result<Version, String>,
    pub(crate) memory: Result<Version, String>,
}

/// One hierarchy toolgate makes cgroups in.
#[derive(Debug)]
struct Hierarchy {
    version: Version,
    pids: bool,
    memory: bool,
    /// `toolgate-PID` in it.
    base: PathBuf,
}

/// toolgate's cgroups, shared by every sandbox of the process.
#[derive(Debug)]
pub(crate) struct Root {
    hierarchies: Vec<Hierarchy>,
    found: Found,
    /// Empty cgroups of finished trees, kept for the next ones.
    spares: Mutex<Vec<Set>>,
}

/// How many empty sets of cgroups are kept for reuse.
const SPARES: usize = 4;

/// One cgroup of a command tree, in one hierarchy.
#[derive(Debug)]
struct Group {
    dir: PathBuf,
    version: Version,
    pids: bool,
    memory: bool,
    /// The counters when the tree took it: a reused cgroup has a past.
    refused: u64,
    killed: u64,
}

/// A command tree's cgroups, one per hierarchy, and the limits written in
/// them (processes, memory).
#[derive(Debug)]
struct Set {
    groups: Vec<Group>,
    procs: Vec<CString>,
    limits: (u64, u64),
}

/// The cgroups of one command tree; removed (or kept for the next tree,
/// once empty) on drop.
#[derive(Debug)]
pub(crate) struct Tree {
    set: Set,
    root: Arc<Root>,
}

/// What a tree's counters say.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counters {
    /// `Some(refused)` where a cgroup limits processes: whether a fork was
    /// refused at the limit.
    pub(crate) pids: Option<bool>,
    /// `Some(killed)` where a cgroup limits memory: whether a process was
    /// killed for want of memory.
    pub(crate) memory: Option<bool>,
}

static SHARED: Mutex<Option<(Weak<Root>, Option<Found>)>> = Mutex::new(None);

/// The number of the next set of cgroups this process makes.
static NEXT_SET: AtomicU64 = AtomicU64::new(1);

/// toolgate's cgroups (made on first use, kept while a sandbox uses them),
/// and what is available. `None` when no controller can be used.
pub(crate) fn root() -> (Option<Arc<Root>>, Found) {
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((weak, found)) = shared.as_ref() {
        if let Some(root) = weak.upgrade() {
            let found = root.found.clone();
            return (Some(root), found);
        }
        // Nothing usable last time: the answer does not change.
        if let Some(found) = found {
            return (None, found.clone());
        }
    }
    let (hierarchies, found) = set_up();
    if hierarchies.is_empty() {
        *shared = Some((Weak::new(), Some(found.clone())));
        return (None, found);
    }
    let root = Arc::new(Root {
        hierarchies,
        found: found.clone(),
        spares: Mutex::new(Vec::new()),
    });
    *shared = Some((Arc::downgrade(&root), None));
    (Some(root), found)
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

fn words(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Finds the hierarchies, removes stale directories, and makes
/// `toolgate-PID` in each.
fn set_up() -> (Vec<Hierarchy>, Found) {
    let mounts = fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mounts(&t))
        .unwrap_or_default();
    let membership = fs::read_to_string("/proc/self/cgroup")
        .map(|t| parse_membership(&t))
        .unwrap_or_default();
    let mut wanted: Vec<(&str, Place)> = ["pids", "memory"]
        .into_iter()
        .map(|c| (c, locate(&mounts, &membership, c)))
        .collect();
    // On v2 a controller must also be available to toolgate's cgroup.
    for (controller, place) in &mut wanted {
        if let Ok((Version::V2, dir)) = place
            && !words(&dir.join("cgroup.controllers"))
                .iter()
                .any(|c| c == controller)
        {
            *place = Err(format!(
                "the {controller} controller is not available in {} (cgroup v2)",
                dir.display()
            ));
        }
    }
    let mut hierarchies: Vec<Hierarchy> = Vec::new();
    let mut errors: Vec<(PathBuf, String)> = Vec::new();
    for (controller, place) in &wanted {
        let Ok((version, dir)) = place else { continue };
        if let Some(h) = hierarchies
            .iter_mut()
            .find(|h| h.base.parent() == Some(dir.as_path()))
        {
            h.pids |= *controller == "pids";
            h.memory |= *controller == "memory";
            continue;
        }
        hierarchies.push(Hierarchy {
            version: *version,
            pids: *controller == "pids",
            memory: *controller == "memory",
            base: dir.join(format!("toolgate-{}", std::process::id())),
        });
    }
    hierarchies.retain(|h| {
        let parent = h.base.parent().unwrap_or(Path::new("/"));
        remove_stale(parent);
        match make_base(h) {
            Ok(()) => true,
            Err(why) => {
                errors.push((parent.to_owned(), why));
                false
            }
        }
    });
    let result = |controller: &str, place: &Place| match place {
        Err(why) => Err(why.clone()),
        Ok((version, dir)) => match errors.iter().find(|(d, _)| d == dir) {
            Some((_, why)) => Err(why.clone()),
            None if hierarchies.iter().any(|h| {
                h.base.parent() == Some(dir.as_path())
                    && if controller == "pids" {
                        h.pids
                    } else {
                        h.memory
                    }
            }) =>
            {
                Ok(*version)
            }
            None => Err(format!("no {controller} cgroup could be made")),
        },
    };
    let found = Found {
        pids: result("pids", &wanted[0].1),
        memory: result("memory", &wanted[1].1),
    };
    (hierarchies, found)
}

/// Makes `toolgate-PID`; on v2, with the controllers enabled for the
/// cgroups beneath it.
fn make_base(h: &Hierarchy) -> Result<(), String> {
    let parent = h.base.parent().unwrap_or(Path::new("/"));
    let cannot = |what: &str, e: &io::Error| {
        let hint = if e.kind() == io::ErrorKind::PermissionDenied {
            "; toolgate is not root and this cgroup is not delegated to it"
        } else {
            ""
        };
        format!("cannot {what} in {}: {e}{hint}", parent.display())
    };
    if h.version == Version::V1 {
        return match fs::create_dir(&h.base) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(cannot("create a cgroup", &e)),
        };
    }
    let mut enable = String::new();
    for (on, name) in [(h.pids, "pids"), (h.memory, "memory")] {
        if on {
            enable.push_str(if enable.is_empty() { "+" } else { " +" });
            enable.push_str(name);
        }
    }
    let subtree = parent.join("cgroup.subtree_control");
    let enabled = words(&subtree);
    let missing = (h.pids && !enabled.iter().any(|c| c == "pids"))
        || (h.memory && !enabled.iter().any(|c| c == "memory"));
    match fs::create_dir(&h.base) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(cannot("create a cgroup", &e)),
    }
    if missing && let Err(e) = write(&subtree, &enable) {
        if e.raw_os_error() != Some(libc::EBUSY) {
            let _ = fs::remove_dir(&h.base);
            return Err(cannot(&format!("enable {enable}"), &e));
        }
        move_self_into(h, parent, &subtree, &enable)?;
    }
    write(&h.base.join("cgroup.subtree_control"), &enable)
        .map_err(|e| cannot(&format!("enable {enable} beneath toolgate-PID"), &e))?;
    Ok(())
}

/// Moves toolgate into `toolgate-PID/toolgate`, so its cgroup holds no
/// process and the controllers can be enabled beneath it. Only when
/// toolgate is alone there: other processes would stay, and the kernel
/// would refuse anyway.
fn move_self_into(
    h: &Hierarchy,
    parent: &Path,
    subtree: &Path,
    enable: &str,
) -> Result<(), String> {
    let me = std::process::id().to_string();
    let others = words(&parent.join("cgroup.procs"))
        .into_iter()
        .any(|pid| pid != me);
    let give_up = |why: String| {
        let _ = fs::remove_dir(&h.base);
        Err(format!(
            "cannot enable {enable} in {}: {why}; start toolgate in a cgroup of its own, e.g. \
             `systemd-run --user --scope -p Delegate=yes toolgate …`",
            parent.display()
        ))
    };
    if others {
        return give_up("it holds other processes besides toolgate".to_owned());
    }
    let leaf = h.base.join("toolgate");
    if let Err(e) = fs::create_dir(&leaf)
        && e.kind() != io::ErrorKind::AlreadyExists
    {
        return give_up(e.to_string());
    }
    if let Err(e) = write(&leaf.join("cgroup.procs"), &me) {
        let _ = fs::remove_dir(&leaf);
        return give_up(format!("toolgate could not move itself out of it: {e}"));
    }
    if let Err(e) = write(subtree, enable) {
        // Back where it was; nothing changed.
        let _ = write(&parent.join("cgroup.procs"), &me);
        let _ = fs::remove_dir(&leaf);
        return give_up(e.to_string());
    }
    Ok(())
}

/// Removes the `toolgate-PID` directories of processes that are gone, with
/// their cgroups (those that are empty).
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("toolgate-"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if crate::placeholder::pid_alive(pid) {
            continue;
        }
        if let Ok(children) = fs::read_dir(entry.path()) {
            for child in children.flatten() {
                if child.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = fs::remove_dir(child.path());
                }
            }
        }
        let _ = fs::remove_dir(entry.path());
    }
}

impl Root {
    /// The cgroups of one command tree, at most `pids` tasks and `memory`
    /// bytes (swap included): a spare set when there is one (made and
    /// removed, a memory cgroup costs a few tenths of a millisecond), else
    /// new ones.
    pub(crate) fn tree(self: &Arc<Self>, pids: u64, memory: u64) -> io::Result<Tree> {
        let spare = self
            .spares
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut tree = Tree {
            set: Set {
                groups: Vec::new(),
                procs: Vec::new(),
                limits: (0, 0),
            },
            root: Arc::clone(self),
        };
        if let Some(spare) = spare {
            tree.set = spare;
            for group in &mut tree.set.groups {
                (group.refused, group.killed) = group.counts();
            }
        } else {
            // Numbered for the process, not the root: a root being dropped
            // removes its spare sets by name while the next root, made
            // meanwhile over the same `toolgate-PID`, makes its own.
            let n = NEXT_SET.fetch_add(1, Ordering::Relaxed);
            for h in &self.hierarchies {
                let dir = h.base.join(n.to_string());
                fs::create_dir(&dir)?;
                let procs = dir.join("cgroup.procs");
                tree.set.groups.push(Group {
                    dir,
                    version: h.version,
                    pids: h.pids,
                    memory: h.memory,
                    refused: 0,
                    killed: 0,
                });
                tree.set.procs.push(
                    CString::new(procs.as_os_str().as_bytes())
                        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?,
                );
            }
        }
        if tree.set.limits != (pids, memory) {
            for group in &tree.set.groups {
                group.limit(pids, memory)?;
            }
            tree.set.limits = (pids, memory);
        }
        Ok(tree)
    }
}

impl Group {
    /// Writes the limits.
    fn limit(&self, pids: u64, memory: u64) -> io::Result<()> {
        let file = |name: &str| self.dir.join(name);
        if self.pids {
            write(&file("pids.max"), &pids.to_string())?;
        }
        if self.memory {
            let bytes = memory.to_string();
            match self.version {
                Version::V1 => {
                    // Memory plus swap may not be below memory alone: lower
                    // it second, raise it first.
                    let swap = file("memory.memsw.limit_in_bytes");
                    let swap = swap.exists().then_some(swap);
                    if let Some(swap) = &swap {
                        let _ = write(swap, &bytes);
                    }
                    write(&file("memory.limit_in_bytes"), &bytes)?;
                    if let Some(swap) = &swap {
                        write(swap, &bytes)?;
                    }
                }
                Version::V2 => {
                    write(&file("memory.max"), &bytes)?;
                    let swap = file("memory.swap.max");
                    if swap.exists() {
                        write(&swap, "0")?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Forks refused at `pids.max`, and processes killed for want of
    /// memory, so far.
    fn counts(&self) -> (u64, u64) {
        let refused = if self.pids {
            counter(&self.dir.join("pids.events"), "max").unwrap_or(0)
        } else {
            0
        };
        let killed = if self.memory {
            let file = match self.version {
                Version::V1 => "memory.oom_control",
                Version::V2 => "memory.events",
            };
            counter(&self.dir.join(file), "oom_kill").unwrap_or(0)
        } else {
            0
        };
        (refused, killed)
    }

    /// Whether no process is in it.
    fn is_empty(&self) -> bool {
        fs::read_to_string(self.dir.join("cgroup.procs")).is_ok_and(|t| t.trim().is_empty())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let spares = std::mem::take(
            self.spares
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for set in spares {
            for group in set.groups {
                let _ = fs::remove_dir(&group.dir);
            }
        }
        // Under the lock `root` makes a new root with: once this one's
        // last user is gone, another thread may already have made the next
        // one over the same `toolgate-PID` directories, which must stay.
        let shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if shared
            .as_ref()
            .is_some_and(|(weak, _)| weak.strong_count() > 0)
        {
            return;
        }
        for h in &self.hierarchies {
            // Fails while toolgate lives in it (it moved itself there):
            // the next toolgate removes it as stale.
            let _ = fs::remove_dir(&h.base);
        }
    }
}

/// The value of `key` in a `key value` file (`pids.events`,
/// `memory.events`, `memory.oom_control`).
fn counter(path: &Path, key: &str) -> Option<u64> {
    let text = fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

impl Tree {
    /// The `cgroup.procs` files the child writes itself into.
    pub(crate) fn procs(&self) -> &[CString] {
        &self.set.procs
    }

    /// Keeps the cgroups for the next tree when they are empty and fewer
    /// than [`SPARES`] are kept; whether it did.
    fn keep(&mut self) -> bool {
        if self.set.groups.is_empty() || !self.set.groups.iter().all(Group::is_empty) {
            return false;
        }
        let mut spares = self
            .root
            .spares
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if spares.len() >= SPARES {
            return false;
        }
        spares.push(std::mem::replace(
            &mut self.set,
            Set {
                groups: Vec::new(),
                procs: Vec::new(),
                limits: (0, 0),
            },
        ));
        true
    }

    /// The groups, as `(directory, version)`, taken out of the tree.
    fn take_dirs(&mut self) -> Vec<(PathBuf, Version)> {
        self.set.procs.clear();
        self.set
            .groups
            .drain(..)
            .map(|g| (g.dir, g.version))
            .collect()
    }

    /// Kills what is left in the tree's cgroups and removes them (or keeps
    /// them for the next tree), waiting (without blocking the thread) up to
    /// a few seconds for processes still dying: the runner's way, so a run
    /// has left nothing behind when its result is there. What is still
    /// left is removed on drop.
    pub(crate) async fn remove(&mut self) {
        if self.keep() {
            return;
        }
        let mut left = remove_empty(self.take_dirs());
        for attempt in 0..ATTEMPTS {
            if left.is_empty() {
                return;
            }
            for (dir, version) in &left {
                kill_members(dir, *version);
            }
            tokio::time::sleep(backoff(attempt)).await;
            left = remove_empty(left);
        }
        // Left for the helper of `drop`.
        for (dir, version) in left {
            self.set.groups.push(Group {
                dir,
                version,
                pids: false,
                memory: false,
                refused: 0,
                killed: 0,
            });
        }
    }

    /// Whether a process or memory limit refused or killed something.
    pub(crate) fn counters(&self) -> Counters {
        let mut counters = Counters::default();
        for group in &self.set.groups {
            let (refused, killed) = group.counts();
            if group.pids {
                counters.pids = Some(refused > group.refused);
            }
            if group.memory {
                counters.memory = Some(killed > group.killed);
            }
        }
        counters
    }
}

/// Removes the cgroups in `dirs` that are empty; returns those that are
/// not.
fn remove_empty(dirs: Vec<(PathBuf, Version)>) -> Vec<(PathBuf, Version)> {
    dirs.into_iter()
        .filter(|(dir, _)| match fs::remove_dir(dir) {
            Ok(()) => false,
            Err(e) => e.kind() != io::ErrorKind::NotFound,
        })
        .collect()
}

/// How long to wait before the `attempt`th retry of a removal: 1 ms,
/// then 10 ms more each time up to a tenth of a second (about five seconds
/// over the 60 attempts).
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(u64::from(attempt.min(10)) * 10 + 1)
}

/// How many times a removal is retried.
const ATTEMPTS: u32 = 60;

/// Kills every process in the cgroup at `dir`.
fn kill_members(dir: &Path, version: Version) {
    if version == Version::V2 && write(&dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for pid in words(&dir.join("cgroup.procs")) {
        if let Some(pid) = pid
            .parse::<i32>()
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.keep() {
            return;
        }
        let left = remove_empty(self.take_dirs());
        if left.is_empty() {
            return;
        }
        // Processes are still in it: those that left the process group, or
        // a PID namespace still being torn down. Kill them and wait, off
        // this thread (it may be an async runtime's).
        let spawned = std::thread::Builder::new()
            .name("toolgate-cgroup".to_owned())
            .spawn(move || {
                let mut left = left;
                for attempt in 0..ATTEMPTS {
                    for (dir, version) in &left {
                        kill_members(dir, *version);
                    }
                    std::thread::sleep(backoff(attempt));
                    left = remove_empty(left);
                    if left.is_empty() {
                        return;
                    }
                }
                for (dir, _) in &left {
                    tracing::warn!(
                        "the cgroup {} still holds processes; it is left behind",
                        dir.display()
                    );
                }
            });
        if let Err(error) = spawned {
            tracing::warn!("could not remove a command's cgroup: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const HYBRID_SELF: &str = "\
8:pids:/
4:memory:/process_api/1125
2:cpu,cpuacct:/
0::/
";
    const UNIFIED: &str = "\
29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
";
    const UNIFIED_SELF: &str =
        "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope\n";
    /// A container with its own cgroup namespace, mounted at a sub-path.
    const NESTED: &str = "\
50 40 0:40 /docker/abc /sys/fs/cgroup/pids ro - cgroup cgroup rw,pids
51 40 0:41 /docker/abc /sys/fs/cgroup/mem\\040ory ro - cgroup cgroup rw,memory
";
    const NESTED_SELF: &str = "3:pids:/docker/abc/inner\n2:memory:/elsewhere\n";

    #[test]
    fn each_controller_is_found_where_the_kernel_mounts_it() {
        type Case<'a> = (
            &'a str,
            &'a str,
            &'a str,
            Result<(Version, &'a str), &'a str>,
        );
        let cases: &[Case<'_>] = &[
            (
                HYBRID,
                HYBRID_SELF,
                "pids",
                Ok((Version::V1, "/sys/fs/cgroup/pids")),
            ),
            (
                HYBRID,
                HYBRID_SELF,
                "memory",
                Ok((Version::V1, "/sys/fs/cgroup/memory/process_api/1125")),
            ),
            (
                UNIFIED,
                UNIFIED_SELF,
                "pids",
                Ok((
                    Version::V2,
                    "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope",
                )),
            ),
            (
                NESTED,
                NESTED_SELF,
                "pids",
                Ok((Version::V1, "/sys/fs/cgroup/pids/inner")),
            ),
            (
                NESTED,
                NESTED_SELF,
                "memory",
                Err("outside what is mounted"),
            ),
            (
                "",
                "",
                "pids",
                Err("no cgroup hierarchy has the pids controller"),
            ),
        ];
        for (mounts, membership, controller, expected) in cases {
            let got = locate(
                &parse_mounts(mounts),
                &parse_membership(membership),
                controller,
            );
            match (got, expected) {
                (Ok((version, dir)), Ok((v, d))) => {
                    assert_eq!((version, dir), (*v, PathBuf::from(d)), "{controller}");
                }
                (Err(why), Err(part)) => assert!(why.contains(part), "{why}"),
                (got, _) => panic!("{controller} in {mounts}: {got:?}, expected {expected:?}"),
            }
        }
        assert_eq!(
            parse_mounts(NESTED)[1].point,
            PathBuf::from("/sys/fs/cgroup/mem ory")
        );
    }

    #[test]
    fn counters_are_read_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("pids.events");
        std::fs::write(&events, "max 17\n").unwrap();
        assert_eq!(counter(&events, "max"), Some(17));
        let oom = dir.path().join("memory.oom_control");
        std::fs::write(&oom, "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n").unwrap();
        assert_eq!(counter(&oom, "oom_kill"), Some(2));
        assert_eq!(counter(&oom, "max"), None);
    }
}
