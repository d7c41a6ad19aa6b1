//! The content-addressed store of file contents that checkpoints name.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// File contents kept by their SHA-256: `DIR/ab/cdef…` for hash `abcdef…`.
/// The same content is kept once however many files and steps name it.
///
/// # Rules
///
/// 1. A blob is written to a temporary file in `DIR` and renamed into
///    place, so a blob that exists is complete; its content is the one its
///    name says (hashed while it was copied).
/// 2. Blobs are never changed; [`gc`](Self::gc) removes the ones no record
///    names, once they are older than a grace period (a blob another
///    process wrote a moment ago may not be named by a record yet).
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

/// What [`BlobStore::gc`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Blobs removed.
    pub removed: usize,
    /// Bytes freed.
    pub freed: u64,
    /// Blobs kept.
    pub kept: usize,
    /// Bytes the kept blobs hold.
    pub kept_bytes: u64,
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn is_hash(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

impl BlobStore {
    /// The blobs in `dir` (created, private to the user, when first
    /// written).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Where the blobs are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of blob `hash`; `None` for a name that is not a hash.
    pub fn path_of(&self, hash: &str) -> Option<PathBuf> {
        is_hash(hash).then(|| self.dir.join(&hash[..2]).join(&hash[2..]))
    }

    /// Whether blob `hash` is kept.
    pub fn contains(&self, hash: &str) -> bool {
        self.path_of(hash).is_some_and(|p| p.is_file())
    }

    /// The SHA-256 of the file at `path`, without keeping it.
    pub fn hash_file(path: &Path) -> io::Result<String> {
        let mut file = File::open(path)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(buf.get(..n).unwrap_or_default());
        }
        Ok(hex(&hasher.finalize()))
    }

    /// Keeps the content of the file at `path` and returns its hash. A
    /// content already kept is not copied again.
    pub fn put_file(&self, path: &Path) -> io::Result<String> {
        let hash = Self::hash_file(path)?;
        if self.contains(&hash) {
            return Ok(hash);
        }
        self.copy_in(File::open(path)?)
    }

    /// Keeps `bytes` and returns their hash.
    pub fn put_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hex(&Sha256::digest(bytes));
        if self.contains(&hash) {
            return Ok(hash);
        }
        self.copy_in(bytes)
    }

    /// Copies `from` into a temporary file while hashing it, then renames
    /// it to its hash (rule 1): the name is what was copied, even if the
    /// source changed since it was first hashed.
    fn copy_in(&self, mut from: impl Read) -> io::Result<String> {
        // The directories are made when missing, not checked before each
        // blob: a first look keeps thousands.
        let mut tmp = match tempfile_in(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                crate::private::create_dir_all(&self.dir)?;
                tempfile_in(&self.dir)?
            }
            tmp => tmp?,
        };
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf)?;
            if n == 0 {
                break;
            }
            let chunk = buf.get(..n).unwrap_or_default();
            hasher.update(chunk);
            tmp.1.write_all(chunk)?;
        }
        // Not synced one by one: a sync per file makes the first look at a
        // large workspace take minutes. A crash of the machine (not of
        // toolgate) may lose contents kept in its last seconds.
        let hash = hex(&hasher.finalize());
        let dir = self.dir.join(&hash[..2]);
        let dest = dir.join(&hash[2..]);
        if dest.is_file() {
            fs::remove_file(&tmp.0)?;
            return Ok(hash);
        }
        match fs::rename(&tmp.0, &dest) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(&dir)?;
                fs::rename(&tmp.0, &dest)?;
            }
            done => done?,
        }
        Ok(hash)
    }

    /// Opens blob `hash` for reading.
    pub fn open(&self, hash: &str) -> io::Result<File> {
        let path = self.path_of(hash).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{hash}` is not a blob hash"),
            )
        })?;
        File::open(path).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "the content {hash} is no longer kept (removed by garbage collection?)"
                    ),
                )
            } else {
                e
            }
        })
    }

    /// Every kept blob: (hash, size, modified).
    fn list(&self) -> io::Result<Vec<(String, u64, SystemTime)>> {
        let mut out = Vec::new();
        let top = match fs::read_dir(&self.dir) {
            Ok(top) => top,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for sub in top {
            let sub = sub?;
            let prefix = sub.file_name().to_string_lossy().into_owned();
            if prefix.len() != 2 || !sub.file_type()?.is_dir() {
                continue;
            }
            for blob in fs::read_dir(sub.path())? {
                let blob = blob?;
                let name = format!("{prefix}{}", blob.file_name().to_string_lossy());
                if !is_hash(&name) {
                    continue;
                }
                let meta = blob.metadata()?;
                out.push((name, meta.len(), meta.modified()?));
            }
        }
        Ok(out)
    }

    /// The bytes all blobs hold.
    pub fn total_bytes(&self) -> io::Result<u64> {
        Ok(self.list()?.iter().map(|(_, size, _)| size).sum())
    }

    /// Removes the blobs not in `keep` and older than `grace` (rule 2).
    pub fn gc(&self, keep: &HashSet<String>, grace: Duration) -> io::Result<GcReport> {
        let now = SystemTime::now();
        let mut report = GcReport::default();
        for (hash, size, modified) in self.list()? {
            let young = now.duration_since(modified).unwrap_or_default() < grace;
            if keep.contains(&hash) || young {
                report.kept += 1;
                report.kept_bytes += size;
            } else if let Some(path) = self.path_of(&hash) {
                match fs::remove_file(path) {
                    Ok(()) => {
                        report.removed += 1;
                        report.freed += size;
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(report)
    }
}

/// A new temporary file in `dir`, named so that listing skips it.
fn tempfile_in(dir: &Path) -> io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".tmp-{}-{n}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_content_is_kept_once_and_gc_keeps_what_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path().join("blobs"));
        let a = blobs.put_bytes(b"hello").unwrap();
        let f = dir.path().join("f");
        fs::write(&f, b"hello").unwrap();
        assert_eq!(blobs.put_file(&f).unwrap(), a);
        let b = blobs.put_bytes(b"other").unwrap();
        assert_eq!(blobs.list().unwrap().len(), 2);
        let mut content = String::new();
        blobs
            .open(&a)
            .unwrap()
            .read_to_string(&mut content)
            .unwrap();
        assert_eq!(content, "hello");
        let keep = HashSet::from([a.clone()]);
        assert_eq!(
            blobs.gc(&keep, Duration::from_secs(3600)).unwrap().removed,
            0
        );
        let report = blobs.gc(&keep, Duration::ZERO).unwrap();
        assert_eq!((report.removed, report.kept), (1, 1));
        assert!(blobs.contains(&a) && !blobs.contains(&b));
        assert!(
            blobs
                .open(&b)
                .unwrap_err()
                .to_string()
                .contains("no longer kept")
        );
    }
}
