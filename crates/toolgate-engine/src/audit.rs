//! Step 9: the audit trail.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use sha2::{Digest, Sha256};
use toolgate_core::{Effects, private_files};

/// One line of the audit file.
///
/// # Wire format
///
/// One JSON object per line (JSONL), with the fields below in this order.
/// `args_sha256` is the SHA-256 of the arguments' compact JSON, so the file
/// shows which calls were identical without storing their content (which may
/// hold secrets).
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// RFC 3339 UTC time the call finished.
    pub ts: String,
    /// The call's id.
    pub call_id: &'a str,
    /// The agent session, if any.
    pub session_id: Option<&'a str>,
    /// The named client that made the call (an MCP client of
    /// `mcp.http.clients`); absent for everyone else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<&'a str>,
    /// The tool's name as asked for.
    pub tool: &'a str,
    /// Hex SHA-256 of the final arguments.
    pub args_sha256: String,
    /// What the gate decided (see [`Decision`](crate::Decision)).
    pub decision: &'a str,
    /// Whether the result was a success.
    pub success: bool,
    /// Wall time through the gate, in microseconds.
    pub duration_us: u64,
    /// The error, on failure.
    pub error: Option<&'a str>,
    /// What the call was declared to do, without write contents
    /// ([`Effects::summary`]): `"opaque"`, or `{"known": [...]}`.
    pub effects: Effects,
    /// The confirmation rule that decided, as `rule N (…)`; absent when the
    /// mode decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'a str>,
    /// For a connection through the sandbox's network proxy (tool
    /// `network`): the bytes each way. Absent for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    /// What the call changed in the workspace, when the gate captures
    /// changes; absent when nothing changed or nothing was captured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_changed: Vec<FileChanged>,
}

/// One path a call changed, as the audit records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChanged {
    /// The workspace-relative path.
    pub path: String,
    /// Created, modified or deleted.
    pub change: toolgate_core::ChangeKind,
}

/// The bytes of a connection, each way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transfer {
    /// From the command to the host.
    pub sent: u64,
    /// From the host to the command.
    pub received: u64,
}

/// Where the gate's audit records go (step 9).
///
/// A sink must not fail the call: losing an audit line is reported through
/// `tracing`, never turned into a failure of a call that already ran.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    /// Records one call.
    fn record(&self, record: &AuditRecord<'_>);

    /// Resolves once every record given so far is kept (written, or
    /// committed to the store), for a front end that must not answer a call
    /// before its record survives the process (a gateway worker killed
    /// right after answering). A sink that writes in [`record`](Self::record)
    /// resolves at once, the default.
    fn settled(&self) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
}

impl AuditSink for AuditLog {
    fn record(&self, record: &AuditRecord<'_>) {
        if let Err(error) = self.write(record) {
            tracing::error!(%error, path = ?self.path(), "could not write the audit log");
        }
    }
}

/// Hex SHA-256 of a JSON value's compact serialization.
pub(crate) fn digest(args: &serde_json::Value) -> String {
    let mut hasher = Sha256::new();
    // Writing JSON into a hasher cannot fail.
    let _ = serde_json::to_writer(HashWriter(&mut hasher), args);
    let bytes = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in bytes {
        use std::fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An append-only JSONL audit log.
///
/// Each record is written with one `write` call on a file opened with
/// `O_APPEND` and flushed before the call returns, so a crash loses at most
/// the call in flight, and two processes auditing to the same file do not
/// interleave their lines (POSIX appends are atomic with respect to the file
/// offset).
pub struct AuditLog {
    sink: Mutex<Box<dyn Write + Send>>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens (creating it and its parent directory if needed) the audit file
    /// at `path` for appending.
    ///
    /// The audit names every call, its arguments' digest and its errors: a
    /// new file is created `0600` and missing directories `0700`, whatever
    /// the umask, and an existing file readable by others is tightened
    /// ([`toolgate_core::private_files`]).
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private_files::create_dir_all(parent)?;
        }
        let file: File = private_files::open_options()
            .create(true)
            .append(true)
            .open(path)?;
        private_files::tighten(path)?;
        Ok(Self {
            sink: Mutex::new(Box::new(file)),
            path: Some(path.to_owned()),
        })
    }

    /// An audit log writing to any writer (a test buffer, `io::sink()`).
    pub fn to_writer(writer: impl Write + Send + 'static) -> Self {
        Self {
            sink: Mutex::new(Box::new(writer)),
            path: None,
        }
    }

    /// The file being written, if it is a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one record and flushes.
    pub fn write(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        sink.write_all(&line)?;
        sink.flush()
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_audit_file_is_private_and_a_loose_one_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("logs/audit.jsonl");
        drop(AuditLog::open(&path).unwrap());
        assert_eq!(mode(&tmp.path().join("logs")), 0o700);
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(AuditLog::open(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
    }
}
