//! The memory index on a real `SQLite` file: updates and fingerprints,
//! BM25 ranking of realistic facts, the common-word paths, filters, and
//! the session history it is fed from.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{message, new_session, step};
use toolgate_store::{
    MemoryChunk, MemoryIndex, MemoryQuery, MemoryUpdate, SessionHistory, SessionStore, SourceId,
    SqliteStore,
};

fn open(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(dir.path().join("toolgate.db")).unwrap()
}

fn replace(kind: &str, name: &str, fingerprint: &str, texts: &[&str]) -> MemoryUpdate {
    MemoryUpdate::Replace {
        source: SourceId::new(kind, name),
        fingerprint: fingerprint.to_owned(),
        chunks: texts
            .iter()
            .enumerate()
            .map(|(i, t)| MemoryChunk::new(i as u64 + 1, *t))
            .collect(),
    }
}

async fn top(store: &SqliteStore, text: &str, limit: usize) -> Vec<(String, u64, f64)> {
    let query = MemoryQuery {
        limit,
        min_score: 0.0,
        ..MemoryQuery::new(text)
    };
    store
        .search(&query)
        .await
        .unwrap()
        .into_iter()
        .map(|h| {
            (
                format!("{}/{}", h.source.kind, h.source.name),
                h.position,
                h.score,
            )
        })
        .collect()
}

#[tokio::test]
async fn updates_are_remembered_by_fingerprint_and_survive_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let done = store
        .apply(vec![
            replace(
                "file",
                "2025-01-14.md",
                "1:10:aa",
                &["alpha one", "beta two"],
            ),
            replace("file", "2025-01-15.md", "2:20:bb", &["gamma three"]),
            replace("note", "7", "n7", &["delta four"]),
        ])
        .await
        .unwrap();
    assert_eq!((done.added, done.removed, done.skipped), (4, 0, 0));

    // Replacing drops the old chunks; touching keeps them.
    let done = store
        .apply(vec![
            replace("file", "2025-01-14.md", "3:11:cc", &["alpha uno"]),
            MemoryUpdate::Touch {
                source: SourceId::new("file", "2025-01-15.md"),
                fingerprint: "4:20:bb".into(),
            },
        ])
        .await
        .unwrap();
    assert_eq!((done.added, done.removed), (1, 2));
    assert!(top(&store, "beta", 5).await.is_empty());
    assert_eq!(top(&store, "gamma", 5).await.len(), 1);

    // Appends are conditional on the fingerprint the feeder saw.
    let session = SourceId::new("session", "s1");
    let append = |expect: Option<&str>, fingerprint: &str, text: &str| MemoryUpdate::Append {
        source: session.clone(),
        expect: expect.map(str::to_owned),
        fingerprint: fingerprint.to_owned(),
        chunks: vec![MemoryChunk::new(0, text)],
    };
    let done = store
        .apply(vec![
            append(None, "1:h0", "first message"),
            append(None, "1:h0", "first message again"),
            append(Some("1:h0"), "2:h1", "second message"),
        ])
        .await
        .unwrap();
    assert_eq!((done.added, done.skipped), (2, 1));

    // A new store object, as in another process.
    let again = open(&dir);
    let files = again.fingerprints("file").await.unwrap();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        [
            ("2025-01-14.md".to_owned(), "3:11:cc".to_owned()),
            ("2025-01-15.md".to_owned(), "4:20:bb".to_owned())
        ]
    );
    assert_eq!(
        again.fingerprint(&session).await.unwrap().as_deref(),
        Some("2:h1")
    );
    assert_eq!(top(&again, "message", 5).await.len(), 2);

    again
        .apply(vec![MemoryUpdate::Delete {
            source: SourceId::new("note", "7"),
        }])
        .await
        .unwrap();
    assert!(top(&again, "delta", 5).await.is_empty());
    assert!(
        again
            .fingerprint(&SourceId::new("note", "7"))
            .await
            .unwrap()
            .is_none()
    );
}

/// Facts as a user's assistant saves them, and questions a model asks.
const FACTS: &[&str] = &[
    "The user's dog is a border collie called Rocky.",
    "The user is allergic to peanuts and shellfish.",
    "The user prefers answers in Spanish, short and direct.",
    "The user's sister Ana lives in Valencia and works as a nurse.",
    "The user drinks green tea in the morning, never coffee after 5pm.",
    "The user's birthday is on 14 March.",
    "The user is training for the Buenos Aires marathon in October.",
    "The user works as a backend engineer at a logistics company.",
    "The user's favourite band is Radiohead.",
    "The user drives a blue Toyota Corolla from 2015.",
    "The user wants to learn to play the piano this year.",
    "The user's flat is in Palermo, near the botanical garden.",
    "The user had knee surgery in 2022 and avoids running downhill.",
    "The user's partner is called Lucía; their anniversary is 2 June.",
    "The user reads science fiction; currently reading The Dispossessed.",
    "The user uses Neovim and prefers Rust for side projects.",
    "The user's cat Miso is twelve years old and diabetic.",
    "The user is saving for a trip to Japan in spring.",
    "The user's café order is a cortado with oat milk.",
    "The user's standing meeting with the team is on Mondays at 10.",
];

#[tokio::test]
async fn search_ranks_the_right_fact_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    store
        .apply(vec![replace("file", "2025-01-15.md", "f", FACTS)])
        .await
        .unwrap();
    // (query, line of the fact that must come first)
    let cases: &[(&str, u64)] = &[
        ("what is the name of the user's dog", 1),
        ("dogs", 1),
        ("food allergies peanut", 2),
        ("which language should I answer in", 3),
        ("where does Ana live", 4),
        ("coffee or tea", 5),
        ("when is the birthday", 6),
        ("marathon training", 7),
        ("job engineer", 8),
        ("favourite music band", 9),
        ("what car does the user drive", 10),
        ("piano lessons", 11),
        ("address neighbourhood Palermo", 12),
        ("knee injury surgery", 13),
        ("partner name anniversary", 14),
        ("books reading", 15),
        ("rust side projects", 16),
        ("cat health", 17),
        ("trip Japan", 18),
        // Accents folded both ways.
        ("cafe order", 19),
        ("Lucia", 14),
        ("meetings monday", 20),
    ];
    for (query, line) in cases {
        let hits = top(&store, query, 3).await;
        assert!(!hits.is_empty(), "{query:?}: no hits");
        assert_eq!(hits[0].1, *line, "{query:?}: {hits:?}");
        for (_, _, score) in &hits {
            assert!((0.0..=1.0).contains(score), "{query:?}: {hits:?}");
        }
        assert!(
            hits.windows(2).all(|w| w[0].2 >= w[1].2),
            "{query:?}: {hits:?}"
        );
    }
}

#[tokio::test]
async fn scores_mean_the_share_of_the_query_matched() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    store
        .apply(vec![replace("file", "log.md", "f", FACTS)])
        .await
        .unwrap();
    // Every word of the query in one fact: the top score is high.
    let all = top(&store, "border collie Rocky", 1).await;
    assert!(all[0].2 > 0.9, "{all:?}");
    // One rare word of three, the other two in no fact: still a full match
    // of what the index knows.
    let unknown = top(&store, "Rocky zebra quasar", 1).await;
    assert!(unknown[0].2 > 0.9, "{unknown:?}");
    // One rare word of three known ones: a partial score.
    let partial = top(&store, "Rocky Valencia piano", 3).await;
    assert_eq!(partial.len(), 3, "{partial:?}");
    assert!(partial.iter().all(|h| h.2 < 0.6), "{partial:?}");
    // "the" and "user" are in nearly every fact: a fact matching only them
    // scores low, and minScore 0.1 leaves it out.
    let query = MemoryQuery::new("the user zebra");
    assert!(store.search(&query).await.unwrap().is_empty());
    // No words, nothing found.
    assert!(top(&store, "?!", 5).await.is_empty());
    assert!(top(&store, "zebra", 5).await.is_empty());
}

#[tokio::test]
async fn kinds_and_excluded_sources_are_filtered_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    store
        .apply(vec![
            replace("file", "a.md", "f", &["the ferry leaves at nine"]),
            replace("note", "1", "n", &["ferry tickets are in the drawer"]),
            replace("session", "s1", "s", &["when does the ferry leave?"]),
        ])
        .await
        .unwrap();
    assert_eq!(top(&store, "ferry", 10).await.len(), 3);
    let only_notes = MemoryQuery {
        kinds: vec!["note".into()],
        min_score: 0.0,
        ..MemoryQuery::new("ferry")
    };
    let hits = store.search(&only_notes).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].source, SourceId::new("note", "1"));
    assert_eq!(hits[0].text, "ferry tickets are in the drawer");
    let not_this_session = MemoryQuery {
        exclude: vec![SourceId::new("session", "s1")],
        min_score: 0.0,
        ..MemoryQuery::new("ferry")
    };
    let hits = store.search(&not_this_session).await.unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.source.kind != "session"));
}

#[tokio::test]
async fn common_words_count_without_being_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    // 2,000 chunks: "the" and "user" in nearly all (common: over 256),
    // "green" in every tenth (198: rare), "zebra" in two of the same length.
    let texts: Vec<String> = (0..2000)
        .map(|i| match i {
            700 => "the user saw a zebra".to_owned(),
            1500 => "a man saw a zebra".to_owned(),
            i if i % 10 == 0 => format!("the user likes green {i}"),
            i => format!("the user noted item {i}"),
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    store
        .apply(vec![replace("file", "big.md", "f", &refs)])
        .await
        .unwrap();
    // A common word still counts: it puts the older zebra first...
    let hits = top(&store, "user zebra", 5).await;
    assert_eq!(
        hits.iter().map(|h| h.1).collect::<Vec<_>>(),
        [701, 1501],
        "{hits:?}"
    );
    // ...but weighs little: the rare word decides the score.
    assert!(hits[1].2 > 0.9, "{hits:?}");
    let hits = top(&store, "man zebra", 5).await;
    assert_eq!(hits[0].1, 1501, "{hits:?}");
    // Rare and common words together: the chunks with the rare word, the
    // ones with the common words too first.
    let hits = top(&store, "the green", 300).await;
    assert_eq!(hits.len(), 198, "{hits:?}");
    // Common words alone: answered from the most recent chunks, with
    // scores so low that the default minScore leaves them all out.
    let hits = top(&store, "the user", 3).await;
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.1 > 1700 && h.2 < 0.01), "{hits:?}");
    let query = MemoryQuery::new("the user");
    assert!(store.search(&query).await.unwrap().is_empty());
}

#[tokio::test]
async fn session_history_since_a_stamp_and_from_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let start = store.begin(&new_session("s1")).await.unwrap();
    store
        .record_step(&step(
            "s1",
            start.run,
            1,
            0,
            vec![message("user", "hello"), message("assistant", "hi")],
            vec![],
        ))
        .await
        .unwrap();
    store.begin(&new_session("s2")).await.unwrap();

    let all = store.sessions_since(0, 10).await.unwrap();
    assert_eq!(
        all.iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["s1", "s2"]
    );
    assert!(all[0].updated < all[1].updated);
    let first = store.sessions_since(0, 1).await.unwrap();
    assert_eq!(first.len(), 1);
    // A feeder continuing from the last stamp sees only later writes.
    assert!(
        store
            .sessions_since(all[1].updated, 10)
            .await
            .unwrap()
            .is_empty()
    );
    store
        .record_step(&step(
            "s1",
            start.run,
            2,
            2,
            vec![message("user", "bye")],
            vec![],
        ))
        .await
        .unwrap();
    let later = store.sessions_since(all[1].updated, 10).await.unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].session_id, "s1");

    let messages = store.messages_from("s1", 1).await.unwrap();
    assert_eq!(
        messages
            .iter()
            .map(|m| (m.seq, m.message["content"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [(1, "hi"), (2, "bye")]
    );
    assert!(store.messages_from("nope", 0).await.unwrap().is_empty());
}
