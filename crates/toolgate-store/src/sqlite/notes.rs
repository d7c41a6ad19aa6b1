//! [`NoteStore`] for [`SqliteStore`]: a table and its FTS5 index (migration 5).

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, Row, params};

use super::{Db as _, SqliteStore, from_i64, now_ms, to_i64, write_tx};
use crate::notes::query_words;
use crate::{NewNote, Note, NoteHit, NoteStore, NoteUpdate, StoreError};

/// The columns of a [`Note`], read by [`note_row`].
const NOTE: &str = "SELECT id, title, body, created, updated FROM notes";

/// How much a title match weighs against a body match in the ranking.
const TITLE_WEIGHT: f64 = 10.0;

#[async_trait]
impl NoteStore for SqliteStore {
    async fn create_note(&self, note: &NewNote) -> Result<Note, StoreError> {
        let note = note.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let now = stamp(&tx)?;
            let id: i64 = tx
                .query_row(
                    "INSERT INTO notes (title, body, created, updated) VALUES (?1, ?2, ?3, ?3)
                     RETURNING id",
                    params![note.title, note.body, now],
                    |r| r.get(0),
                )
                .db()?;
            tx.commit().db()?;
            Ok(Note {
                id,
                title: note.title,
                body: note.body,
                created: now,
                updated: now,
            })
        })
        .await
    }

    async fn note(&self, id: i64) -> Result<Option<Note>, StoreError> {
        self.with_conn(move |conn| get(conn, id)).await
    }

    async fn list_notes(&self, limit: usize, offset: usize) -> Result<Vec<Note>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare(&format!(
                    "{NOTE} ORDER BY updated DESC, id DESC LIMIT ?1 OFFSET ?2"
                ))
                .db()?;
            st.query_map(params![to_i64(limit), to_i64(offset)], note_row)
                .db()?
                .collect::<Result<_, _>>()
                .db()
        })
        .await
    }

    async fn count_notes(&self) -> Result<u64, StoreError> {
        self.with_conn(|conn| {
            conn.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get::<_, i64>(0))
                .db()
                .map(from_i64)
        })
        .await
    }

    async fn update_note(&self, id: i64, update: &NoteUpdate) -> Result<Option<Note>, StoreError> {
        let update = update.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(mut note) = get(&tx, id)? else {
                return Ok(None);
            };
            if let Some(title) = update.title {
                note.title = title;
            }
            if let Some(body) = update.body {
                note.body = body;
            }
            if let Some(more) = update.append {
                if !note.body.is_empty() && !note.body.ends_with('\n') {
                    note.body.push('\n');
                }
                note.body.push_str(&more);
            }
            note.updated = stamp(&tx)?;
            tx.execute(
                "UPDATE notes SET title = ?2, body = ?3, updated = ?4 WHERE id = ?1",
                params![id, note.title, note.body, note.updated],
            )
            .db()?;
            tx.commit().db()?;
            Ok(Some(note))
        })
        .await
    }

    async fn delete_note(&self, id: i64) -> Result<Option<Note>, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let note = get(&tx, id)?;
            if note.is_some() {
                tx.execute("DELETE FROM notes WHERE id = ?1", [id]).db()?;
            }
            tx.commit().db()?;
            Ok(note)
        })
        .await
    }

    async fn search_notes(&self, query: &str, limit: usize) -> Result<Vec<NoteHit>, StoreError> {
        // Every word becomes a quoted FTS5 string with a prefix star, so no
        // operator, column filter or syntax error can come from the query.
        let terms: Vec<String> = query_words(query)
            .into_iter()
            .map(|w| format!("\"{w}\"*"))
            .collect();
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        self.with_conn(move |conn| {
            let tx = conn.transaction().db()?;
            let mut hits = search(&tx, &terms.join(" AND "), limit, true)?;
            if hits.is_empty() && terms.len() > 1 {
                hits = search(&tx, &terms.join(" OR "), limit, false)?;
            }
            Ok(hits)
        })
        .await
    }
}

/// Runs one FTS5 match; the rank weighs titles over bodies.
fn search(
    conn: &Connection,
    expression: &str,
    limit: usize,
    all_words: bool,
) -> Result<Vec<NoteHit>, StoreError> {
    let mut st = conn
        .prepare_cached(
            "SELECT n.id, n.title, n.body, n.created, n.updated,
                    snippet(notes_fts, 1, '[', ']', '…', 16),
                    bm25(notes_fts, ?3, 1.0) AS rank
             FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
             WHERE notes_fts MATCH ?1
             ORDER BY rank, n.id DESC LIMIT ?2",
        )
        .db()?;
    st.query_map(params![expression, to_i64(limit), TITLE_WEIGHT], |r| {
        Ok(NoteHit {
            note: note_row(r)?,
            snippet: r.get(5)?,
            rank: r.get(6)?,
            all_words,
        })
    })
    .db()?
    .collect::<Result<_, _>>()
    .db()
}

fn get(conn: &Connection, id: i64) -> Result<Option<Note>, StoreError> {
    conn.query_row(&format!("{NOTE} WHERE id = ?1"), [id], note_row)
        .optional()
        .db()
}

fn note_row(r: &Row<'_>) -> rusqlite::Result<Note> {
    Ok(Note {
        id: r.get(0)?,
        title: r.get(1)?,
        body: r.get(2)?,
        created: r.get(3)?,
        updated: r.get(4)?,
    })
}

/// The time of a write: now, but after every note's `updated`, so that
/// listing by `updated` is the exact order of the writes, also within one
/// millisecond. (Called inside the write transaction.)
fn stamp(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row(
        "SELECT MAX(?1, COALESCE(MAX(updated) + 1, 0)) FROM notes",
        [now_ms()],
        |r| r.get(0),
    )
    .db()
}
