//! The memory index: full-text search over what an agent remembers, and the
//! session history it is fed from.
//!
//! The index knows nothing about files or sessions: it holds *sources*
//! (a [`SourceId`]: a kind such as `file`, `session` or `note`, and a name
//! unique within the kind), each cut into [`MemoryChunk`]s, and for each
//! source a *fingerprint* — whatever its feeder needs to tell later whether
//! the source changed since it was indexed (a file's mtime, size and hash;
//! how far into a session it got). Feeders compare fingerprints and send
//! only what changed ([`MemoryIndex::apply`]), so indexing is incremental.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// What a source of the memory index is: its kind and its name within the
/// kind (`file` + `2025-01-15.md`, `session` + `s19a…`, `note` + `42`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceId {
    /// The kind of source (`file`, `session`, `note`, …).
    pub kind: String,
    /// The source's name, unique within its kind.
    pub name: String,
}

impl SourceId {
    /// A source of `kind` named `name`.
    pub fn new(kind: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            name: name.into(),
        }
    }
}

/// One searchable piece of a source: a fact, a paragraph, a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryChunk {
    /// Where the chunk is in its source: the first line for a file or a
    /// note, the message index for a session. Several chunks may share one
    /// (a long message cut in pieces).
    pub position: u64,
    /// The text, as it is shown in results.
    pub text: String,
}

impl MemoryChunk {
    /// A chunk at `position`.
    pub fn new(position: u64, text: impl Into<String>) -> Self {
        Self {
            position,
            text: text.into(),
        }
    }
}

/// A change to the memory index, for [`MemoryIndex::apply`]. Exhaustive on
/// purpose: every backend (`toolgate-store-postgres` is another crate) must
/// handle every kind of change, and the compiler says so when one is added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemoryUpdate {
    /// Replaces every chunk of `source` (creating the source if needed) and
    /// remembers `fingerprint`. Idempotent.
    Replace {
        /// The source.
        source: SourceId,
        /// What the feeder saw.
        fingerprint: String,
        /// The source's chunks.
        chunks: Vec<MemoryChunk>,
    },
    /// Adds `chunks` to `source` and remembers `fingerprint`, if the
    /// fingerprint remembered now is `expect` (`None`: the source is not
    /// indexed yet); otherwise changes nothing and counts the update as
    /// skipped (another feeder got there first).
    Append {
        /// The source.
        source: SourceId,
        /// The fingerprint the feeder last saw.
        expect: Option<String>,
        /// The fingerprint after the append.
        fingerprint: String,
        /// The chunks to add.
        chunks: Vec<MemoryChunk>,
    },
    /// Remembers a new fingerprint for a source whose content is unchanged
    /// (a file touched but not edited). Nothing happens to a source that
    /// is not indexed.
    Touch {
        /// The source.
        source: SourceId,
        /// The new fingerprint.
        fingerprint: String,
    },
    /// Forgets a source and its chunks.
    Delete {
        /// The source.
        source: SourceId,
    },
}

/// What [`MemoryIndex::apply`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryApplied {
    /// Chunks added.
    pub added: u64,
    /// Chunks removed (replaced or deleted).
    pub removed: u64,
    /// Appends skipped because the fingerprint was not the expected one.
    pub skipped: u64,
}

/// A search of the memory index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryQuery {
    /// Free text; its words are searched for (any of them).
    pub text: String,
    /// The most hits returned.
    pub limit: usize,
    /// The lowest score returned, between 0 and 1.
    pub min_score: f64,
    /// Only these kinds of source, when not empty.
    pub kinds: Vec<String>,
    /// Never these sources (the session the search is made from, say).
    pub exclude: Vec<SourceId>,
}

impl MemoryQuery {
    /// A search for `text`: at most 5 hits, scores from 0.1, every source.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            limit: 5,
            min_score: 0.1,
            kinds: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

/// One result of [`MemoryIndex::search`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryHit {
    /// The source the chunk belongs to.
    pub source: SourceId,
    /// The chunk's position in its source.
    pub position: u64,
    /// The chunk's text.
    pub text: String,
    /// How well it matches, from 0 to 1 (see [`MemoryIndex::search`]).
    pub score: f64,
}

/// A full-text index of memory: sources cut in chunks, searched with BM25.
///
/// # Rules
///
/// 1. A source is a [`SourceId`]; the index remembers, for each, the
///    fingerprint its feeder gave with the last update, and
///    [`fingerprints`](Self::fingerprints) returns them, so that a feeder
///    re-sends only the sources that changed.
/// 2. [`apply`](Self::apply) is atomic: all its updates are stored, or
///    none. [`MemoryUpdate::Append`] is conditional on the fingerprint, so
///    two feeders appending the same new messages add them once.
/// 3. [`search`](Self::search) splits the query into words (runs of
///    letters and digits), finds the chunks containing any of them, and
///    ranks them by Okapi BM25. The score is BM25 divided by the sum of
///    the query words' IDF weights, capped at 1: 1.0 is an entry of
///    average length that contains every searched word; an entry that
///    contains only words found nearly everywhere scores near 0.
///    (Backends document their tokenizer and any approximation.)
/// 4. Hits are ordered by score, best first, then newest first; a query
///    with no words returns nothing.
#[async_trait]
pub trait MemoryIndex: Send + Sync {
    /// Applies `updates`, in order, in one transaction.
    async fn apply(&self, updates: Vec<MemoryUpdate>) -> Result<MemoryApplied, StoreError>;

    /// The remembered fingerprint of every source of `kind`, by name.
    async fn fingerprints(&self, kind: &str) -> Result<BTreeMap<String, String>, StoreError>;

    /// The remembered fingerprint of one source.
    async fn fingerprint(&self, source: &SourceId) -> Result<Option<String>, StoreError>;

    /// The best chunks for `query` (see the rules above).
    async fn search(&self, query: &MemoryQuery) -> Result<Vec<MemoryHit>, StoreError>;
}

/// A session written since a point in time, for [`SessionHistory`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionChange {
    /// The session.
    pub session_id: String,
    /// Its last write's stamp ([`SessionSummary::updated`](crate::SessionSummary::updated)).
    pub updated: i64,
}

/// One stored message of a session, for [`SessionHistory`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMessage {
    /// Its index in the conversation, from 0.
    pub seq: u64,
    /// The message, as the agent stored it.
    pub message: Value,
}

/// The session history, read as the memory index's feeder needs it: which
/// sessions changed since a stamp, and a session's messages from an index
/// on.
///
/// # Rules
///
/// 1. Stamps are [`SessionSummary::updated`](crate::SessionSummary::updated):
///    unique and increasing with every write to the store, so a feeder
///    that remembers the highest stamp it has seen misses no later write.
/// 2. [`sessions_since`](Self::sessions_since) returns the sessions whose
///    stamp is above `after`, lowest stamp first, at most `limit`; a
///    feeder continues from the last one's stamp.
/// 3. [`messages_from`](Self::messages_from) returns the messages stored
///    now from index `from` on, in order (none for an unknown session). A
///    session's earlier messages can be rewritten (context compression
///    replaces the conversation from some index on), so a feeder checks
///    that the last message it indexed is still there.
#[async_trait]
pub trait SessionHistory: Send + Sync {
    /// Sessions written after the stamp `after`, oldest write first.
    async fn sessions_since(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<SessionChange>, StoreError>;

    /// A session's messages from index `from` on.
    async fn messages_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Vec<SessionMessage>, StoreError>;
}
