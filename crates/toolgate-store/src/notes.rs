//! Notes: short texts the user asks the assistant to keep (seed 003's
//! `notes_tools`), with full-text search.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::StoreError;

/// Where notes are kept.
///
/// Notes are numbered records with a title and a body. They belong to the
/// workspace's store, not to a session: a note written in one run is there
/// in the next.
///
/// # Rules
///
/// 1. Ids are assigned by the store, increase, and are never reused, so an
///    id the model read earlier can never name a different note later.
/// 2. A note that does not exist is `Ok(None)` (get, update, delete), not
///    an error: the caller decides how to tell the user.
/// 3. [`update_note`](Self::update_note) changes only the fields it is
///    given, and always moves `updated` forward.
/// 4. [`search_notes`](Self::search_notes) matches words, not substrings:
///    the query is split into words (letters and digits), each word matches
///    the words of a note that start with it, case and accents ignored
///    (`cafe` finds `Café`). Notes holding every word come first, best
///    match first (BM25, a title match counting ten times a body match);
///    only when no note holds them all, notes holding any of them are
///    returned, best first. A query without words finds nothing.
/// 5. Listing orders by last update, newest first.
#[async_trait]
pub trait NoteStore: Send + Sync {
    /// Stores a new note and returns it with its id and times.
    async fn create_note(&self, note: &NewNote) -> Result<Note, StoreError>;

    /// One note, or `None` when no note has this id.
    async fn note(&self, id: i64) -> Result<Option<Note>, StoreError>;

    /// Up to `limit` notes, most recently updated first, after skipping
    /// `offset` of them.
    async fn list_notes(&self, limit: usize, offset: usize) -> Result<Vec<Note>, StoreError>;

    /// How many notes there are.
    async fn count_notes(&self) -> Result<u64, StoreError>;

    /// Changes a note; `None` when no note has this id.
    async fn update_note(&self, id: i64, update: &NoteUpdate) -> Result<Option<Note>, StoreError>;

    /// Removes a note and returns what it held; `None` when no note has
    /// this id.
    async fn delete_note(&self, id: i64) -> Result<Option<Note>, StoreError>;

    /// Up to `limit` notes that match `query` (rule 4), best first.
    async fn search_notes(&self, query: &str, limit: usize) -> Result<Vec<NoteHit>, StoreError>;
}

/// A note to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewNote {
    /// A short title.
    pub title: String,
    /// The text.
    pub body: String,
}

/// Changes to a note: `None` keeps a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteUpdate {
    /// A new title.
    pub title: Option<String>,
    /// A new body, replacing the old one.
    pub body: Option<String>,
    /// Text added at the end of the body, on a line of its own (after
    /// `body`, when both are given).
    pub append: Option<String>,
}

/// A stored note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The id (rule 1).
    pub id: i64,
    /// The title.
    pub title: String,
    /// The text.
    pub body: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created: i64,
    /// When it was last changed, in milliseconds since the Unix epoch.
    pub updated: i64,
}

/// A note found by [`NoteStore::search_notes`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteHit {
    /// The note.
    pub note: Note,
    /// The part of the body around the first match, with the matched words
    /// in `[brackets]` and `…` where text was left out.
    pub snippet: String,
    /// The BM25 rank: lower is better (`SQLite` FTS5's sign convention).
    pub rank: f64,
    /// Whether the note holds every word of the query (rule 4).
    pub all_words: bool,
}

/// The words of a search query, as [`NoteStore::search_notes`] reads them:
/// runs of letters and digits, everything else a separator. Any backend's
/// search splits queries this way, so that the same query finds the same
/// notes in all of them.
pub fn query_words(query: &str) -> Vec<&str> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_drop_every_operator() {
        let cases: &[(&str, &[&str])] = &[
            ("shopping list", &["shopping", "list"]),
            ("  \"quoted\"  ", &["quoted"]),
            ("a OR b*", &["a", "OR", "b"]),
            ("NEAR(x y) -z ^w", &["NEAR", "x", "y", "z", "w"]),
            ("café, niño", &["café", "niño"]),
            ("title:secret", &["title", "secret"]),
            ("***", &[]),
            ("", &[]),
        ];
        for (query, words) in cases {
            assert_eq!(query_words(query), *words, "{query:?}");
        }
    }
}
