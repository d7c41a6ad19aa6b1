//! Keeping the memory index in step with the memory files and the session
//! history, incrementally.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use sha2::{Digest as _, Sha256};
use toolgate_core::Workspace;
use toolgate_store::{
    MemoryChunk, MemoryIndex, MemoryUpdate, NoteStore, SessionHistory, SessionMessage, SourceId,
    StoreError,
};

use super::dir::FileDir;
use super::text::{chunk_markdown, message_text, push_cut};
use super::{FILE_KIND, NOTE_KIND, SESSION_KIND};

/// The kind of the index's own bookkeeping sources.
const STATE_KIND: &str = "_state";
/// The bookkeeping source whose fingerprint is the highest session stamp
/// indexed.
const SESSIONS_CURSOR: &str = "sessions";

/// Memory files larger than this are not indexed (a daily log is a few
/// kilobytes; this is a file put there by mistake).
pub(crate) const MAX_INDEXED_FILE: u64 = 8 * 1024 * 1024;

/// Notes read per query when the index syncs them (rule 6).
const NOTES_PAGE: usize = 500;

/// Sessions read from the history per batch (one index transaction each).
const SESSION_BATCH: usize = 64;

/// What one [`Indexer::sync`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SyncReport {
    /// Files (re-)indexed because they are new or changed.
    pub(crate) files_indexed: usize,
    /// Files whose time changed but not their content.
    pub(crate) files_touched: usize,
    /// Files gone from the directory, removed from the index.
    pub(crate) files_removed: usize,
    /// Sessions with new messages indexed.
    pub(crate) sessions_indexed: usize,
    /// Sessions re-indexed from the start (their messages were rewritten).
    pub(crate) sessions_rewritten: usize,
}

/// Brings the memory index up to date with the memory directory and the
/// session history.
///
/// # Rules
///
/// 1. Every `.md` file in the memory directory and its subdirectories is
///    indexed (hidden entries, symlinks leading out and files over 8 MiB
///    are not), cut into chunks by [`chunk_markdown`](super::chunk_markdown),
///    as a source of kind `file` named by its path in the directory.
/// 2. The index remembers each file's modification time, size and SHA-256.
///    A file whose time and size are unchanged is not read; one whose
///    content hash is unchanged is not re-indexed (only its time is
///    updated); a changed file is re-indexed whole (a daily log is small);
///    a file gone is removed from the index.
/// 3. Sessions: the index remembers the highest session stamp it has seen
///    and, for each session, how many messages it has indexed and a hash
///    of the last one. Only sessions written since the stamp are read, and
///    of each only the messages after the last indexed one — after
///    checking that that one is unchanged; if it is not (the conversation
///    was rewritten, as context compression does), the session is
///    re-indexed from its first message.
/// 4. Of a session, the user's and the assistant's words are indexed
///    (system prompts and tool results are not), one source of kind
///    `session` per session, positioned by message index.
/// 5. One sync runs at a time per indexer; the index's conditional appends
///    keep two processes that sync at once from indexing a message twice.
/// 6. Notes (when the notes store is given): one source of kind `note` per
///    note, named by its id, fingerprinted by its update time; a changed
///    note is re-indexed whole (title, then text), a deleted one removed.
///    Every note's update time is read on each sync (one query per
///    [`NOTES_PAGE`] notes); only changed notes are indexed.
pub(crate) struct Indexer {
    dir: Arc<FileDir>,
    index: Arc<dyn MemoryIndex>,
    sessions: Option<Arc<dyn SessionHistory>>,
    notes: Option<Arc<dyn NoteStore>>,
    running: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexer")
            .field("dir", &self.dir.root())
            .field("sessions", &self.sessions.is_some())
            .finish_non_exhaustive()
    }
}

impl Indexer {
    pub(crate) fn new(
        dir: Arc<FileDir>,
        index: Arc<dyn MemoryIndex>,
        sessions: Option<Arc<dyn SessionHistory>>,
        notes: Option<Arc<dyn NoteStore>>,
    ) -> Self {
        Self {
            dir,
            index,
            sessions,
            notes,
            running: tokio::sync::Mutex::new(()),
        }
    }

    /// Brings the index up to date (see the rules above).
    pub(crate) async fn sync(&self) -> Result<SyncReport, String> {
        let _running = self.running.lock().await;
        let mut report = SyncReport::default();
        self.sync_files(&mut report)
            .await
            .map_err(|e| format!("cannot index the memory files: {e}"))?;
        if let Some(history) = &self.sessions {
            self.sync_sessions(history.as_ref(), &mut report)
                .await
                .map_err(|e| format!("cannot index the session history: {}", chain(&e)))?;
        }
        if let Some(notes) = &self.notes {
            self.sync_notes(notes.as_ref())
                .await
                .map_err(|e| format!("cannot index the notes: {}", chain(&e)))?;
        }
        Ok(report)
    }

    /// Rule 6.
    async fn sync_notes(&self, notes: &dyn NoteStore) -> Result<(), StoreError> {
        let mut known = self.index.fingerprints(NOTE_KIND).await?;
        let mut updates = Vec::new();
        let mut offset = 0;
        loop {
            let page = notes.list_notes(NOTES_PAGE, offset).await?;
            let Some(count) = (!page.is_empty()).then_some(page.len()) else {
                break;
            };
            for note in page {
                let name = note.id.to_string();
                let fingerprint = note.updated.to_string();
                if known.remove(&name).as_deref() != Some(fingerprint.as_str()) {
                    updates.push(MemoryUpdate::Replace {
                        source: SourceId::new(NOTE_KIND, name),
                        fingerprint,
                        chunks: chunk_markdown(&format!("# {}\n{}", note.title, note.body)),
                    });
                }
            }
            offset += count;
        }
        updates.extend(known.into_keys().map(|name| MemoryUpdate::Delete {
            source: SourceId::new(NOTE_KIND, name),
        }));
        if !updates.is_empty() {
            self.index.apply(updates).await?;
        }
        Ok(())
    }

    async fn sync_files(&self, report: &mut SyncReport) -> Result<(), String> {
        let known = self
            .index
            .fingerprints(FILE_KIND)
            .await
            .map_err(|e| chain(&e))?;
        let workspace = self.dir.workspace(false)?;
        let (updates, counts) = tokio::task::spawn_blocking(move || {
            let files = match &workspace {
                Some(workspace) => scan(workspace, &known),
                None => Vec::new(),
            };
            file_updates(files, &known)
        })
        .await
        .map_err(|e| format!("the scan did not finish ({e})"))?;
        (
            report.files_indexed,
            report.files_touched,
            report.files_removed,
        ) = counts;
        self.index
            .apply(updates)
            .await
            .map_err(|e| chain(&e))
            .map(drop)
    }

    async fn sync_sessions(
        &self,
        history: &dyn SessionHistory,
        report: &mut SyncReport,
    ) -> Result<(), StoreError> {
        let cursor = SourceId::new(STATE_KIND, SESSIONS_CURSOR);
        let mut after: i64 = self
            .index
            .fingerprint(&cursor)
            .await?
            .and_then(|f| f.parse().ok())
            .unwrap_or(0);
        loop {
            let changes = history.sessions_since(after, SESSION_BATCH).await?;
            let Some(last) = changes.last() else {
                return Ok(());
            };
            after = last.updated;
            let mut updates = Vec::new();
            for change in &changes {
                let source = SourceId::new(SESSION_KIND, change.session_id.clone());
                let seen = self.index.fingerprint(&source).await?;
                if let Some(update) =
                    session_update(history, source, seen, &change.session_id, report).await?
                {
                    updates.push(update);
                }
            }
            updates.push(MemoryUpdate::Replace {
                source: cursor.clone(),
                fingerprint: after.to_string(),
                chunks: Vec::new(),
            });
            self.index.apply(updates).await?;
        }
    }
}

/// The update that brings one session's source up to date (rule 3).
async fn session_update(
    history: &dyn SessionHistory,
    source: SourceId,
    seen: Option<String>,
    session_id: &str,
    report: &mut SyncReport,
) -> Result<Option<MemoryUpdate>, StoreError> {
    let parsed = seen.as_deref().and_then(|f| {
        let (next, hash) = f.split_once(':')?;
        Some((next.parse::<u64>().ok()?, hash.to_owned()))
    });
    if let Some((next, hash)) = parsed.filter(|(next, _)| *next > 0) {
        let messages = history.messages_from(session_id, next - 1).await?;
        let unchanged = messages
            .first()
            .is_some_and(|m| m.seq == next - 1 && message_hash(m) == hash);
        if unchanged {
            let new = &messages[1..];
            let Some(last) = new.last() else {
                return Ok(None);
            };
            report.sessions_indexed += 1;
            return Ok(Some(MemoryUpdate::Append {
                source,
                expect: seen,
                fingerprint: session_fingerprint(last),
                chunks: message_chunks(new),
            }));
        }
        report.sessions_rewritten += 1;
    }
    let messages = history.messages_from(session_id, 0).await?;
    report.sessions_indexed += 1;
    Ok(Some(MemoryUpdate::Replace {
        source,
        fingerprint: messages
            .last()
            .map_or_else(|| "0:".to_owned(), session_fingerprint),
        chunks: message_chunks(&messages),
    }))
}

/// How far into a session the index got: the next message index and the
/// last indexed message's hash.
fn session_fingerprint(last: &SessionMessage) -> String {
    format!("{}:{}", last.seq + 1, message_hash(last))
}

fn message_hash(message: &SessionMessage) -> String {
    let json = serde_json::to_string(&message.message).unwrap_or_default();
    let digest = Sha256::digest(json.as_bytes());
    hex(&digest[..16])
}

fn message_chunks(messages: &[SessionMessage]) -> Vec<MemoryChunk> {
    let mut chunks = Vec::new();
    for message in messages {
        if let Some(text) = message_text(&message.message) {
            push_cut(&mut chunks, message.seq, &text);
        }
    }
    chunks
}

/// A memory file as the scan found it.
struct Scanned {
    name: String,
    stamp: String,
    /// The content, read only when the stamp differs from the index's.
    content: Option<Vec<u8>>,
}

/// The indexable files of the directory (rule 1), read where their time
/// or size changed (rule 2).
fn scan(workspace: &Workspace, known: &BTreeMap<String, String>) -> Vec<Scanned> {
    let Ok(root) = workspace.resolve(".") else {
        return Vec::new();
    };
    let paths = match workspace.walk(&root, true) {
        Ok(paths) => paths,
        Err(error) => {
            tracing::warn!(%error, "cannot list the memory directory");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for path in paths {
        let name = workspace.display(&path);
        let hidden = name.split('/').any(|part| part.starts_with('.'));
        let markdown = Path::new(&name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"));
        if hidden || !markdown {
            continue;
        }
        let Ok(meta) = workspace.metadata(&path) else {
            continue;
        };
        if meta.len() > MAX_INDEXED_FILE {
            tracing::warn!(file = %name, size = meta.len(), "memory file too large to index");
            continue;
        }
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.into_std().duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let stamp = format!("{mtime}:{}", meta.len());
        let same = known
            .get(&name)
            .is_some_and(|f| f.rsplit_once(':').is_some_and(|(s, _)| s == stamp));
        let content = if same {
            None
        } else {
            match workspace.read_limited(&path, MAX_INDEXED_FILE) {
                Ok(bytes) => Some(bytes),
                Err(error) => {
                    tracing::warn!(file = %name, %error, "cannot read a memory file");
                    continue;
                }
            }
        };
        out.push(Scanned {
            name,
            stamp,
            content,
        });
    }
    out
}

/// The updates for the scanned files, and how many were (re-)indexed,
/// touched and removed.
fn file_updates(
    files: Vec<Scanned>,
    known: &BTreeMap<String, String>,
) -> (Vec<MemoryUpdate>, (usize, usize, usize)) {
    let mut updates = Vec::new();
    let (mut indexed, mut touched) = (0, 0);
    let mut present = BTreeSet::new();
    for file in files {
        present.insert(file.name.clone());
        let Some(bytes) = file.content else { continue };
        let hash = hex(&Sha256::digest(&bytes));
        let fingerprint = format!("{}:{hash}", file.stamp);
        let source = SourceId::new(FILE_KIND, file.name.clone());
        let same_content = known
            .get(&file.name)
            .and_then(|f| f.rsplit_once(':'))
            .is_some_and(|(_, h)| h == hash);
        if same_content {
            touched += 1;
            updates.push(MemoryUpdate::Touch {
                source,
                fingerprint,
            });
        } else {
            indexed += 1;
            let text = String::from_utf8_lossy(&bytes);
            updates.push(MemoryUpdate::Replace {
                source,
                fingerprint,
                chunks: chunk_markdown(&text),
            });
        }
    }
    let mut removed = 0;
    for name in known.keys().filter(|n| !present.contains(*n)) {
        removed += 1;
        updates.push(MemoryUpdate::Delete {
            source: SourceId::new(FILE_KIND, name.clone()),
        });
    }
    (updates, (indexed, touched, removed))
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// An error and its causes, `: `-separated.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    toolgate_core::error_chain(error)
}
