//! [`NoteStore`] for [`PostgresStore`].
//!
//! Notes are searched through a generated `tsvector` (title weighted A,
//! body D; configuration `toolgate_simple`: words as written, case and
//! accents folded) with prefix queries (`word:*`), ranked by `ts_rank`
//! (weights 0.1 for D and 1.0 for A: a title match counts ten times a body
//! match), negated so that lower is better as with `SQLite`'s BM25.

use async_trait::async_trait;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_i64, stamp, to_i64};
use toolgate_store::query_words;
use toolgate_store::{NewNote, Note, NoteHit, NoteStore, NoteUpdate, StoreError};

const NOTE: &str = "SELECT id, title, body, created, updated FROM notes";

#[async_trait]
impl NoteStore for PostgresStore {
    async fn create_note(&self, note: &NewNote) -> Result<Note, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let now = stamp(&tx, "notes").await?;
        let id: i64 = tx
            .query_one(
                "INSERT INTO notes (title, body, created, updated) VALUES ($1, $2, $3, $3)
                 RETURNING id",
                &[&note.title, &note.body, &now],
            )
            .await
            .db()?
            .get(0);
        tx.commit().await.db()?;
        Ok(Note {
            id,
            title: note.title.clone(),
            body: note.body.clone(),
            created: now,
            updated: now,
        })
    }

    async fn note(&self, id: i64) -> Result<Option<Note>, StoreError> {
        let client = self.client().await?;
        get(&**client, id, false).await
    }

    async fn list_notes(&self, limit: usize, offset: usize) -> Result<Vec<Note>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("{NOTE} ORDER BY updated DESC, id DESC LIMIT $1 OFFSET $2"),
                &[&to_i64(limit), &to_i64(offset)],
            )
            .await
            .db()?;
        Ok(rows.iter().map(note_row).collect())
    }

    async fn count_notes(&self) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COUNT(*) FROM notes", &[])
            .await
            .db()?;
        Ok(from_i64(row.get(0)))
    }

    async fn update_note(&self, id: i64, update: &NoteUpdate) -> Result<Option<Note>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let Some(mut note) = get(&tx, id, true).await? else {
            return Ok(None);
        };
        if let Some(title) = &update.title {
            note.title.clone_from(title);
        }
        if let Some(body) = &update.body {
            note.body.clone_from(body);
        }
        if let Some(more) = &update.append {
            if !note.body.is_empty() && !note.body.ends_with('\n') {
                note.body.push('\n');
            }
            note.body.push_str(more);
        }
        note.updated = stamp(&tx, "notes").await?;
        tx.execute(
            "UPDATE notes SET title = $2, body = $3, updated = $4 WHERE id = $1",
            &[&id, &note.title, &note.body, &note.updated],
        )
        .await
        .db()?;
        tx.commit().await.db()?;
        Ok(Some(note))
    }

    async fn delete_note(&self, id: i64) -> Result<Option<Note>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "DELETE FROM notes WHERE id = $1 RETURNING id, title, body, created, updated",
                &[&id],
            )
            .await
            .db()?;
        Ok(row.as_ref().map(note_row))
    }

    async fn search_notes(&self, query: &str, limit: usize) -> Result<Vec<NoteHit>, StoreError> {
        // Words hold letters and digits only: quoted, none needs escaping.
        let terms: Vec<String> = query_words(query)
            .into_iter()
            .map(|w| format!("'{w}':*"))
            .collect();
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let mut hits = search(&**client, &terms.join(" & "), limit, true).await?;
        if hits.is_empty() && terms.len() > 1 {
            hits = search(&**client, &terms.join(" | "), limit, false).await?;
        }
        Ok(hits)
    }
}

async fn search(
    client: &impl GenericClient,
    expression: &str,
    limit: usize,
    all_words: bool,
) -> Result<Vec<NoteHit>, StoreError> {
    let rows = client
        .query(
            "SELECT n.id, n.title, n.body, n.created, n.updated,
                    ts_headline('toolgate_simple', n.body, q,
                        'StartSel=[, StopSel=], MaxWords=16, MinWords=4, ShortWord=0,
                         MaxFragments=1, FragmentDelimiter=…'),
                    -ts_rank('{0.1, 0.2, 0.4, 1.0}', n.tsv, q)::DOUBLE PRECISION AS rank
             FROM notes n, to_tsquery('toolgate_simple', $1) q
             WHERE n.tsv @@ q
             ORDER BY rank, n.id DESC LIMIT $2",
            &[&expression, &to_i64(limit)],
        )
        .await
        .db()?;
    Ok(rows
        .iter()
        .map(|r| NoteHit {
            note: note_row(r),
            snippet: r.get(5),
            rank: r.get(6),
            all_words,
        })
        .collect())
}

async fn get(client: &impl GenericClient, id: i64, lock: bool) -> Result<Option<Note>, StoreError> {
    let sql = if lock {
        format!("{NOTE} WHERE id = $1 FOR UPDATE")
    } else {
        format!("{NOTE} WHERE id = $1")
    };
    Ok(client
        .query_opt(&sql, &[&id])
        .await
        .db()?
        .as_ref()
        .map(note_row))
}

fn note_row(r: &Row) -> Note {
    Note {
        id: r.get(0),
        title: r.get(1),
        body: r.get(2),
        created: r.get(3),
        updated: r.get(4),
    }
}
