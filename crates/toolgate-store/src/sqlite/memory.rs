//! [`MemoryIndex`] and [`SessionHistory`] for [`SqliteStore`].
//!
//! # How a search runs
//!
//! Chunks live in `memory_chunks`; an external-content FTS5 table,
//! `memory_fts`, indexes their text (tokenizer `porter unicode61
//! remove_diacritics 2`: Porter stemming, Unicode case folding, accents
//! removed; `detail=none`, since only which chunks contain a word is ever
//! asked). Triggers keep it and the counts in `memory_stats` (chunks,
//! words) in step with the table.
//!
//! FTS5 finds the chunks; the ranking is computed here. FTS5's own `bm25()`
//! costs a few microseconds per matching row (measured 3–6 µs: it looks up
//! each row's size), and a query of everyday words matches tens of
//! thousands of rows in a large memory, while fetching the matching row ids
//! costs a fraction of a microsecond each. So, for a query:
//!
//! 1. The query's words (runs of letters and digits, lower-cased, at most
//!    [`MAX_TERMS`]) are each looked up as an FTS5 phrase, so FTS5 stems
//!    and folds them exactly as it did the chunks. A word in no chunk is
//!    dropped: it says nothing about which chunk is meant.
//! 2. A word in at most `common` chunks (1/16 of them, at least 256) is
//!    *rare*: all its chunks are fetched and its document frequency is
//!    exact. A word in more is *common*: its first 512 chunks are fetched
//!    (and up to `common` + 1 when their density leaves it in doubt), and
//!    its frequency is estimated from how far into the table they reach
//!    (row ids grow with time, so the prefix's density is the word's
//!    density).
//! 3. Each word weighs its IDF, `ln(1 + (N − n + 0.5) / (n + 0.5))`
//!    (`N` chunks, `n` of them with the word: the always-positive form
//!    Lucene uses). The candidates are the chunks with a rare word, and
//!    each common word adds its weight to the candidates that have it
//!    (asked of FTS5 as `(rare OR …) AND common`, which FTS5 answers by
//!    seeking, not scanning). A query of common words only is answered from
//!    the most recent `common` chunks.
//! 4. A candidate's BM25 score is the sum of its words' weights times
//!    `(k1 + 1) / (1 + k1 · (1 − b + b · len / avg_len))`, with `k1 = 1.2`,
//!    `b = 0.75` (FTS5's constants) and each word counted once per chunk
//!    (chunks are short). Candidates are visited by decreasing weight,
//!    newest first; a chunk's length is read only while the weight times
//!    the largest length factor can still beat the current `limit`-th
//!    score, and for at most 1,024 candidates: among thousands of chunks
//!    with the same words, the newest are ranked.
//! 5. The score returned is BM25 divided by the sum of the weights of the
//!    query's words that are in the index (at least `ln 10`, the weight of
//!    a word found in one chunk in ten), capped at 1: 1.0 is a chunk of
//!    average length with every word; a chunk with only words found nearly
//!    everywhere scores near 0.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, params};

use super::{Db as _, SqliteStore, from_i64, now_ms, to_i64, write_tx};
use crate::{
    MemoryApplied, MemoryChunk, MemoryHit, MemoryIndex, MemoryQuery, MemoryUpdate, SessionChange,
    SessionHistory, SessionMessage, SourceId, StoreError,
};

/// The most words of a query that are searched for; the rest are ignored.
pub(crate) const MAX_TERMS: usize = 32;

/// BM25's term-frequency saturation (FTS5's value).
const K1: f64 = 1.2;
/// BM25's length normalisation (FTS5's value).
const B: f64 = 0.75;

/// The least a query's words weigh together when scores are normalised:
/// the weight of a word found in one chunk in ten. A query of words found
/// nearly everywhere then scores near 0 instead of 1.
const MIN_QUERY_WEIGHT: f64 = std::f64::consts::LN_10;

/// Chunks read first of every word: a word found in more, and whose
/// density over them makes it common, is not read further.
const PROBE: usize = 512;

/// The most candidates scored exactly (their lengths read): those with the
/// most weight, newest first. Beyond them, a query of everyday words would
/// read thousands of lengths to order chunks that match the same words.
const MAX_SCORED: usize = 1024;

/// Candidates whose lengths are read in one query.
const BATCH: usize = 128;

#[async_trait]
impl MemoryIndex for SqliteStore {
    async fn apply(&self, updates: Vec<MemoryUpdate>) -> Result<MemoryApplied, StoreError> {
        if updates.is_empty() {
            return Ok(MemoryApplied::default());
        }
        self.with_conn(move |conn| apply(conn, &updates)).await
    }

    async fn fingerprints(&self, kind: &str) -> Result<BTreeMap<String, String>, StoreError> {
        let kind = kind.to_owned();
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached("SELECT name, fingerprint FROM memory_sources WHERE kind = ?1")
                .db()?;
            st.query_map([&kind], |r| Ok((r.get(0)?, r.get(1)?)))
                .db()?
                .collect::<Result<_, _>>()
                .db()
        })
        .await
    }

    async fn fingerprint(&self, source: &SourceId) -> Result<Option<String>, StoreError> {
        let source = source.clone();
        self.with_conn(move |conn| fingerprint(conn, &source)).await
    }

    async fn search(&self, query: &MemoryQuery) -> Result<Vec<MemoryHit>, StoreError> {
        let query = query.clone();
        self.with_conn(move |conn| {
            // One read transaction: the counts and the rows come from one
            // snapshot.
            let tx = conn.transaction().db()?;
            search(&tx, &query)
        })
        .await
    }
}

#[async_trait]
impl SessionHistory for SqliteStore {
    async fn sessions_since(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<SessionChange>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached(
                    "SELECT id, updated FROM sessions WHERE updated > ?1
                     ORDER BY updated LIMIT ?2",
                )
                .db()?;
            st.query_map(params![after, to_i64(limit)], |r| {
                Ok(SessionChange {
                    session_id: r.get(0)?,
                    updated: r.get(1)?,
                })
            })
            .db()?
            .collect::<Result<_, _>>()
            .db()
        })
        .await
    }

    async fn messages_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Vec<SessionMessage>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached(
                    "SELECT seq, json FROM messages WHERE session_id = ?1 AND seq >= ?2
                     ORDER BY seq",
                )
                .db()?;
            let rows = st
                .query_map(params![id, to_i64(from)], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter()
                .map(|(seq, json)| {
                    Ok(SessionMessage {
                        seq: from_i64(seq),
                        message: serde_json::from_str(&json).map_err(StoreError::Json)?,
                    })
                })
                .collect()
        })
        .await
    }
}

fn fingerprint(conn: &Connection, source: &SourceId) -> Result<Option<String>, StoreError> {
    conn.prepare_cached("SELECT fingerprint FROM memory_sources WHERE kind = ?1 AND name = ?2")
        .db()?
        .query_row(params![source.kind, source.name], |r| r.get(0))
        .optional()
        .db()
}

fn apply(conn: &mut Connection, updates: &[MemoryUpdate]) -> Result<MemoryApplied, StoreError> {
    let tx = write_tx(conn)?;
    let mut done = MemoryApplied::default();
    let now = now_ms();
    for update in updates {
        match update {
            MemoryUpdate::Replace {
                source,
                fingerprint,
                chunks,
            } => {
                let id = upsert_source(&tx, source, fingerprint, now)?;
                done.removed += delete_chunks(&tx, id)?;
                done.added += insert_chunks(&tx, id, chunks)?;
            }
            MemoryUpdate::Append {
                source,
                expect,
                fingerprint: new,
                chunks,
            } => {
                if fingerprint(&tx, source)? != *expect {
                    done.skipped += 1;
                    continue;
                }
                let id = upsert_source(&tx, source, new, now)?;
                done.added += insert_chunks(&tx, id, chunks)?;
            }
            MemoryUpdate::Touch {
                source,
                fingerprint,
            } => {
                tx.prepare_cached(
                    "UPDATE memory_sources SET fingerprint = ?3, indexed = ?4
                     WHERE kind = ?1 AND name = ?2",
                )
                .db()?
                .execute(params![source.kind, source.name, fingerprint, now])
                .db()?;
            }
            MemoryUpdate::Delete { source } => {
                let id: Option<i64> = tx
                    .prepare_cached("SELECT id FROM memory_sources WHERE kind = ?1 AND name = ?2")
                    .db()?
                    .query_row(params![source.kind, source.name], |r| r.get(0))
                    .optional()
                    .db()?;
                if let Some(id) = id {
                    done.removed += delete_chunks(&tx, id)?;
                    tx.prepare_cached("DELETE FROM memory_sources WHERE id = ?1")
                        .db()?
                        .execute([id])
                        .db()?;
                }
            }
        }
    }
    tx.commit().db()?;
    Ok(done)
}

fn upsert_source(
    conn: &Connection,
    source: &SourceId,
    fingerprint: &str,
    now: i64,
) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO memory_sources (kind, name, fingerprint, indexed) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (kind, name) DO UPDATE SET fingerprint = excluded.fingerprint,
            indexed = excluded.indexed
         RETURNING id",
    )
    .db()?
    .query_row(params![source.kind, source.name, fingerprint, now], |r| {
        r.get(0)
    })
    .db()
}

fn delete_chunks(conn: &Connection, source: i64) -> Result<u64, StoreError> {
    conn.prepare_cached("DELETE FROM memory_chunks WHERE source = ?1")
        .db()?
        .execute([source])
        .db()
        .map(|n| n as u64)
}

fn insert_chunks(
    conn: &Connection,
    source: i64,
    chunks: &[MemoryChunk],
) -> Result<u64, StoreError> {
    let mut insert = conn
        .prepare_cached(
            "INSERT INTO memory_chunks (source, position, len, text) VALUES (?1, ?2, ?3, ?4)",
        )
        .db()?;
    for chunk in chunks {
        insert
            .execute(params![
                source,
                to_i64(chunk.position),
                to_i64(words(&chunk.text).count()),
                chunk.text
            ])
            .db()?;
    }
    Ok(chunks.len() as u64)
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

/// A word as an FTS5 string (a one-word phrase): FTS5 tokenizes it as it
/// tokenized the chunks. Words hold letters and digits only, so no quote
/// needs escaping.
fn phrase(term: &str) -> String {
    format!("\"{term}\"")
}

/// BM25's length factor for a chunk of `len` words, with the term counted
/// once.
fn length_factor(len: f64, avg_len: f64) -> f64 {
    (K1 + 1.0) / (1.0 + K1 * (1.0 - B + B * len / avg_len))
}

/// BM25's IDF, in the always-positive form.
fn idf(chunks: f64, with_term: f64) -> f64 {
    (1.0 + (chunks - with_term + 0.5) / (with_term + 0.5)).ln()
}

/// How many chunks make a word common (rule 2 in the [module docs](self)).
fn common_threshold(chunks: i64) -> usize {
    usize::try_from(chunks / 16).unwrap_or(usize::MAX).max(256)
}

struct Term {
    phrase: String,
    weight: f64,
    /// The chunks with the word, for a rare word; `None` for a common one.
    rows: Option<Vec<i64>>,
}

#[expect(
    clippy::cast_precision_loss,
    reason = "counts far below 2^52 become weights"
)]
fn search(conn: &Connection, q: &MemoryQuery) -> Result<Vec<MemoryHit>, StoreError> {
    let terms = query_terms(&q.text);
    if terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let (chunks, tokens): (i64, i64) = conn
        .prepare_cached("SELECT chunks, tokens FROM memory_stats WHERE id = 1")
        .db()?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .db()?;
    if chunks <= 0 {
        return Ok(Vec::new());
    }
    // Two statements: SQLite answers a lone MIN or MAX from the b-tree's
    // edge, but scans the table for both in one.
    let edge = |sql: &str| -> Result<i64, StoreError> {
        conn.prepare_cached(sql)
            .db()?
            .query_row([], |r| r.get::<_, Option<i64>>(0))
            .db()
            .map(Option::unwrap_or_default)
    };
    let min_id = edge("SELECT MIN(id) FROM memory_chunks")?;
    let max_id = edge("SELECT MAX(id) FROM memory_chunks")?;
    let n = chunks as f64;
    let avg_len = (tokens as f64 / n).max(1.0);
    let common = common_threshold(chunks);
    // A word's frequency from how far into the table its first `rows`
    // chunks reach (rule 2).
    let estimate = |rows: usize, last: i64| {
        let reach = (last - min_id + 1).max(1) as f64;
        let span = (max_id - min_id + 1).max(1) as f64;
        (rows as f64 * span / reach).clamp(rows as f64, n)
    };

    // Rules 1–3: look each word up; rare words bring their chunks. A probe
    // of the first `PROBE` chunks tells most common words without reading
    // thousands of rows.
    let mut found = Vec::new();
    {
        let mut lookup = conn
            .prepare_cached(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 AND rowid > ?2
                 ORDER BY rowid LIMIT ?3",
            )
            .db()?;
        let mut fetch = |phrase: &str, after: i64, limit: usize| -> Result<Vec<i64>, StoreError> {
            lookup
                .query_map(params![phrase, after, to_i64(limit)], |r| {
                    r.get::<_, i64>(0)
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()
        };
        let probe = PROBE.min(common);
        for term in &terms {
            let phrase = phrase(term);
            let mut rows = fetch(&phrase, i64::MIN, probe + 1)?;
            let Some(&last) = rows.last() else { continue };
            let mut is_common = false;
            if rows.len() > probe {
                if estimate(rows.len(), last) > common as f64 {
                    is_common = true;
                } else {
                    let more = fetch(&phrase, last, common + 1 - rows.len())?;
                    rows.extend(more);
                    is_common = rows.len() > common;
                }
            }
            if is_common {
                let last = rows.last().copied().unwrap_or(last);
                found.push(Term {
                    phrase,
                    weight: idf(n, estimate(rows.len(), last)),
                    rows: None,
                });
                continue;
            }
            found.push(Term {
                phrase,
                weight: idf(n, rows.len() as f64),
                rows: Some(rows),
            });
        }
    }
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let total_weight: f64 = found
        .iter()
        .map(|t| t.weight)
        .sum::<f64>()
        .max(MIN_QUERY_WEIGHT);

    let mut sums: HashMap<i64, f64> = HashMap::new();
    let rare: Vec<&str> = found
        .iter()
        .filter(|t| t.rows.is_some())
        .map(|t| t.phrase.as_str())
        .collect();
    for term in &found {
        for row in term.rows.iter().flatten() {
            *sums.entry(*row).or_default() += term.weight;
        }
    }
    if rare.is_empty() {
        // Only common words: the most recent `common` chunks (rule 3).
        let from = max_id - to_i64(common);
        let mut window = conn
            .prepare_cached("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 AND rowid > ?2")
            .db()?;
        for term in &found {
            for row in window
                .query_map(params![term.phrase, from], |r| r.get::<_, i64>(0))
                .db()?
            {
                *sums.entry(row.db()?).or_default() += term.weight;
            }
        }
    } else {
        let any_rare = format!("({})", rare.join(" OR "));
        let mut having = conn
            .prepare_cached("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1")
            .db()?;
        for term in found.iter().filter(|t| t.rows.is_none()) {
            let expr = format!("{any_rare} AND {}", term.phrase);
            for row in having.query_map([expr], |r| r.get::<_, i64>(0)).db()? {
                *sums.entry(row.db()?).or_default() += term.weight;
            }
        }
    }

    // Rule 4: visit candidates by decreasing weight, newest first.
    let mut candidates: Vec<(i64, f64)> = sums.into_iter().collect();
    candidates.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    let best_factor = length_factor(0.0, avg_len);
    let mut best: Vec<Ranked> = Vec::with_capacity(q.limit + 1);
    let mut fetch = conn
        .prepare_cached(
            "SELECT c.id, c.len, c.position, c.source
             FROM json_each(?1) j JOIN memory_chunks c ON c.id = j.value",
        )
        .db()?;
    let mut source_of = conn
        .prepare_cached("SELECT kind, name FROM memory_sources WHERE id = ?1")
        .db()?;
    let mut sources: HashMap<i64, SourceId> = HashMap::new();
    let mut source = |id: i64| -> Result<SourceId, StoreError> {
        if let Some(source) = sources.get(&id) {
            return Ok(source.clone());
        }
        let source = source_of
            .query_row([id], |r| {
                Ok(SourceId {
                    kind: r.get(0)?,
                    name: r.get(1)?,
                })
            })
            .db()?;
        sources.insert(id, source.clone());
        Ok(source)
    };
    let filtered = !q.kinds.is_empty() || !q.exclude.is_empty();
    for batch in candidates.chunks(BATCH).take(MAX_SCORED / BATCH) {
        let bound = batch[0].1 * best_factor;
        if bound / total_weight < q.min_score
            || (best.len() == q.limit && best.last().is_some_and(|kth| bound < kth.bm25))
        {
            break;
        }
        let mut ids = String::from("[");
        for (i, (id, _)) in batch.iter().enumerate() {
            if i > 0 {
                ids.push(',');
            }
            let _ = write!(ids, "{id}");
        }
        ids.push(']');
        let weights: HashMap<i64, f64> = batch.iter().copied().collect();
        let rows = fetch
            .query_map([ids], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .db()?
            .collect::<Result<Vec<_>, _>>()
            .db()?;
        for (id, len, position, source_id) in rows {
            let weight = weights.get(&id).copied().unwrap_or(0.0);
            let bm25 = weight * length_factor(len as f64, avg_len);
            if bm25 / total_weight < q.min_score {
                continue;
            }
            let ranked = Ranked {
                id,
                bm25,
                source: source_id,
                position: from_i64(position),
            };
            let at = best.partition_point(|b| b.outranks(&ranked));
            if at >= q.limit {
                continue;
            }
            if filtered {
                let SourceId { kind, name } = source(source_id)?;
                if (!q.kinds.is_empty() && !q.kinds.contains(&kind))
                    || q.exclude.iter().any(|s| s.kind == kind && s.name == name)
                {
                    continue;
                }
            }
            best.insert(at, ranked);
            best.truncate(q.limit);
        }
    }

    let mut text = conn
        .prepare_cached("SELECT text FROM memory_chunks WHERE id = ?1")
        .db()?;
    best.into_iter()
        .map(|b| {
            Ok(MemoryHit {
                text: text.query_row([b.id], |r| r.get(0)).db()?,
                score: (b.bm25 / total_weight).min(1.0),
                source: source(b.source)?,
                position: b.position,
            })
        })
        .collect()
}

/// A candidate with its exact score.
struct Ranked {
    id: i64,
    bm25: f64,
    /// The source's row id.
    source: i64,
    position: u64,
}

impl Ranked {
    /// Whether `self` comes before `other`: higher score, then newer.
    fn outranks(&self, other: &Self) -> bool {
        self.bm25
            .total_cmp(&other.bm25)
            .then(self.id.cmp(&other.id))
            .is_gt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_are_distinct_lowercase_words() {
        let cases: &[(&str, &[&str])] = &[
            (
                "What is my dog's name?",
                &["what", "is", "my", "dog", "s", "name"],
            ),
            ("Café  CAFÉ café", &["café"]),
            ("--- !!! ", &[]),
            ("\"quoted\" OR NEAR(x)", &["quoted", "or", "near", "x"]),
            ("2025-01-15 14:32", &["2025", "01", "15", "14", "32"]),
        ];
        for (text, expected) in cases {
            assert_eq!(query_terms(text), *expected, "{text:?}");
        }
        let many = (0..100)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(query_terms(&many).len(), MAX_TERMS);
    }

    #[test]
    fn weights_fall_with_frequency_and_length() {
        assert!(idf(1000.0, 1.0) > idf(1000.0, 10.0));
        assert!(idf(1000.0, 1000.0) > 0.0);
        assert!((length_factor(10.0, 10.0) - 1.0).abs() < 1e-12);
        assert!(length_factor(5.0, 10.0) > 1.0 && length_factor(20.0, 10.0) < 1.0);
        assert_eq!(common_threshold(100), 256);
        assert_eq!(common_threshold(100_000), 6250);
    }
}
