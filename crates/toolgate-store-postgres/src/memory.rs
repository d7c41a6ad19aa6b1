//! [`MemoryIndex`] and [`SessionHistory`] for [`PostgresStore`].
//!
//! # How a search runs
//!
//! Chunks live in `memory_chunks`, each with a generated `tsvector`
//! (configuration `toolgate_english`: English stems, stop words dropped,
//! accents removed) under a GIN index, and its number of words (`len`).
//!
//! 1. The query's words (runs of letters and digits, lower-cased, distinct,
//!    at most [`MAX_TERMS`]) are each made a `tsquery` with
//!    `plainto_tsquery`, so they are stemmed as the chunks were; a stop
//!    word, or a word in no chunk, is dropped.
//! 2. Each word weighs its IDF, `ln(1 + (N − n + 0.5) / (n + 0.5))`, with
//!    `n`, the chunks that hold it, counted exactly through the index.
//! 3. A chunk's score is BM25 with each word counted once per chunk: the
//!    sum of its words' weights times
//!    `(k1 + 1) / (1 + k1 · (1 − b + b · len / avg_len))` (`k1 = 1.2`,
//!    `b = 0.75`), divided by the weight of all the query's words (at least
//!    `ln 10`) and capped at 1 — the same formula as `SQLite`'s index.
//!
//! How it differs from `SQLite`: the tokenizer (English stems and stop
//! words here, Porter stems of every word there), and `SQLite` estimates
//! the frequency of very common words and scores at most 1,024 candidates,
//! where `PostgreSQL` counts and scores them all. Ordinary queries rank the
//! same chunks in the same order on both; scores may differ a little.

use std::collections::BTreeMap;

use async_trait::async_trait;
use tokio_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::{Db as _, PostgresStore, begin, from_i64, from_json, now_ms, to_i64};
use toolgate_store::{
    MemoryApplied, MemoryChunk, MemoryHit, MemoryIndex, MemoryQuery, MemoryUpdate, SessionChange,
    SessionHistory, SessionMessage, SourceId, StoreError,
};

/// The most words of a query that are searched for; the rest are ignored.
const MAX_TERMS: usize = 32;

/// BM25's term-frequency saturation (`SQLite` FTS5's value).
const K1: f64 = 1.2;
/// BM25's length normalisation (`SQLite` FTS5's value).
const B: f64 = 0.75;

#[async_trait]
impl MemoryIndex for PostgresStore {
    async fn apply(&self, updates: Vec<MemoryUpdate>) -> Result<MemoryApplied, StoreError> {
        if updates.is_empty() {
            return Ok(MemoryApplied::default());
        }
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let mut done = MemoryApplied::default();
        let now = now_ms();
        for update in &updates {
            match update {
                MemoryUpdate::Replace {
                    source,
                    fingerprint,
                    chunks,
                } => {
                    let id = upsert_source(&tx, source, fingerprint, now).await?;
                    done.removed += delete_chunks(&tx, id).await?;
                    done.added += insert_chunks(&tx, id, chunks).await?;
                }
                MemoryUpdate::Append {
                    source,
                    expect,
                    fingerprint: new,
                    chunks,
                } => {
                    // Conditional on the fingerprint: the source's row is
                    // locked (or, for a new source, inserted) before the
                    // check, so two feeders appending at once add once.
                    let current = if expect.is_some() {
                        locked_fingerprint(&tx, source).await?
                    } else {
                        let inserted = tx
                            .query_opt(
                                "INSERT INTO memory_sources (kind, name, fingerprint, indexed)
                                     VALUES ($1, $2, $3, $4)
                                     ON CONFLICT (kind, name) DO NOTHING RETURNING id",
                                &[&source.kind, &source.name, new, &now],
                            )
                            .await
                            .db()?;
                        if let Some(row) = inserted {
                            done.added += insert_chunks(&tx, row.get(0), chunks).await?;
                            continue;
                        }
                        locked_fingerprint(&tx, source).await?
                    };
                    if current != *expect {
                        done.skipped += 1;
                        continue;
                    }
                    let id = upsert_source(&tx, source, new, now).await?;
                    done.added += insert_chunks(&tx, id, chunks).await?;
                }
                MemoryUpdate::Touch {
                    source,
                    fingerprint,
                } => {
                    tx.execute(
                        "UPDATE memory_sources SET fingerprint = $3, indexed = $4
                         WHERE kind = $1 AND name = $2",
                        &[&source.kind, &source.name, fingerprint, &now],
                    )
                    .await
                    .db()?;
                }
                MemoryUpdate::Delete { source } => {
                    let row = tx
                        .query_opt(
                            "SELECT id FROM memory_sources WHERE kind = $1 AND name = $2
                             FOR UPDATE",
                            &[&source.kind, &source.name],
                        )
                        .await
                        .db()?;
                    if let Some(row) = row {
                        let id: i64 = row.get(0);
                        done.removed += delete_chunks(&tx, id).await?;
                        tx.execute("DELETE FROM memory_sources WHERE id = $1", &[&id])
                            .await
                            .db()?;
                    }
                }
            }
        }
        tx.commit().await.db()?;
        Ok(done)
    }

    async fn fingerprints(&self, kind: &str) -> Result<BTreeMap<String, String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT name, fingerprint FROM memory_sources WHERE kind = $1",
                &[&kind],
            )
            .await
            .db()?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn fingerprint(&self, source: &SourceId) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        Ok(client
            .query_opt(
                "SELECT fingerprint FROM memory_sources WHERE kind = $1 AND name = $2",
                &[&source.kind, &source.name],
            )
            .await
            .db()?
            .map(|r| r.get(0)))
    }

    async fn search(&self, query: &MemoryQuery) -> Result<Vec<MemoryHit>, StoreError> {
        let terms = query_terms(&query.text);
        if terms.is_empty() || query.limit == 0 {
            return Ok(Vec::new());
        }
        let (ex_kinds, ex_names): (Vec<&str>, Vec<&str>) = query
            .exclude
            .iter()
            .map(|s| (s.kind.as_str(), s.name.as_str()))
            .unzip();
        let limit = to_i64(query.limit);
        let args: [&(dyn ToSql + Sync); 8] = [
            &terms,
            &query.kinds,
            &ex_kinds,
            &ex_names,
            &query.min_score,
            &limit,
            &K1,
            &B,
        ];
        let client = self.client().await?;
        let rows = client
            .query(
                "WITH words AS (
                    SELECT DISTINCT ON (q::TEXT) q
                    FROM (SELECT plainto_tsquery('toolgate_english', w) AS q
                          FROM UNNEST($1::TEXT[]) AS w) x
                    WHERE numnode(q) > 0
                 ), stats AS (
                    SELECT COUNT(*)::DOUBLE PRECISION AS total,
                           GREATEST(COALESCE(AVG(len), 1), 1)::DOUBLE PRECISION AS avg_len
                    FROM memory_chunks
                 ), weights AS (
                    SELECT w.q, ln(1 + (s.total - n.n + 0.5) / (n.n + 0.5)) AS idf
                    FROM words w, stats s,
                         LATERAL (SELECT COUNT(*)::DOUBLE PRECISION AS n FROM memory_chunks c
                                  WHERE c.tsv @@ w.q) n
                    WHERE n.n > 0
                 ), scored AS (
                    SELECT c.id, src.kind, src.name, c.position, c.text,
                           LEAST(1.0, SUM(w.idf) * ($7::DOUBLE PRECISION + 1)
                               / (1 + $7 * (1 - $8::DOUBLE PRECISION + $8 * c.len / s.avg_len))
                               / GREATEST((SELECT SUM(idf) FROM weights), ln(10))) AS score
                    FROM weights w
                    JOIN memory_chunks c ON c.tsv @@ w.q
                    JOIN memory_sources src ON src.id = c.source
                    CROSS JOIN stats s
                    WHERE (cardinality($2::TEXT[]) = 0 OR src.kind = ANY($2))
                      AND NOT EXISTS (
                          SELECT 1 FROM UNNEST($3::TEXT[], $4::TEXT[]) AS e (kind, name)
                          WHERE e.kind = src.kind AND e.name = src.name)
                    GROUP BY c.id, src.kind, src.name, c.position, c.text, c.len, s.avg_len
                 )
                 SELECT kind, name, position, text, score::DOUBLE PRECISION FROM scored
                 WHERE score >= $5::DOUBLE PRECISION
                 ORDER BY score DESC, id DESC
                 LIMIT $6",
                &args,
            )
            .await
            .db()?;
        Ok(rows
            .iter()
            .map(|r| MemoryHit {
                source: SourceId::new(r.get::<_, String>(0), r.get::<_, String>(1)),
                position: from_i64(r.get(2)),
                text: r.get(3),
                score: r.get(4),
            })
            .collect())
    }
}

#[async_trait]
impl SessionHistory for PostgresStore {
    async fn sessions_since(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<SessionChange>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, updated FROM sessions WHERE updated > $1 ORDER BY updated LIMIT $2",
                &[&after, &to_i64(limit)],
            )
            .await
            .db()?;
        Ok(rows
            .iter()
            .map(|r| SessionChange {
                session_id: r.get(0),
                updated: r.get(1),
            })
            .collect())
    }

    async fn messages_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Vec<SessionMessage>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT seq, json FROM messages WHERE session_id = $1 AND seq >= $2 ORDER BY seq",
                &[&session_id, &to_i64(from)],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(SessionMessage {
                    seq: from_i64(r.get(0)),
                    message: from_json(r.get(1))?,
                })
            })
            .collect()
    }
}

/// The fingerprint of a source, its row locked until the transaction ends.
async fn locked_fingerprint(
    client: &impl GenericClient,
    source: &SourceId,
) -> Result<Option<String>, StoreError> {
    Ok(client
        .query_opt(
            "SELECT fingerprint FROM memory_sources WHERE kind = $1 AND name = $2 FOR UPDATE",
            &[&source.kind, &source.name],
        )
        .await
        .db()?
        .map(|r| r.get(0)))
}

async fn upsert_source(
    client: &impl GenericClient,
    source: &SourceId,
    fingerprint: &str,
    now: i64,
) -> Result<i64, StoreError> {
    Ok(client
        .query_one(
            "INSERT INTO memory_sources (kind, name, fingerprint, indexed) VALUES ($1, $2, $3, $4)
             ON CONFLICT (kind, name) DO UPDATE SET fingerprint = excluded.fingerprint,
                indexed = excluded.indexed
             RETURNING id",
            &[&source.kind, &source.name, &fingerprint, &now],
        )
        .await
        .db()?
        .get(0))
}

async fn delete_chunks(client: &impl GenericClient, source: i64) -> Result<u64, StoreError> {
    client
        .execute("DELETE FROM memory_chunks WHERE source = $1", &[&source])
        .await
        .db()
}

async fn insert_chunks(
    client: &impl GenericClient,
    source: i64,
    chunks: &[MemoryChunk],
) -> Result<u64, StoreError> {
    if chunks.is_empty() {
        return Ok(0);
    }
    let positions: Vec<i64> = chunks.iter().map(|c| to_i64(c.position)).collect();
    let lens: Vec<i64> = chunks
        .iter()
        .map(|c| to_i64(words(&c.text).count()))
        .collect();
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    client
        .execute(
            "INSERT INTO memory_chunks (source, position, len, text)
             SELECT $1, position, len, text
             FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::TEXT[]) WITH ORDINALITY
                AS c (position, len, text, n)
             ORDER BY n",
            &[&source, &positions, &lens, &texts],
        )
        .await
        .db()
}

/// The words of a text: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The distinct words of a query, lower-cased, in order, at most
/// [`MAX_TERMS`].
fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words(text) {
        let word = word.to_lowercase();
        if !terms.contains(&word) {
            terms.push(word);
            if terms.len() == MAX_TERMS {
                break;
            }
        }
    }
    terms
}
