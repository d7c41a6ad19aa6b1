//! Which processes are running a session: a claim each run holds for as
//! long as it runs, which a rewind checks before it touches the workspace.
//!
//! # Why an OS file lock
//!
//! A rewind restores files; made while an agent of the same session runs
//! in another process, it would change them under that agent, which then
//! goes on from a workspace it never saw. The running process must leave a
//! mark another process can test, and the mark must go when the process
//! goes, however it goes (a crash, `SIGKILL`, the machine's OOM killer): a
//! row in the store with a pid and a heartbeat outlives its process until
//! someone decides the heartbeat is stale, and a pid alone can be reused.
//! An advisory lock (`flock(2)`) on a file per session does what is needed:
//! the kernel drops it when the last descriptor of its open file
//! description closes, which process exit always does.
//!
//! # Rules
//!
//! 1. A run holds a *shared* lock on `locks/SESSION.lock` beside the store's
//!    database from when it is prepared until it ends. Several runs may hold
//!    it (the store serialises their writes); a run started while a rewind
//!    of the session is being made is refused.
//! 2. A rewind (or its undo) takes the *exclusive* lock for as long as it
//!    changes the workspace and the store, without waiting: held shared by
//!    another process, the rewind is refused, naming the process(es)
//!    (read from `/proc/locks`, which lists each lock with the pid that took
//!    it).
//! 3. A process never refuses itself: when this process holds the session's
//!    claim (the web UI that runs the session), the rewind goes ahead without
//!    the lock; the front end decides whether a run in flight allows it.
//! 4. Locks are advisory: a process that is not toolgate is not stopped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File, TryLockError};

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::assembly::host::Host;
use crate::error::HostError;

/// The session claims this process holds, by lock file, with how many
/// runs hold each (rule 3).
static HELD: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

/// A run's claim on its session (rule 1): released when dropped, or when the
/// process ends.
#[derive(Debug)]
pub(crate) struct SessionClaim {
    path: PathBuf,
    /// Holds the lock; closing it releases it.
    _file: File,
}

impl Drop for SessionClaim {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(map) = held.as_mut()
            && let Some(count) = map.get_mut(&self.path)
        {
            *count = count.saturating_sub(1);
            if *count == 0 {
                map.remove(&self.path);
            }
        }
    }
}

/// A rewind's hold on its session (rule 2); `None` inside when this
/// process runs the session itself (rule 3).
#[derive(Debug)]
pub(crate) struct RewindHold {
    _file: Option<File>,
}

impl Host {
    /// The lock file of `session_id`: `locks/ID.lock` beside the store's
    /// database (created, with its directory).
    fn session_lock(&self, session_id: &str) -> Result<(PathBuf, File), HostError> {
        let db = self.store_path()?;
        let dir = db
            .parent()
            .map_or_else(|| PathBuf::from("locks"), |d| d.join("locks"));
        let path = dir.join(format!("{}.lock", file_name(session_id)));
        let io_error = |source| HostError::RewindIo {
            what: format!("cannot open the session's lock file {}", path.display()),
            source,
        };
        fs::create_dir_all(&dir).map_err(io_error)?;
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error)?;
        Ok((path, file))
    }

    /// Claims `session_id` for a run (rule 1).
    pub(crate) fn claim_session(&self, session_id: &str) -> Result<SessionClaim, HostError> {
        let (path, file) = self.session_lock(session_id)?;
        match file.try_lock_shared() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(HostError::SessionBusy {
                    session: session_id.to_owned(),
                    pids: holders(&file),
                    rewinding: true,
                });
            }
            Err(TryLockError::Error(source)) => {
                return Err(HostError::RewindIo {
                    what: format!("cannot lock {}", path.display()),
                    source,
                });
            }
        }
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        *held
            .get_or_insert_with(HashMap::new)
            .entry(path.clone())
            .or_insert(0) += 1;
        Ok(SessionClaim { path, _file: file })
    }

    /// Holds `session_id` for a rewind (rules 2 and 3).
    pub(crate) fn hold_for_rewind(&self, session_id: &str) -> Result<RewindHold, HostError> {
        let (path, file) = self.session_lock(session_id)?;
        let ours = HELD
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|map| map.contains_key(&path));
        if ours {
            // Another process may run it too; the lock cannot say so from
            // here (our own shared lock stands in the way), the table can.
            let others = holders(&file);
            if !others.is_empty() {
                return Err(HostError::SessionBusy {
                    session: session_id.to_owned(),
                    pids: others,
                    rewinding: false,
                });
            }
            return Ok(RewindHold { _file: None });
        }
        match file.try_lock() {
            Ok(()) => Ok(RewindHold { _file: Some(file) }),
            Err(TryLockError::WouldBlock) => Err(HostError::SessionBusy {
                session: session_id.to_owned(),
                pids: holders(&file),
                rewinding: false,
            }),
            Err(TryLockError::Error(source)) => Err(HostError::RewindIo {
                what: format!("cannot lock {}", path.display()),
                source,
            }),
        }
    }
}

/// A session id as a file name: kept when it is plain (what toolgate makes
/// is), else hex-encoded, so no id can name a path elsewhere.
fn file_name(session_id: &str) -> String {
    let plain = !session_id.is_empty()
        && session_id.len() <= 100
        && session_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        return session_id.to_owned();
    }
    let mut out = String::from("x-");
    for b in session_id.bytes().take(100) {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The processes other than this one that hold a lock on `file`, from
/// `/proc/locks` (empty where it cannot be read: the message then names
/// no process).
fn holders(file: &File) -> Vec<u32> {
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    let Ok(table) = fs::read_to_string(Path::new("/proc/locks")) else {
        return Vec::new();
    };
    let own = std::process::id();
    let mut pids: Vec<u32> = table
        .lines()
        .filter_map(|line| lock_holder(line, meta.dev(), meta.ino()))
        .filter(|pid| *pid != own)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// The pid of a `/proc/locks` line when it is a granted `flock` on the
/// file (device `dev`, inode `ino`): `1: FLOCK ADVISORY READ 1234
/// fe:00:5923155 0 EOF`, the device as hexadecimal major and minor. Lines
/// of waiters (`1: -> FLOCK …`) are not holders.
fn lock_holder(line: &str, dev: u64, ino: u64) -> Option<u32> {
    let mut fields = line.split_whitespace().skip(1);
    if fields.next()? != "FLOCK" {
        return None;
    }
    let pid: u32 = fields.nth(2)?.parse().ok()?;
    let mut id = fields.next()?.split(':');
    let major = u64::from_str_radix(id.next()?, 16).ok()?;
    let minor = u64::from_str_radix(id.next()?, 16).ok()?;
    let inode: u64 = id.next()?.parse().ok()?;
    // Linux's encoding of a device number (glibc `makedev`).
    let (want_major, want_minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    (inode == ino && major == want_major && minor == want_minor).then_some(pid)
}

/// What a refused rewind or run says about the holders.
pub(crate) fn describe_holders(pids: &[u32]) -> String {
    match pids {
        [] => "another process".to_owned(),
        [one] => format!("process {one}"),
        many => format!(
            "processes {}",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_name_the_holder_of_the_file_only() {
        // dev 0xfe00 is major 0xfe, minor 0.
        let dev = 0xfe00;
        let cases: &[(&str, Option<u32>)] = &[
            (
                "1: FLOCK  ADVISORY  READ 12014 fe:00:5923155 0 EOF",
                Some(12014),
            ),
            ("2: FLOCK  ADVISORY  WRITE 77 fe:00:5923155 0 EOF", Some(77)),
            ("3: FLOCK  ADVISORY  READ 12014 fe:00:5923156 0 EOF", None),
            ("4: FLOCK  ADVISORY  READ 12014 fe:01:5923155 0 EOF", None),
            ("5: POSIX  ADVISORY  READ 11075 fe:00:5923155 128 128", None),
            ("5: -> FLOCK  ADVISORY  WRITE 9 fe:00:5923155 0 EOF", None),
            ("garbage", None),
        ];
        for (line, want) in cases {
            assert_eq!(lock_holder(line, dev, 5_923_155), *want, "{line}");
        }
    }

    #[test]
    fn odd_session_ids_become_plain_file_names() {
        assert_eq!(file_name("s18a2b-x_1"), "s18a2b-x_1");
        assert_eq!(file_name("../x"), "x-2e2e2f78");
        assert_eq!(file_name(""), "x-");
    }
}
