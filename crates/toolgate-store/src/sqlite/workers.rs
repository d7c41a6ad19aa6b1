//! Worker liveness on `SQLite`: a file per worker beside the database,
//! held under an exclusive `flock` for the worker's life.
//!
//! `flock` locks belong to the open file description and the kernel drops
//! them when the last descriptor closes, which a killed process's exit
//! does (SIGKILL included): a worker whose lock can be taken is gone.
//! Another process asking takes a shared lock without waiting
//! (`LOCK_SH|LOCK_NB`): refused (`EWOULDBLOCK`) means alive. A lock taken
//! through another descriptor of the same process conflicts too, so the
//! check is the same inside one process. See flock(2).

use std::fs::File;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use crate::private;
use crate::{StoreError, WorkerLease};

/// The directory of the workers' lock files of the store at `db`:
/// `DB.workers/` beside it.
fn dir(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".workers");
    PathBuf::from(name)
}

/// The lock file of `worker`: its name with anything but letters, digits,
/// `.`, `_` and `-` replaced by `_`.
fn file(db: &Path, worker: &str) -> PathBuf {
    let name: String = worker
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir(db).join(format!("{name}.lock"))
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The lock held: the file stays open (and locked) until the lease drops,
/// then is removed.
struct Held {
    path: PathBuf,
    _file: File,
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

pub(super) fn hold(db: &Path, worker: &str) -> Result<WorkerLease, StoreError> {
    let dir = dir(db);
    private::create_dir_all(&dir).map_err(io_error(&dir))?;
    let path = file(db, worker);
    private::create_file(&path).map_err(io_error(&path))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .open(&path)
        .map_err(io_error(&path))?;
    flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|e| StoreError::Io {
        path: path.clone(),
        source: std::io::Error::from(e),
    })?;
    Ok(WorkerLease::new(Held { path, _file: file }))
}

pub(super) fn alive(db: &Path, worker: &str) -> Result<bool, StoreError> {
    let path = file(db, worker);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_error(&path)(e)),
    };
    match flock(&file, FlockOperation::NonBlockingLockShared) {
        // Taken: nobody holds it; the worker is gone (its file is left
        // for the next `hold` of that name, which never comes).
        Ok(()) => Ok(false),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(true),
        Err(e) => Err(StoreError::Io {
            path,
            source: std::io::Error::from(e),
        }),
    }
}
