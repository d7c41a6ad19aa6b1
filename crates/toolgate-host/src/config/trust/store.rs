//! The trust store: the files the user trusts, by path and hash.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Whether a project file's trust-only keys apply, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// The file has no trust-only keys: all of it applies.
    NotNeeded,
    /// The file, as it is, is in the trust store.
    Recorded,
    /// Trusted for this run only (`--trust-workspace`).
    ThisRun,
    /// Not trusted: its trust-only keys are ignored.
    Untrusted,
}

impl Trust {
    /// Whether the trust-only keys apply.
    pub fn applies(self) -> bool {
        !matches!(self, Self::Untrusted)
    }
}

/// An error reading or writing the trust store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// The store could not be read.
    #[error("could not read the trust store {}", path.display())]
    Read {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The store is not what toolgate writes.
    #[error("the trust store {} is corrupt", path.display())]
    Corrupt {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The store was written by a newer toolgate.
    #[error("the trust store {} has version {version}, this toolgate reads version {STORE_VERSION}", path.display())]
    Version {
        /// The store.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// The store could not be written.
    #[error("could not write the trust store {}", path.display())]
    Write {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No place for the store: neither `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("there is no user configuration directory to keep the trust store in")]
    NoPlace,
}

impl TrustError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Read { path, .. } | Self::Write { path, .. } => format!(
                "check the permissions of {} and its directory",
                path.display()
            ),
            Self::Corrupt { path, .. } | Self::Version { path, .. } => format!(
                "fix or delete {} (deleting it forgets every trusted workspace; \
                 `toolgate trust` records them again)",
                path.display()
            ),
            Self::NoPlace => "set HOME or XDG_CONFIG_HOME".to_owned(),
        }
    }
}

/// The version of the store's format.
const STORE_VERSION: u32 = 1;

/// `trusted.json`, as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustedFile>,
}

/// One trusted configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedFile {
    /// Its canonical path.
    pub path: PathBuf,
    /// Hex SHA-256 of its bytes when it was trusted.
    pub sha256: String,
    /// When, RFC 3339 UTC.
    pub trusted_at: String,
}

/// The configuration files the user trusts: `trusted.json` in the user's
/// configuration directory, one entry per file (path and hash).
///
/// ```json
/// {"version": 1, "trusted": [{"path": "/home/me/src/app/toolgate.yaml",
///   "sha256": "3b1f…", "trusted_at": "2025-01-31T09:12:00Z"}]}
/// ```
///
/// Written atomically (a temporary file in the same directory, renamed over
/// the old one), so a crash leaves the old store or the new one, never half
/// of one. Two toolgate processes trusting at the same moment may lose one
/// of the two records (last writer wins); nothing is trusted by mistake.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    files: Vec<TrustedFile>,
}

impl TrustStore {
    /// Reads the store at `path`; a missing file is an empty store. A store
    /// readable by others is made private first (`0600`, said in a
    /// `tracing` info line); [`save`](Self::save) writes it `0600` in a
    /// `0700` directory.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, TrustError> {
        let path = path.into();
        crate::own_state::tighten(&path);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    files: Vec::new(),
                });
            }
            Err(source) => return Err(TrustError::Read { path, source }),
        };
        let file: StoreFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(source) => return Err(TrustError::Corrupt { path, source }),
        };
        if file.version != STORE_VERSION {
            return Err(TrustError::Version {
                path,
                version: file.version,
            });
        }
        Ok(Self {
            path,
            files: file.trusted,
        })
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The trusted files, in the order they were first trusted.
    pub fn files(&self) -> &[TrustedFile] {
        &self.files
    }

    /// Whether `file` (a canonical path) with content hash `sha256` is trusted.
    pub fn is_trusted(&self, file: &Path, sha256: &str) -> bool {
        self.files
            .iter()
            .any(|t| t.path == file && t.sha256 == sha256)
    }

    /// Records `file` with content hash `sha256`, replacing an older record
    /// of the same file. Call [`save`](Self::save) to keep it.
    pub fn trust(&mut self, file: PathBuf, sha256: String) {
        let now = jiff::Timestamp::now();
        let record = TrustedFile {
            path: file,
            sha256,
            trusted_at: now.round(jiff::Unit::Second).unwrap_or(now).to_string(),
        };
        match self.files.iter_mut().find(|t| t.path == record.path) {
            Some(old) => *old = record,
            None => self.files.push(record),
        }
    }

    /// Forgets `file`; whether it was there.
    pub fn revoke(&mut self, file: &Path) -> bool {
        let before = self.files.len();
        self.files.retain(|t| t.path != file);
        self.files.len() != before
    }

    /// Writes the store atomically, creating its directory if needed.
    pub fn save(&self) -> Result<(), TrustError> {
        let write_error = |source| TrustError::Write {
            path: self.path.clone(),
            source,
        };
        let file = StoreFile {
            version: STORE_VERSION,
            trusted: self.files.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        text.push('\n');
        // Private to the user, written whole or not at all.
        crate::atomic::write_private(&self.path, text.as_bytes()).map_err(write_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolgate/trusted.json");
        let mut store = TrustStore::open(&path).unwrap();
        assert!(store.files().is_empty());
        let file = PathBuf::from("/ws/toolgate.yaml");
        store.trust(file.clone(), "aa".into());
        store.save().unwrap();

        let mut store = TrustStore::open(&path).unwrap();
        assert!(store.is_trusted(&file, "aa"));
        assert!(!store.is_trusted(&file, "bb"), "another content");
        assert!(!store.is_trusted(Path::new("/other/toolgate.yaml"), "aa"));
        store.trust(file.clone(), "bb".into());
        assert_eq!(store.files().len(), 1, "one record per file");
        assert!(store.is_trusted(&file, "bb") && !store.is_trusted(&file, "aa"));
        assert!(store.revoke(&file));
        assert!(!store.revoke(&file));

        std::fs::write(&path, "{not json").unwrap();
        let error = TrustStore::open(&path).unwrap_err();
        assert!(matches!(error, TrustError::Corrupt { .. }), "{error:?}");
        assert!(error.hint().contains("fix or delete"), "{}", error.hint());
        std::fs::write(&path, r#"{"version": 9, "trusted": []}"#).unwrap();
        assert!(matches!(
            TrustStore::open(&path).unwrap_err(),
            TrustError::Version { version: 9, .. }
        ));
    }
}
