//! Notes in a real `SQLite` file: written by one store object and read by
//! another (as a second process would), changed, deleted, and found by
//! full-text search.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use toolgate_store::{NewNote, NoteStore, NoteUpdate, SqliteStore};

fn new(title: &str, body: &str) -> NewNote {
    NewNote {
        title: title.to_owned(),
        body: body.to_owned(),
    }
}

#[tokio::test]
async fn notes_round_trip_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let writer = SqliteStore::open(&path).unwrap();

    let a = writer.create_note(&new("Groceries", "milk")).await.unwrap();
    let b = writer
        .create_note(&new("Dentist", "Tuesday 10:00"))
        .await
        .unwrap();
    let c = writer.create_note(&new("Ideas", "")).await.unwrap();
    assert!(a.id < b.id && b.id < c.id);
    assert_eq!(a.created, a.updated);

    // Another store object on the same file sees them, newest first.
    let reader = SqliteStore::open(&path).unwrap();
    assert_eq!(reader.count_notes().await.unwrap(), 3);
    let ids = |notes: Vec<toolgate_store::Note>| notes.iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(
        ids(reader.list_notes(10, 0).await.unwrap()),
        [c.id, b.id, a.id]
    );
    assert_eq!(ids(reader.list_notes(1, 1).await.unwrap()), [b.id]);
    assert_eq!(reader.note(b.id).await.unwrap().unwrap(), b);

    // Append adds a line; an update moves the note to the front.
    let appended = writer
        .update_note(
            a.id,
            &NoteUpdate {
                append: Some("eggs".into()),
                ..NoteUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(appended.body, "milk\neggs");
    assert!(
        appended.updated > c.updated,
        "updates are stamped after every earlier write"
    );
    assert_eq!(
        ids(reader.list_notes(10, 0).await.unwrap()),
        [a.id, c.id, b.id]
    );

    // Title and body together; append after a replaced body.
    let rewritten = writer
        .update_note(
            c.id,
            &NoteUpdate {
                title: Some("Project ideas".into()),
                body: Some("a bot".into()),
                append: Some("a game".into()),
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (rewritten.title.as_str(), rewritten.body.as_str()),
        ("Project ideas", "a bot\na game")
    );
    assert_eq!(reader.note(c.id).await.unwrap().unwrap(), rewritten);

    // Delete returns what was there; a missing note is None everywhere.
    assert_eq!(writer.delete_note(b.id).await.unwrap().unwrap(), b);
    assert_eq!(reader.note(b.id).await.unwrap(), None);
    assert_eq!(writer.delete_note(b.id).await.unwrap(), None);
    assert_eq!(
        writer
            .update_note(b.id, &NoteUpdate::default())
            .await
            .unwrap(),
        None
    );
    assert_eq!(reader.count_notes().await.unwrap(), 2);

    // Ids are never reused, even for the highest one after it is deleted.
    writer.delete_note(c.id).await.unwrap().unwrap();
    let d = writer.create_note(&new("Later", "x")).await.unwrap();
    assert!(d.id > c.id, "id {} reused after {}", d.id, c.id);
}

/// Titles of the notes a search finds, best first, and whether the first
/// hit holds every word.
async fn found(store: &SqliteStore, query: &str) -> (Vec<String>, Option<bool>) {
    let hits = store.search_notes(query, 10).await.unwrap();
    let all = hits.first().map(|h| h.all_words);
    (hits.into_iter().map(|h| h.note.title).collect(), all)
}

#[tokio::test]
async fn search_ranks_words_prefixes_and_accents_and_ignores_query_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    for (title, body) in [
        (
            "Dentist",
            "appointment on Tuesday at 10, bring the insurance card",
        ),
        ("Café list", "good coffee near the office: Niño, Lumière"),
        ("Trip", "book the train; ask the dentist for a certificate"),
        ("Recipes", "pancakes: flour, milk, eggs. NOT for Tuesday"),
        ("Secret title", "nothing to see"),
    ] {
        store.create_note(&new(title, body)).await.unwrap();
    }

    let cases: &[(&str, &[&str], Option<bool>)] = &[
        // A word in a title ranks above the same word in a body.
        ("dentist", &["Dentist", "Trip"], Some(true)),
        // Prefixes, case ignored.
        ("DENT", &["Dentist", "Trip"], Some(true)),
        // Accents ignored both ways.
        ("cafe", &["Café list"], Some(true)),
        ("nino lumiere", &["Café list"], Some(true)),
        // Every word first...
        ("dentist certificate", &["Trip"], Some(true)),
        // ...and only when no note holds them all, any word.
        // (Both match one word once: the shorter note ranks first, as
        // BM25 has it.)
        ("pancakes certificate", &["Recipes", "Trip"], Some(false)),
        // Query syntax is read as words: no operator, column filter or
        // syntax error gets through.
        ("NOT Tuesday", &["Recipes"], Some(true)),
        ("\"coffee", &["Café list"], Some(true)),
        ("title:secret", &["Secret title"], Some(true)),
        ("NEAR(train book)", &["Trip", "Café list"], Some(false)),
        ("milk* OR", &["Recipes"], Some(false)),
        // Nothing to search for.
        ("*** ()", &[], None),
        ("", &[], None),
        ("zebra", &[], None),
    ];
    for (query, titles, all_words) in cases {
        let (got, all) = found(&store, query).await;
        assert_eq!(got, *titles, "{query:?}");
        assert_eq!(all, *all_words, "{query:?}");
    }

    // The snippet marks the match.
    let hits = store.search_notes("insurance", 10).await.unwrap();
    assert!(
        hits[0].snippet.contains("[insurance]"),
        "{}",
        hits[0].snippet
    );
    // The limit holds.
    assert_eq!(store.search_notes("the", 1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_index_follows_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let note = store
        .create_note(&new("Plants", "water the ficus"))
        .await
        .unwrap();
    assert_eq!(found(&store, "ficus").await.0, ["Plants"]);

    store
        .update_note(
            note.id,
            &NoteUpdate {
                title: Some("Garden".into()),
                body: Some("prune the roses".into()),
                append: None,
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert!(found(&store, "ficus").await.0.is_empty());
    assert!(found(&store, "plants").await.0.is_empty());
    assert_eq!(found(&store, "roses").await.0, ["Garden"]);
    assert_eq!(found(&store, "garden").await.0, ["Garden"]);

    store.delete_note(note.id).await.unwrap().unwrap();
    assert!(found(&store, "roses").await.0.is_empty());
}
