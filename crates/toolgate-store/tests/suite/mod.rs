//! The trait-level test suite: what every backend of the store traits must
//! do, written against the traits alone, so that `SQLite` and `PostgreSQL`
//! are held to the same behaviour.
//!
//! Each function takes a fresh, empty store. A test binary per backend
//! instantiates every case with [`suite_tests!`], giving it a function that
//! opens such a store.

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::sync::Arc;

use crate::common::{message, new_session, step};

use serde_json::json;
use std::time::Duration;
use toolgate_core::{FileState, LinkId, PathChange, PlanStep, StepStatus};
use toolgate_store::{
    AfterRun, AuditEntry, AuditFilter, Claim, Created, DynamicToolKind, DynamicToolScope,
    DynamicToolStatus, MemoryChunk, MemoryQuery, MemoryUpdate, NewCheckpoint, NewDynamicTool,
    NewJob, NewNote, NewProject, NewRewind, NewSession, NewTask, NoteUpdate, Plan, Priority,
    ProjectKey, ProjectStatus, ProjectUpdate, RUN_ABANDONED, RUN_RUNNING, RUNNING, RunEnd,
    SourceId, StatusChange, StoreError, TaskFilter, TaskStatus, TaskUpdate, ToolCallRow, Trigger,
};
use toolgate_store::{
    Answer, Answered, ApprovalStatus, Asked, Budget, NewApproval, NewRule, NewRun, RunClaim,
    SessionAllow, Store,
};

/// What a backend implements: every store trait, as the host holds it.
pub(crate) trait Backend: Store + 'static {}

impl<T: Store + 'static> Backend for T {}

/// One test per case of the suite, each on a store `$open().await` gives
/// (a `(store, guard)` pair; the guard lives as long as the test).
#[macro_export]
macro_rules! suite_tests {
    ($open:path) => {
        $crate::suite_tests!(@each $open;
            sessions_begin_record_resume_list,
            sessions_refuse_gaps_and_stale_runs,
            session_history_feeds_by_stamp,
            audit_append_and_query,
            memory_fingerprints_and_incremental_updates,
            memory_search_ranks_and_filters,
            notes_crud_and_search,
            tasks_and_activity,
            plans_round_trip,
            schedules_claim_finish_and_history,
            schedules_two_claimants_and_lease_expiry,
            dynamic_tools_review,
            checkpoints_and_rewinds,
            approvals_answered_once_and_run_once,
            approvals_waits_end_at_a_change,
            keyed_calls_are_claimed_once,
            workers_are_alive_while_they_hold_their_lease,
            rules_are_added_listed_and_removed,
            session_allows_hold_for_their_scope_until_they_expire,
            request_budgets_are_taken_once_by_concurrent_takers,
        );
    };
    (@each $open:path; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let (store, _guard) = $open().await;
                suite::$case(Arc::new(store)).await;
            }
        )+
    };
}

fn call(step: u32, id: &str) -> ToolCallRow {
    ToolCallRow {
        step,
        call_id: id.to_owned(),
        name: "read_file".to_owned(),
        arguments: format!(r#"{{"path":"{id}.txt"}}"#),
        decision: "allowed".to_owned(),
        success: step % 2 == 1,
        duration_ms: u64::from(step) * 10,
        output: format!("contents of {id}"),
        effects: json!({"reads": [format!("{id}.txt")]}),
        recovered: step.is_multiple_of(2),
    }
}

pub(crate) async fn sessions_begin_record_resume_list(store: Arc<impl Backend>) {
    let start = store.begin(&new_session("s1")).await.unwrap();
    assert_eq!((start.run, start.stored_messages), (1, 0));
    // A message with keys out of order and unicode comes back unchanged.
    let odd = json!({"role": "assistant", "z": 1, "a": [1.5, null, "é ✓"], "content": ""});
    let mut first = step(
        "s1",
        1,
        1,
        0,
        vec![message("user", "fix the test"), odd.clone()],
        vec![call(1, "c1"), call(1, "c2")],
    );
    first.events = vec![toolgate_store::SessionEvent {
        step: 1,
        kind: "routed".into(),
        data: json!({"tools": ["read_file"]}),
    }];
    store.record_step(&first).await.unwrap();
    store
        .record_step(&step(
            "s1",
            1,
            2,
            2,
            vec![message("assistant", "done")],
            vec![call(2, "c3")],
        ))
        .await
        .unwrap();
    let messages = store.messages("s1").await.unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1], odd);
    assert_eq!(
        serde_json::to_string(&messages[1]).unwrap(),
        serde_json::to_string(&odd).unwrap(),
        "key order is kept"
    );
    let calls = store.tool_calls("s1").await.unwrap();
    assert_eq!(
        calls.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(),
        ["c1", "c2", "c3"]
    );
    assert_eq!(calls[2], call(2, "c3"));
    let events = store.events("s1").await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].run, events[0].event.kind.as_str()),
        (1, "routed")
    );
    assert_eq!(events[0].event.data, json!({"tools": ["read_file"]}));

    let summary = store.get("s1").await.unwrap();
    assert_eq!(summary.outcome, RUNNING);
    assert_eq!(summary.pid, Some(std::process::id()));
    assert_eq!(
        (
            summary.runs,
            summary.steps,
            summary.input_tokens,
            summary.output_tokens
        ),
        (1, 2, 300, 30)
    );
    store.finish("s1", 1, "completed").await.unwrap();
    let summary = store.get("s1").await.unwrap();
    assert_eq!((summary.outcome.as_str(), summary.pid), ("completed", None));

    // A second session, then a resume of the first: newest write first.
    store.begin(&new_session("s2")).await.unwrap();
    let resumed = store
        .begin(&NewSession {
            agent: "other".into(),
            task: "another task".into(),
            ..new_session("s1")
        })
        .await
        .unwrap();
    assert_eq!((resumed.run, resumed.stored_messages), (2, 3));
    let list = store.list().await.unwrap();
    assert_eq!(
        list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["s1", "s2"]
    );
    let s1 = &list[0];
    assert_eq!(
        (
            s1.agent.as_str(),
            s1.task.as_str(),
            s1.runs,
            s1.outcome.as_str()
        ),
        ("build", "task of s1", 2, RUNNING),
        "the first run's agent and task are kept"
    );
    assert!(list[0].updated > list[1].updated);

    // Step 0 (start or end of a run) is not a model step; a compression
    // rewrites from an earlier index.
    store
        .record_step(&step(
            "s1",
            2,
            0,
            1,
            vec![message("user", "summary"), message("user", "go on")],
            vec![],
        ))
        .await
        .unwrap();
    let messages = store.messages("s1").await.unwrap();
    assert_eq!(
        messages,
        vec![
            message("user", "fix the test"),
            message("user", "summary"),
            message("user", "go on")
        ]
    );
    assert_eq!(store.get("s1").await.unwrap().steps, 2);

    // Every write moves `updated` strictly forward, even in one millisecond.
    let mut last = store.get("s1").await.unwrap().updated;
    for i in 0..5 {
        store
            .record_step(&step("s1", 2, 1, 3 + i, vec![message("user", "x")], vec![]))
            .await
            .unwrap();
        let now = store.get("s1").await.unwrap().updated;
        assert!(now > last, "{now} after {last}");
        last = now;
    }

    for missing in [
        store.get("nope").await.err(),
        store.messages("nope").await.err(),
        store.tool_calls("nope").await.err(),
        store.events("nope").await.err(),
    ] {
        assert!(
            matches!(missing, Some(StoreError::NotFound(ref id)) if id == "nope"),
            "{missing:?}"
        );
    }
}

pub(crate) async fn sessions_refuse_gaps_and_stale_runs(store: Arc<impl Backend>) {
    store.begin(&new_session("s")).await.unwrap();
    store
        .record_step(&step("s", 1, 1, 0, vec![message("user", "a")], vec![]))
        .await
        .unwrap();
    let gap = store
        .record_step(&step(
            "s",
            1,
            2,
            3,
            vec![message("user", "b")],
            vec![call(2, "x")],
        ))
        .await;
    assert!(
        matches!(
            gap,
            Err(StoreError::MessageGap {
                from: 3,
                stored: 1,
                ..
            })
        ),
        "{gap:?}"
    );
    // Nothing of the refused step was stored.
    assert!(store.tool_calls("s").await.unwrap().is_empty());
    assert_eq!(store.get("s").await.unwrap().steps, 1);

    // A second process resumes: the first one's writes are refused.
    let second = store.begin(&new_session("s")).await.unwrap();
    assert_eq!(second.run, 2);
    let stale = store
        .record_step(&step("s", 1, 2, 1, vec![message("user", "late")], vec![]))
        .await;
    assert!(
        matches!(
            stale,
            Err(StoreError::NotCurrentRun {
                run: 1,
                current: 2,
                ..
            })
        ),
        "{stale:?}"
    );
    let stale = store.finish("s", 1, "completed").await;
    assert!(
        matches!(stale, Err(StoreError::NotCurrentRun { .. })),
        "{stale:?}"
    );
    assert_eq!(store.messages("s").await.unwrap().len(), 1);
    let unknown = store
        .record_step(&step("ghost", 1, 1, 0, vec![], vec![]))
        .await;
    assert!(
        matches!(unknown, Err(StoreError::NotFound(_))),
        "{unknown:?}"
    );
}

pub(crate) async fn session_history_feeds_by_stamp(store: Arc<impl Backend>) {
    for id in ["a", "b", "c"] {
        store.begin(&new_session(id)).await.unwrap();
        store
            .record_step(&step(
                id,
                1,
                1,
                0,
                vec![message("user", id), message("assistant", "ok")],
                vec![],
            ))
            .await
            .unwrap();
    }
    let all = store.sessions_since(0, 10).await.unwrap();
    assert_eq!(
        all.iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    let page = store.sessions_since(0, 2).await.unwrap();
    assert_eq!(page.len(), 2);
    let rest = store.sessions_since(page[1].updated, 10).await.unwrap();
    assert_eq!(
        rest.iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["c"]
    );
    // A write to `a` brings it after `c`.
    store.finish("a", 1, "completed").await.unwrap();
    let after = store.sessions_since(rest[0].updated, 10).await.unwrap();
    assert_eq!(
        after
            .iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["a"]
    );
    let from = store.messages_from("b", 1).await.unwrap();
    assert_eq!(from.len(), 1);
    assert_eq!(
        (from[0].seq, &from[0].message),
        (1, &message("assistant", "ok"))
    );
    assert!(store.messages_from("ghost", 0).await.unwrap().is_empty());
}

fn audit_entry(i: usize) -> AuditEntry {
    let tools = ["read_file", "write_file", "run_command"];
    let decisions = ["allowed", "allowed", "denied", "blocked"];
    AuditEntry {
        ts: format!("2026-01-01T00:00:{:02}.{i:06}Z", 59 - i % 60),
        call_id: format!("call-{i:06}"),
        session_id: if i.is_multiple_of(5) {
            None
        } else {
            Some(format!("s{}", i % 2))
        },
        // The client round-trips on both backends.
        client: i.is_multiple_of(4).then(|| format!("client-{}", i % 3)),
        tool: tools[i % tools.len()].to_owned(),
        args_sha256: format!("{i:064x}"),
        decision: decisions[i % decisions.len()].to_owned(),
        success: !i.is_multiple_of(3),
        duration_us: i as u64 * 7,
        error: i.is_multiple_of(3).then(|| format!("error {i}")),
        effects: json!({"reads": [format!("f{i}")]}),
    }
}

pub(crate) async fn audit_append_and_query(store: Arc<impl Backend>) {
    let entries: Vec<_> = (0..120).map(audit_entry).collect();
    store.append(&entries[..70]).await.unwrap();
    store.append(&entries[70..]).await.unwrap();
    store.append(&[]).await.unwrap();

    // Newest appended first, whatever the timestamps say.
    let recent = store.recent(&AuditFilter::newest(5)).await.unwrap();
    assert_eq!(
        recent,
        (115..120).rev().map(audit_entry).collect::<Vec<_>>()
    );
    assert_eq!(
        store.recent(&AuditFilter::default()).await.unwrap().len(),
        100
    );
    let filter = AuditFilter::newest(1000)
        .decision("denied")
        .session_id("s0")
        .tool("run_command");
    let got = store.recent(&filter).await.unwrap();
    let want: Vec<_> = (0..120)
        .rev()
        .map(audit_entry)
        .filter(|e| {
            e.decision == "denied"
                && e.session_id.as_deref() == Some("s0")
                && e.tool == "run_command"
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let none = store
        .recent(&AuditFilter::newest(10).tool("no_such_tool"))
        .await
        .unwrap();
    assert!(none.is_empty());
    let one = store
        .recent(&AuditFilter::newest(10).call_id(want[0].call_id.clone()))
        .await
        .unwrap();
    assert_eq!(one, vec![want[0].clone()]);
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

async fn top(store: &impl Backend, query: MemoryQuery) -> Vec<(String, u64, f64)> {
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

fn all_scores(text: &str, limit: usize) -> MemoryQuery {
    MemoryQuery {
        limit,
        min_score: 0.0,
        ..MemoryQuery::new(text)
    }
}

pub(crate) async fn memory_fingerprints_and_incremental_updates(store: Arc<impl Backend>) {
    let done = store
        .apply(vec![
            replace("file", "a.md", "1:aa", &["alpha one", "beta two"]),
            replace("file", "b.md", "2:bb", &["gamma three"]),
            replace("note", "7", "n7", &["delta four"]),
        ])
        .await
        .unwrap();
    assert_eq!((done.added, done.removed, done.skipped), (4, 0, 0));
    let files = store.fingerprints("file").await.unwrap();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        [
            ("a.md".to_owned(), "1:aa".to_owned()),
            ("b.md".to_owned(), "2:bb".to_owned())
        ]
    );
    let done = store
        .apply(vec![
            replace("file", "a.md", "3:cc", &["alpha uno"]),
            MemoryUpdate::Touch {
                source: SourceId::new("file", "b.md"),
                fingerprint: "4:bb".into(),
            },
            MemoryUpdate::Touch {
                source: SourceId::new("file", "ghost.md"),
                fingerprint: "x".into(),
            },
            MemoryUpdate::Delete {
                source: SourceId::new("note", "7"),
            },
        ])
        .await
        .unwrap();
    assert_eq!((done.added, done.removed, done.skipped), (1, 3, 0));
    assert_eq!(
        store
            .fingerprint(&SourceId::new("file", "b.md"))
            .await
            .unwrap()
            .as_deref(),
        Some("4:bb")
    );
    assert_eq!(
        store
            .fingerprint(&SourceId::new("file", "ghost.md"))
            .await
            .unwrap(),
        None
    );
    assert!(store.fingerprints("note").await.unwrap().is_empty());
    assert!(top(&*store, all_scores("beta", 5)).await.is_empty());
    assert!(top(&*store, all_scores("delta", 5)).await.is_empty());
    assert_eq!(top(&*store, all_scores("gamma", 5)).await.len(), 1);

    // Appends are conditional on the fingerprint: two feeders append once.
    let append =
        |expect: Option<&str>, fingerprint: &str, text: &str, position: u64| MemoryUpdate::Append {
            source: SourceId::new("session", "s1"),
            expect: expect.map(str::to_owned),
            fingerprint: fingerprint.to_owned(),
            chunks: vec![MemoryChunk::new(position, text)],
        };
    let first = store
        .apply(vec![append(None, "1", "zeta message", 0)])
        .await
        .unwrap();
    assert_eq!((first.added, first.skipped), (1, 0));
    let racing = store
        .apply(vec![append(None, "1", "zeta message", 0)])
        .await
        .unwrap();
    assert_eq!((racing.added, racing.skipped), (0, 1));
    let next = store
        .apply(vec![append(Some("1"), "2", "zeta reply", 1)])
        .await
        .unwrap();
    assert_eq!((next.added, next.skipped), (1, 0));
    let hits = top(&*store, all_scores("zeta", 5)).await;
    assert_eq!(hits.len(), 2, "{hits:?}");

    // `apply` is atomic: concurrent appends of the same messages add once.
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store
                .apply(vec![append(Some("2"), "3", "zeta third", 2)])
                .await
                .unwrap()
        }));
    }
    let mut added = 0;
    for task in tasks {
        added += task.await.unwrap().added;
    }
    assert_eq!(added, 1);
    assert_eq!(top(&*store, all_scores("third", 5)).await.len(), 1);
}

pub(crate) async fn memory_search_ranks_and_filters(store: Arc<impl Backend>) {
    let facts = [
        "The deploy key for staging lives in the team vault",
        "Lunch on Fridays is at the Italian place",
        "The staging database is backed up every night",
        "Rotate the deploy key of staging every quarter",
        "The office wifi password changed in March",
        "Prefer short pull requests with one idea each",
    ];
    store
        .apply(vec![replace("file", "facts.md", "f1", &facts)])
        .await
        .unwrap();
    store
        .apply(vec![replace(
            "session",
            "s9",
            "9",
            &["we talked about the staging deploy key yesterday"],
        )])
        .await
        .unwrap();

    // Chunks with every word rank above chunks with some of them.
    let hits = top(&*store, all_scores("staging deploy key", 10)).await;
    assert!(hits.len() >= 4, "{hits:?}");
    let best: Vec<_> = hits[..3].iter().map(|h| (h.0.as_str(), h.1)).collect();
    for want in [
        ("file/facts.md", 1),
        ("file/facts.md", 4),
        ("session/s9", 1),
    ] {
        assert!(best.contains(&want), "{want:?} not in the top 3: {hits:?}");
    }
    assert_eq!(
        (hits[3].0.as_str(), hits[3].1),
        ("file/facts.md", 3),
        "{hits:?}"
    );
    for pair in hits.windows(2) {
        assert!(pair[0].2 >= pair[1].2, "ordered by score: {hits:?}");
    }
    for hit in &hits {
        assert!(hit.2 > 0.0 && hit.2 <= 1.0, "scores in (0, 1]: {hits:?}");
    }
    // Case and stemming: `Rotating` finds `Rotate`? Only the word form is
    // promised; case is.
    assert_eq!(
        top(&*store, all_scores("LUNCH", 5)).await[0].1,
        2,
        "case is ignored"
    );
    // A word found in one chunk only scores well on its own.
    let wifi = top(&*store, MemoryQuery::new("wifi")).await;
    assert_eq!(wifi.len(), 1);
    assert!(wifi[0].2 >= 0.5, "{wifi:?}");

    // Filters: kinds, excluded sources, limit, minimum score.
    let sessions_only = store
        .search(&MemoryQuery {
            kinds: vec!["session".into()],
            ..all_scores("staging", 10)
        })
        .await
        .unwrap();
    assert_eq!(sessions_only.len(), 1);
    assert_eq!(sessions_only[0].source, SourceId::new("session", "s9"));
    assert_eq!(
        sessions_only[0].text,
        "we talked about the staging deploy key yesterday"
    );
    let excluded = top(
        &*store,
        MemoryQuery {
            exclude: vec![SourceId::new("session", "s9")],
            ..all_scores("staging", 10)
        },
    )
    .await;
    assert_eq!(excluded.len(), 3);
    assert!(excluded.iter().all(|h| h.0 == "file/facts.md"));
    assert_eq!(top(&*store, all_scores("staging", 2)).await.len(), 2);
    let strict = top(
        &*store,
        MemoryQuery {
            min_score: 0.99,
            ..all_scores("staging deploy key wifi", 10)
        },
    )
    .await;
    assert!(strict.is_empty(), "{strict:?}");
    assert!(top(&*store, all_scores("  ?? ", 5)).await.is_empty());
    assert!(top(&*store, all_scores("nowhere", 5)).await.is_empty());
}

pub(crate) async fn notes_crud_and_search(store: Arc<impl Backend>) {
    let a = store
        .create_note(&NewNote {
            title: "Shopping list".into(),
            body: "eggs, milk and bread".into(),
        })
        .await
        .unwrap();
    let b = store
        .create_note(&NewNote {
            title: "Café ideas".into(),
            body: "a quiet place for reading; shopping nearby".into(),
        })
        .await
        .unwrap();
    let c = store
        .create_note(&NewNote {
            title: "Meeting".into(),
            body: "discuss the milk budget".into(),
        })
        .await
        .unwrap();
    assert!(a.id < b.id && b.id < c.id);
    assert!(a.updated < b.updated && b.updated < c.updated);
    assert_eq!(store.note(a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(store.count_notes().await.unwrap(), 3);
    let ids = |notes: Vec<toolgate_store::Note>| notes.iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_notes(10, 0).await.unwrap()),
        [c.id, b.id, a.id]
    );
    assert_eq!(ids(store.list_notes(1, 1).await.unwrap()), [b.id]);

    let updated = store
        .update_note(
            a.id,
            &NoteUpdate {
                append: Some("butter".into()),
                ..NoteUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(updated.body, "eggs, milk and bread\nbutter");
    assert_eq!(updated.title, "Shopping list");
    assert!(updated.updated > c.updated);
    assert_eq!(
        ids(store.list_notes(10, 0).await.unwrap()),
        [a.id, c.id, b.id]
    );
    assert_eq!(
        store
            .update_note(999, &NoteUpdate::default())
            .await
            .unwrap(),
        None
    );

    // Prefixes, case and accents; the title weighs more than the body.
    let hits = store.search_notes("shop", 10).await.unwrap();
    assert_eq!(
        hits.iter().map(|h| h.note.id).collect::<Vec<_>>(),
        [a.id, b.id],
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| h.all_words));
    let cafe = store.search_notes("cafe", 10).await.unwrap();
    assert_eq!(cafe.len(), 1);
    assert_eq!(cafe[0].note.id, b.id);
    let butter = store.search_notes("BUTTER", 10).await.unwrap();
    assert_eq!(butter.len(), 1);
    assert!(butter[0].snippet.contains("[butter]"), "{butter:?}");
    // Every word first; else any word, marked so.
    let both = store.search_notes("milk budget", 10).await.unwrap();
    assert_eq!(both.iter().map(|h| h.note.id).collect::<Vec<_>>(), [c.id]);
    let any = store.search_notes("budget eggs", 10).await.unwrap();
    assert_eq!(any.len(), 2, "{any:?}");
    assert!(any.iter().all(|h| !h.all_words));
    assert!(store.search_notes("*** \"", 10).await.unwrap().is_empty());
    assert!(store.search_notes("milk", 0).await.unwrap().is_empty());

    assert_eq!(
        store.delete_note(b.id).await.unwrap().map(|n| n.id),
        Some(b.id)
    );
    assert_eq!(store.delete_note(b.id).await.unwrap(), None);
    assert!(store.search_notes("cafe", 10).await.unwrap().is_empty());
    let d = store
        .create_note(&NewNote {
            title: "new".into(),
            body: String::new(),
        })
        .await
        .unwrap();
    assert!(d.id > c.id, "ids are never reused");
}

pub(crate) async fn tasks_and_activity(store: Arc<impl Backend>) {
    let project = store
        .create_project(&NewProject {
            name: "Garden".into(),
            description: "the back yard".into(),
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(project.status, ProjectStatus::Active);
    let again = store
        .create_project(&NewProject {
            name: "gARDEN".into(),
            description: String::new(),
        })
        .await
        .unwrap();
    assert_eq!(again, None, "names are unique regardless of case");
    assert_eq!(
        store
            .project(&ProjectKey::Name("garden".into()))
            .await
            .unwrap()
            .map(|p| p.id),
        Some(project.id)
    );
    let other = store
        .create_project(&NewProject {
            name: "House".into(),
            description: String::new(),
        })
        .await
        .unwrap()
        .unwrap();

    let task = |title: &str, status, priority| NewTask {
        project_id: project.id,
        title: title.into(),
        description: String::new(),
        status,
        priority,
    };
    let t1 = store
        .add_task(&task("dig", TaskStatus::Todo, Priority::Low))
        .await
        .unwrap()
        .unwrap();
    let t2 = store
        .add_task(&task("plant", TaskStatus::Todo, Priority::High))
        .await
        .unwrap()
        .unwrap();
    let t3 = store
        .add_task(&task("water", TaskStatus::InProgress, Priority::Medium))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(t1.project, "Garden");
    assert_eq!(
        store
            .add_task(&NewTask {
                project_id: 999,
                ..task("x", TaskStatus::Todo, Priority::Low)
            })
            .await
            .unwrap(),
        None
    );
    let done = store
        .update_task(
            t1.id,
            &TaskUpdate {
                status: Some(TaskStatus::Done),
                note: Some("all dug".into()),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, TaskStatus::Done);
    assert!(done.updated > t1.updated);
    let same = store
        .update_task(
            t2.id,
            &TaskUpdate {
                priority: Some(Priority::High),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same, t2, "a change that changes nothing");

    let listed = store
        .list_tasks(&TaskFilter {
            project_id: Some(project.id),
            ..TaskFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        listed.iter().map(|t| t.id).collect::<Vec<_>>(),
        [t3.id, t2.id, t1.id],
        "in progress, then todo by priority, then done"
    );
    let open = store
        .list_tasks(&TaskFilter {
            statuses: vec![TaskStatus::Todo, TaskStatus::InProgress],
            limit: 1,
            ..TaskFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(open.iter().map(|t| t.id).collect::<Vec<_>>(), [t3.id]);

    let summaries = store.list_projects(false).await.unwrap();
    assert_eq!(summaries[0].project.id, project.id, "most recently updated");
    assert_eq!((summaries[0].open_tasks, summaries[0].done_tasks), (2, 1));
    assert_eq!(summaries[1].project.id, other.id);
    let archived = store
        .update_project(
            other.id,
            &ProjectUpdate {
                status: Some(ProjectStatus::Archived),
                ..ProjectUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(archived.status, ProjectStatus::Archived);
    assert_eq!(store.list_projects(false).await.unwrap().len(), 1);
    assert_eq!(store.list_projects(true).await.unwrap().len(), 2);
    let clash = store
        .update_project(
            other.id,
            &ProjectUpdate {
                name: Some("GARDEN".into()),
                ..ProjectUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(clash, None);

    assert_eq!(
        store.delete_task(t2.id).await.unwrap().map(|t| t.id),
        Some(t2.id)
    );
    assert_eq!(store.task(t2.id).await.unwrap(), None);
    let log = store.activity(project.id, 100).await.unwrap();
    assert_eq!(
        log.iter().map(|a| a.action.as_str()).collect::<Vec<_>>(),
        [
            "task_deleted",
            "task_updated",
            "task_added",
            "task_added",
            "task_added",
            "project_created"
        ]
    );
    assert!(log[1].detail.contains("status todo → done"), "{log:?}");
    assert!(log[1].detail.contains("all dug"), "{log:?}");
    assert_eq!(log[0].task_id, Some(t2.id));
    assert_eq!(store.activity(project.id, 2).await.unwrap().len(), 2);
}

pub(crate) async fn plans_round_trip(store: Arc<impl Backend>) {
    assert_eq!(store.plan("s1").await.unwrap(), None);
    let plan = Plan {
        steps: vec![
            PlanStep {
                step: "read".into(),
                status: StepStatus::Completed,
            },
            PlanStep {
                step: "write ✓".into(),
                status: StepStatus::InProgress,
            },
        ],
        explanation: Some("started".into()),
        updated: 42,
    };
    store.set_plan("s1", &plan).await.unwrap();
    assert_eq!(store.plan("s1").await.unwrap(), Some(plan.clone()));
    let next = Plan {
        steps: vec![],
        explanation: None,
        updated: 43,
    };
    store.set_plan("s1", &next).await.unwrap();
    assert_eq!(store.plan("s1").await.unwrap(), Some(next));
    assert_eq!(store.plan("s2").await.unwrap(), None);
}

fn job(name: &str, next_run: Option<i64>) -> NewJob {
    NewJob {
        name: name.into(),
        schedule: json!({"every": "1h", "z": [1, 2]}),
        task: json!({"prompt": name}),
        delete_after_run: false,
        session_id: Some("s1".into()),
        created: 1_000,
        next_run,
    }
}

fn claim(owner: &str, now: i64) -> Claim {
    Claim {
        owner: owner.into(),
        now,
        lease_ms: 1_000,
        limit: 10,
    }
}

pub(crate) async fn schedules_claim_finish_and_history(store: Arc<impl Backend>) {
    let a = store.add_job(&job("a", Some(2_000))).await.unwrap();
    let b = store.add_job(&job("b", Some(1_500))).await.unwrap();
    let off = store.add_job(&job("off", None)).await.unwrap();
    assert!(a.enabled && !off.enabled);
    assert_eq!(a.schedule, json!({"every": "1h", "z": [1, 2]}));
    assert_eq!(store.job(a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(
        store
            .jobs()
            .await
            .unwrap()
            .iter()
            .map(|j| j.id)
            .collect::<Vec<_>>(),
        [a.id, b.id, off.id]
    );
    assert_eq!(store.next_due().await.unwrap(), Some(1_500));
    assert!(
        store
            .claim_due(&claim("w1", 1_000))
            .await
            .unwrap()
            .is_empty()
    );

    let claimed = store.claim_due(&claim("w1", 2_000)).await.unwrap();
    assert_eq!(
        claimed.iter().map(|c| c.job.id).collect::<Vec<_>>(),
        [b.id, a.id],
        "oldest due first"
    );
    assert_eq!(claimed[0].scheduled, 1_500);
    assert_eq!(claimed[0].job.lease_owner.as_deref(), Some("w1"));
    assert_eq!(claimed[0].job.lease_until, 3_000);
    // Leased jobs are due after their lease.
    assert_eq!(store.next_due().await.unwrap(), Some(3_001));
    assert!(matches!(
        store.trigger(a.id, 2_500).await.unwrap(),
        Trigger::Running { lease_until: 3_000 }
    ));
    assert!(store.renew_lease(a.id, "w1", 5_000).await.unwrap());
    assert!(!store.renew_lease(a.id, "w2", 6_000).await.unwrap());

    let end = |job_id, run_id, then| RunEnd {
        job_id,
        run_id,
        owner: "w1".into(),
        ended: 2_100,
        outcome: "ok".into(),
        summary: "fine".into(),
        then,
    };
    assert!(
        store
            .finish_run(&end(b.id, claimed[0].run_id, AfterRun::Reschedule(9_000)))
            .await
            .unwrap()
    );
    let b_after = store.job(b.id).await.unwrap().unwrap();
    assert_eq!(
        (
            b_after.next_run,
            b_after.lease_owner.clone(),
            b_after.lease_until,
            b_after.runs,
            b_after.last_outcome.as_deref(),
            b_after.last_run
        ),
        (Some(9_000), None, 0, 1, Some("ok"), Some(2_100))
    );
    assert!(
        store
            .finish_run(&end(a.id, claimed[1].run_id, AfterRun::Delete))
            .await
            .unwrap()
    );
    assert_eq!(store.job(a.id).await.unwrap(), None);

    let runs = store.runs(None, 10).await.unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].id > runs[1].id, "newest first");
    assert!(
        runs.iter()
            .all(|r| r.outcome == "ok" && r.ended == Some(2_100))
    );
    assert_eq!(store.runs(Some(b.id), 10).await.unwrap().len(), 1);
    assert_eq!(
        store.runs(Some(a.id), 10).await.unwrap()[0].job_name,
        "a",
        "runs outlive their job"
    );

    // Trigger a finished job; remove one.
    let Trigger::Queued(queued) = store.trigger(off.id, 3_000).await.unwrap() else {
        panic!("the finished job is triggered");
    };
    assert!(queued.enabled);
    assert_eq!(queued.next_run, Some(3_000));
    assert!(matches!(
        store.trigger(999, 1).await.unwrap(),
        Trigger::NotFound
    ));
    let fin = store.claim_due(&claim("w1", 3_000)).await.unwrap();
    assert_eq!(fin.len(), 1);
    assert!(
        store
            .finish_run(&end(off.id, fin[0].run_id, AfterRun::Finish))
            .await
            .unwrap()
    );
    let finished = store.job(off.id).await.unwrap().unwrap();
    assert!(!finished.enabled);
    assert_eq!(finished.next_run, None);
    assert_eq!(
        store.remove_job(off.id).await.unwrap().map(|j| j.id),
        Some(off.id)
    );
    assert_eq!(store.remove_job(off.id).await.unwrap(), None);
    assert_eq!(store.next_due().await.unwrap(), Some(9_000));

    // Each job keeps its newest 100 runs.
    let many = store.add_job(&job("many", Some(0))).await.unwrap();
    for i in 0..105 {
        let c = store.claim_due(&claim("w1", 100_000 + i)).await.unwrap();
        let c = c.iter().find(|c| c.job.id == many.id).unwrap();
        store
            .finish_run(&RunEnd {
                ended: 100_000 + i,
                ..end(many.id, c.run_id, AfterRun::Reschedule(0))
            })
            .await
            .unwrap();
    }
    assert_eq!(store.runs(Some(many.id), 1_000).await.unwrap().len(), 100);
}

pub(crate) async fn schedules_two_claimants_and_lease_expiry(store: Arc<impl Backend>) {
    let mut ids = Vec::new();
    for i in 0..20 {
        ids.push(
            store
                .add_job(&job(&format!("j{i}"), Some(i)))
                .await
                .unwrap()
                .id,
        );
    }
    // Two schedulers claim at once, many times: each job is claimed once.
    let mut tasks = Vec::new();
    for owner in ["w1", "w2"] {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for _ in 0..10 {
                let claimed = store
                    .claim_due(&Claim {
                        limit: 3,
                        ..claim(owner, 1_000)
                    })
                    .await
                    .unwrap();
                got.extend(claimed.into_iter().map(|c| (c.job.id, c.run_id)));
                tokio::task::yield_now().await;
            }
            got
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let mut jobs: Vec<i64> = all.iter().map(|c| c.0).collect();
    jobs.sort_unstable();
    assert_eq!(jobs, ids, "every job claimed exactly once");
    assert!(
        store
            .claim_due(&claim("w3", 1_500))
            .await
            .unwrap()
            .is_empty(),
        "leases hold until they expire"
    );

    // The leases expire at 2 000: another scheduler takes the jobs over and
    // the first runs are marked abandoned.
    let again = store.claim_due(&claim("w3", 2_001)).await.unwrap();
    assert_eq!(again.len(), 10, "up to the limit");
    let first = again[0].job.id;
    let runs = store.runs(Some(first), 10).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.outcome.as_str()).collect::<Vec<_>>(),
        [RUN_RUNNING, RUN_ABANDONED]
    );
    assert_eq!(runs[0].owner, "w3");
    // The old owner records how its run ended but no longer owns the job.
    let old_run = runs[1].id;
    let old_owner = runs[1].owner.clone();
    let held = store
        .finish_run(&RunEnd {
            job_id: first,
            run_id: old_run,
            owner: old_owner.clone(),
            ended: 2_002,
            outcome: "ok".into(),
            summary: "late".into(),
            then: AfterRun::Delete,
        })
        .await
        .unwrap();
    assert!(!held);
    let job = store.job(first).await.unwrap().unwrap();
    assert_eq!(job.lease_owner.as_deref(), Some("w3"));
    assert!(!store.renew_lease(first, &old_owner, 9_999).await.unwrap());
}

fn tool(name: &str, agent: &str, scope: DynamicToolScope) -> NewDynamicTool {
    NewDynamicTool {
        name: name.into(),
        description: format!("the {name} tool"),
        kind: DynamicToolKind::Script,
        interpreter: Some("sh".into()),
        source: "echo hi".into(),
        parameters: json!({"type": "object", "properties": {}}),
        scope,
        created_by: agent.into(),
        session_id: Some("s1".into()),
        advice: json!(["uses the network"]),
    }
}

async fn create(store: &impl Backend, t: &NewDynamicTool) -> Created {
    store.create_dynamic_tool(t, 2).await.unwrap()
}

pub(crate) async fn dynamic_tools_review(store: Arc<impl Backend>) {
    let Created::Created(a) = create(&*store, &tool("a", "build", DynamicToolScope::Agent)).await
    else {
        panic!("created");
    };
    assert_eq!(a.status, DynamicToolStatus::Pending);
    assert_eq!(a.advice, json!(["uses the network"]));
    assert_eq!(store.dynamic_tool(a.id).await.unwrap().as_ref(), Some(&*a));
    assert!(matches!(
        create(&*store, &tool("a", "other", DynamicToolScope::Global)).await,
        Created::NameTaken { id, status: DynamicToolStatus::Pending } if id == a.id
    ));
    let Created::Created(g) = create(&*store, &tool("g", "build", DynamicToolScope::Global)).await
    else {
        panic!("created");
    };
    assert!(matches!(
        create(&*store, &tool("c", "build", DynamicToolScope::Agent)).await,
        Created::LimitReached { count: 2 }
    ));
    assert!(
        store
            .approved_dynamic_tools_for("build")
            .await
            .unwrap()
            .is_empty()
    );

    let StatusChange::Changed(approved) = store
        .set_dynamic_tool_status(a.id, DynamicToolStatus::Approved)
        .await
        .unwrap()
    else {
        panic!("approved");
    };
    assert!(approved.updated > a.updated);
    store
        .set_dynamic_tool_status(g.id, DynamicToolStatus::Approved)
        .await
        .unwrap();
    let ids =
        |v: Vec<toolgate_store::DynamicToolRecord>| v.iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.approved_dynamic_tools_for("build").await.unwrap()),
        [a.id, g.id]
    );
    assert_eq!(
        ids(store.approved_dynamic_tools_for("other").await.unwrap()),
        [g.id],
        "agent-scoped tools are their creator's"
    );
    // Rejecting frees the name and the place; rejected is final.
    assert!(matches!(
        store
            .set_dynamic_tool_status(a.id, DynamicToolStatus::Rejected)
            .await
            .unwrap(),
        StatusChange::Changed(ref t) if t.status == DynamicToolStatus::Rejected
    ));
    assert!(matches!(
        store
            .set_dynamic_tool_status(a.id, DynamicToolStatus::Approved)
            .await
            .unwrap(),
        StatusChange::Final(ref t) if t.status == DynamicToolStatus::Rejected
    ));
    assert!(matches!(
        store
            .set_dynamic_tool_status(999, DynamicToolStatus::Approved)
            .await
            .unwrap(),
        StatusChange::NotFound
    ));
    let Created::Created(a2) = create(&*store, &tool("a", "build", DynamicToolScope::Agent)).await
    else {
        panic!("the name is free again");
    };
    assert!(a2.id > g.id);
    assert_eq!(
        ids(store
            .list_dynamic_tools(Some(DynamicToolStatus::Rejected))
            .await
            .unwrap()),
        [a.id]
    );
    assert_eq!(
        ids(store.list_dynamic_tools(None).await.unwrap()),
        [a.id, g.id, a2.id]
    );

    // Concurrent creations of one name: exactly one wins.
    let mut tasks = Vec::new();
    for i in 0..6 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store
                .create_dynamic_tool(
                    &tool("race", &format!("agent{i}"), DynamicToolScope::Global),
                    5,
                )
                .await
                .unwrap()
        }));
    }
    let mut won = 0;
    for task in tasks {
        if matches!(task.await.unwrap(), Created::Created(_)) {
            won += 1;
        }
    }
    assert_eq!(won, 1);
}

fn file(hash: &str) -> FileState {
    FileState::File {
        hash: Some(hash.into()),
        mode: 0o644,
        size: 3,
        link: LinkId::default(),
    }
}

pub(crate) async fn checkpoints_and_rewinds(store: Arc<impl Backend>) {
    store.begin(&new_session("s")).await.unwrap();
    store
        .record_step(&step(
            "s",
            1,
            1,
            0,
            vec![message("user", "a"), message("assistant", "b")],
            vec![],
        ))
        .await
        .unwrap();
    let change = |path: &str, before: FileState, after: FileState| PathChange {
        path: path.into(),
        before,
        after,
    };
    let checkpoint = |run_step, from, changes| NewCheckpoint {
        session_id: "s".into(),
        run: 1,
        run_step,
        messages_from: from,
        changes,
        incomplete: None,
    };
    let one = store
        .record_checkpoint(&checkpoint(
            1,
            0,
            vec![change("a.txt", FileState::Absent, file("h1"))],
        ))
        .await
        .unwrap();
    let two = store
        .record_checkpoint(&checkpoint(2, 1, vec![]))
        .await
        .unwrap();
    assert_eq!((one, two), (1, 2));
    store
        .extend_checkpoint("s", 2, &[change("b.txt", file("h2"), file("h3"))])
        .await
        .unwrap();
    let missing = store
        .record_checkpoint(&NewCheckpoint {
            session_id: "ghost".into(),
            ..checkpoint(1, 0, vec![])
        })
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
    let list = store.checkpoints("s").await.unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].changes.len(), 1);
    assert_eq!(list[1].changes[0].path, "b.txt");
    assert_eq!(store.checkpoint_count().await.unwrap(), 2);
    let hashes = store.referenced_hashes().await.unwrap();
    assert_eq!(
        hashes,
        ["h1", "h2", "h3"].map(str::to_owned).into_iter().collect()
    );

    // Rewinding to step 2 cuts the conversation back to its one message.
    let id = store
        .record_rewind(&NewRewind {
            session_id: "s".into(),
            to_step: 2,
            code: true,
            conversation: true,
            changes: vec![change("b.txt", file("h3"), file("h4"))],
        })
        .await
        .unwrap();
    assert_eq!(
        store.messages("s").await.unwrap(),
        vec![message("user", "a")]
    );
    let list = store.checkpoints("s").await.unwrap();
    assert_eq!((list[0].rewound_by, list[1].rewound_by), (None, Some(id)));
    let last = store.last_rewind("s").await.unwrap().unwrap();
    assert_eq!(last.id, id);
    assert_eq!(last.messages, vec![message("assistant", "b")]);
    assert!(store.referenced_hashes().await.unwrap().contains("h4"));
    store.undo_rewind(id).await.unwrap();
    assert_eq!(store.messages("s").await.unwrap().len(), 2);
    assert_eq!(store.last_rewind("s").await.unwrap(), None);
    assert_eq!(store.checkpoints("s").await.unwrap()[1].rewound_by, None);

    // Pruning keeps the newest.
    assert_eq!(store.prune_checkpoints(0, 1).await.unwrap(), 1);
    assert_eq!(store.checkpoint_count().await.unwrap(), 1);
    assert_eq!(store.prune_checkpoints(i64::MAX, 10).await.unwrap(), 1);
    assert_eq!(store.checkpoint_count().await.unwrap(), 0);
}

fn approval(key: &str, expires: i64) -> NewApproval {
    NewApproval {
        key: key.into(),
        session_id: Some("s1".into()),
        tool: "run_command".into(),
        view: json!({"command": "git push", "z": 1, "a": [true]}),
        worker: "w1".into(),
        created: 1_000,
        expires,
    }
}

pub(crate) async fn approvals_answered_once_and_run_once(store: Arc<impl Backend>) {
    let Asked::New(first) = store.ask_approval(&approval("k1", 5_000)).await.unwrap() else {
        panic!("a new key is asked");
    };
    assert_eq!(first.status, ApprovalStatus::Pending);
    assert_eq!(
        first.view,
        json!({"command": "git push", "z": 1, "a": [true]})
    );
    // The same key, through another worker: the same approval, unchanged.
    let again = store
        .ask_approval(&NewApproval {
            worker: "w2".into(),
            tool: "other".into(),
            ..approval("k1", 9_000)
        })
        .await
        .unwrap();
    assert_eq!(again, Asked::Existing(first.clone()));
    let Asked::New(second) = store.ask_approval(&approval("k2", 1_500)).await.unwrap() else {
        panic!("a new key is asked");
    };
    assert!(second.id > first.id);
    let pending = store.pending_approvals(1_200).await.unwrap();
    assert_eq!(
        pending.iter().map(|a| a.id).collect::<Vec<_>>(),
        [first.id, second.id]
    );
    assert_eq!(
        store.pending_approvals(2_000).await.unwrap().len(),
        1,
        "an expired request is not pending"
    );

    // Two people answer at once (from two workers): the first answer wins.
    let mut answers = Vec::new();
    for (i, approve) in [true, false, true, false].into_iter().enumerate() {
        let store = Arc::clone(&store);
        let id = first.id;
        answers.push(tokio::spawn(async move {
            store
                .answer_approval(&Answer {
                    id,
                    approve,
                    for_session: false,
                    by: format!("person{i}"),
                    at: 2_000,
                })
                .await
                .unwrap()
        }));
    }
    let mut won = Vec::new();
    for answer in answers {
        match answer.await.unwrap() {
            Answered::Answered(record) => won.push(record),
            Answered::AlreadyAnswered(_) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    let stored = store.approval(first.id).await.unwrap().unwrap();
    assert_eq!(stored, won[0]);
    assert_eq!(stored.answered, Some(2_000));
    assert!(stored.answered_by.as_deref().unwrap().starts_with("person"));

    // A late answer to a lapsed request expires it instead.
    let late = store
        .answer_approval(&Answer {
            id: second.id,
            approve: true,
            for_session: false,
            by: "late".into(),
            at: 2_000,
        })
        .await
        .unwrap();
    assert!(
        matches!(late, Answered::Expired(ref r) if r.status == ApprovalStatus::Expired),
        "{late:?}"
    );
    assert!(matches!(
        store
            .answer_approval(&Answer {
                id: 999_999,
                approve: true,
                for_session: false,
                by: "x".into(),
                at: 1
            })
            .await
            .unwrap(),
        Answered::NotFound
    ));
    assert!(matches!(
        store
            .claim_approved_run(second.id, "w1", 2_100)
            .await
            .unwrap(),
        RunClaim::NotApproved(_)
    ));

    // An approved call runs once, whoever claims it; the result is kept
    // for the retries.
    let Asked::New(call) = store.ask_approval(&approval("k3", 9_000)).await.unwrap() else {
        panic!("a new key is asked");
    };
    store
        .answer_approval(&Answer {
            id: call.id,
            approve: true,
            for_session: false,
            by: "p".into(),
            at: 3_000,
        })
        .await
        .unwrap();
    let mut claims = Vec::new();
    for worker in ["w1", "w2", "w3", "w4"] {
        let store = Arc::clone(&store);
        let id = call.id;
        claims.push(tokio::spawn(async move {
            (
                worker,
                store.claim_approved_run(id, worker, 3_100).await.unwrap(),
            )
        }));
    }
    let mut runner = None;
    for claim in claims {
        match claim.await.unwrap() {
            (worker, RunClaim::Claimed(record)) => {
                assert!(runner.is_none(), "claimed twice");
                assert_eq!(record.runner.as_deref(), Some(worker));
                runner = Some(worker);
            }
            (_, RunClaim::Taken(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    let runner = runner.unwrap_or_else(|| panic!("one claim wins"));
    let other = if runner == "w1" { "w2" } else { "w1" };
    assert!(
        !store
            .finish_approved_run(call.id, other, &json!("not mine"), 3_200)
            .await
            .unwrap()
    );
    assert!(
        store
            .finish_approved_run(call.id, runner, &json!({"exit": 0}), 3_200)
            .await
            .unwrap()
    );
    let done = store.approval_by_key("k3").await.unwrap().unwrap();
    assert_eq!(done.status, ApprovalStatus::Done);
    assert_eq!(done.result, Some(json!({"exit": 0})));
    assert!(matches!(
        store.claim_approved_run(call.id, "w9", 3_300).await.unwrap(),
        RunClaim::Taken(ref r) if r.result == Some(json!({"exit": 0}))
    ));
    assert_eq!(store.approval_by_key("nope").await.unwrap(), None);

    // Expiry in bulk.
    store.ask_approval(&approval("k4", 4_000)).await.unwrap();
    store.ask_approval(&approval("k5", 8_000)).await.unwrap();
    assert_eq!(store.expire_approvals(5_000).await.unwrap(), 1);
    assert_eq!(
        store.approval_by_key("k4").await.unwrap().unwrap().status,
        ApprovalStatus::Expired
    );
    assert_eq!(
        store.approval_by_key("k5").await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );
}

pub(crate) async fn approvals_waits_end_at_a_change(store: Arc<impl Backend>) {
    let Asked::New(asked) = store.ask_approval(&approval("w1", i64::MAX)).await.unwrap() else {
        panic!("a new key is asked");
    };
    // Nobody answers: the wait ends at its timeout, the approval unchanged.
    let waited = store
        .wait_for_change(
            asked.id,
            ApprovalStatus::Pending,
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    assert_eq!(waited, Some(asked.clone()));
    assert_eq!(
        store
            .wait_for_change(999_999, ApprovalStatus::Pending, Duration::from_secs(5))
            .await
            .unwrap(),
        None,
        "no such approval"
    );
    // A wait ends with the answer, "allow for the session" kept.
    let waiter = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            store
                .wait_for_change(asked.id, ApprovalStatus::Pending, Duration::from_secs(60))
                .await
                .unwrap()
        })
    };
    let answered = store
        .answer_approval(&Answer {
            id: asked.id,
            approve: true,
            for_session: true,
            by: "ui@worker-2".into(),
            at: 2_000,
        })
        .await
        .unwrap();
    let Answered::Answered(answered) = answered else {
        panic!("{answered:?}");
    };
    assert!(answered.for_session);
    let woken = waiter.await.unwrap().unwrap();
    assert_eq!(woken.status, ApprovalStatus::Approved);
    assert!(woken.for_session);
    assert_eq!(woken.answered_by.as_deref(), Some("ui@worker-2"));
    // A denial never allows for the session, whatever it says.
    let Asked::New(denied) = store.ask_approval(&approval("w2", i64::MAX)).await.unwrap() else {
        panic!("a new key is asked");
    };
    store
        .answer_approval(&Answer {
            id: denied.id,
            approve: false,
            for_session: true,
            by: "p".into(),
            at: 2_000,
        })
        .await
        .unwrap();
    let denied = store.approval(denied.id).await.unwrap().unwrap();
    assert_eq!(
        (denied.status, denied.for_session),
        (ApprovalStatus::Denied, false)
    );
    // A wait for the run to end ends when its result is stored.
    let claimed = store
        .claim_approved_run(asked.id, "w1", 3_000)
        .await
        .unwrap();
    assert!(matches!(claimed, RunClaim::Claimed(_)), "{claimed:?}");
    let waiter = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            store
                .wait_for_change(asked.id, ApprovalStatus::Running, Duration::from_secs(60))
                .await
                .unwrap()
        })
    };
    assert!(
        store
            .finish_approved_run(asked.id, "w1", &json!("ran"), 3_100)
            .await
            .unwrap()
    );
    let done = waiter.await.unwrap().unwrap();
    assert_eq!(
        (done.status, done.result),
        (ApprovalStatus::Done, Some(json!("ran")))
    );
}

fn run(key: &str, worker: &str) -> NewRun {
    NewRun {
        key: key.into(),
        session_id: None,
        tool: "run_command".into(),
        worker: worker.into(),
        at: 1_000,
        call_id: Some(format!("mcp-{worker}-1")),
    }
}

pub(crate) async fn keyed_calls_are_claimed_once(store: Arc<impl Backend>) {
    // A key nobody asked about: recorded running by the first claim of
    // several at once.
    let mut claims = Vec::new();
    for worker in ["w1", "w2", "w3"] {
        let store = Arc::clone(&store);
        claims.push(tokio::spawn(async move {
            store.claim_run(&run("k1", worker)).await.unwrap()
        }));
    }
    let mut won = Vec::new();
    for claim in claims {
        match claim.await.unwrap() {
            RunClaim::Claimed(record) => won.push(record),
            RunClaim::Taken(record) => assert_eq!(record.status, ApprovalStatus::Running),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    let record = won.remove(0);
    assert_eq!(record.status, ApprovalStatus::Running);
    assert_eq!(record.runner.as_deref(), Some(record.worker.as_str()));
    assert_eq!(
        record.call_id,
        Some(format!("mcp-{}-1", record.worker)),
        "the runner's call id is kept"
    );
    assert!(
        store.pending_approvals(0).await.unwrap().is_empty(),
        "a claimed call is no question"
    );
    let runner = record.runner.clone().unwrap();
    assert!(
        store
            .finish_approved_run(record.id, &runner, &json!({"output": "once"}), 1_100)
            .await
            .unwrap()
    );
    assert!(matches!(
        store.claim_run(&run("k1", "w9")).await.unwrap(),
        RunClaim::Taken(ref r) if r.result == Some(json!({"output": "once"}))
    ));
    // A key waiting for a person is not claimed until it is approved.
    let Asked::New(asked) = store.ask_approval(&approval("k2", i64::MAX)).await.unwrap() else {
        panic!("a new key is asked");
    };
    assert!(matches!(
        store.claim_run(&run("k2", "w2")).await.unwrap(),
        RunClaim::NotApproved(ref r) if r.status == ApprovalStatus::Pending
    ));
    store
        .answer_approval(&Answer {
            id: asked.id,
            approve: true,
            for_session: false,
            by: "p".into(),
            at: 1_200,
        })
        .await
        .unwrap();
    let RunClaim::Claimed(claimed) = store.claim_run(&run("k2", "w2")).await.unwrap() else {
        panic!("an approved call is claimed");
    };
    assert_eq!(claimed.id, asked.id);
    assert_eq!(claimed.runner.as_deref(), Some("w2"));
    assert!(matches!(
        store.claim_run(&run("k2", "w1")).await.unwrap(),
        RunClaim::Taken(_)
    ));
}

pub(crate) async fn workers_are_alive_while_they_hold_their_lease(store: Arc<impl Backend>) {
    assert!(!store.worker_alive("never-started").await.unwrap());
    let lease = store.hold_worker("host-1-abc").await.unwrap();
    assert!(store.worker_alive("host-1-abc").await.unwrap());
    assert!(!store.worker_alive("host-2-abc").await.unwrap());
    drop(lease);
    // The lock goes with its holder (on a server, once its connection
    // has closed).
    let mut gone = false;
    for _ in 0..500 {
        if !store.worker_alive("host-1-abc").await.unwrap() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "a dropped lease leaves the worker alive");
    // And can be taken again by a worker of that name.
    let _again = store.hold_worker("host-1-abc").await.unwrap();
    assert!(store.worker_alive("host-1-abc").await.unwrap());
}

pub(crate) async fn rules_are_added_listed_and_removed(store: Arc<impl Backend>) {
    assert!(store.rules().await.unwrap().is_empty());
    let first = store
        .add_rule(&NewRule {
            rule: json!({"tool": "write_file", "action": "allow", "path": "src/**"}),
            saved_by: "ana".into(),
            saved: 1_000,
        })
        .await
        .unwrap();
    let second = store
        .add_rule(&NewRule {
            rule: json!({"tool": "run_command", "action": "deny", "command": "rm *"}),
            saved_by: "client ci-bot".into(),
            saved: 2_000,
        })
        .await
        .unwrap();
    assert_ne!(first.id, second.id);
    // Listed in the order they were added, exactly as given.
    let listed = store.rules().await.unwrap();
    assert_eq!(listed, vec![first.clone(), second.clone()]);
    assert_eq!(listed[0].rule["path"], "src/**");
    assert_eq!(listed[1].saved_by, "client ci-bot");
    // Removed by id; a removed (or never given) id reports not found.
    assert!(store.remove_rule(first.id).await.unwrap());
    assert!(!store.remove_rule(first.id).await.unwrap());
    assert!(!store.remove_rule(second.id + 1_000).await.unwrap());
    assert_eq!(store.rules().await.unwrap(), vec![second.clone()]);
    // A new rule never takes a removed rule's id.
    let third = store
        .add_rule(&NewRule {
            rule: json!({"tool": "fetch", "action": "allow"}),
            saved_by: "ana".into(),
            saved: 3_000,
        })
        .await
        .unwrap();
    assert!(third.id > second.id);
    let ids: Vec<i64> = store.rules().await.unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![second.id, third.id]);
}

pub(crate) async fn session_allows_hold_for_their_scope_until_they_expire(
    store: Arc<impl Backend>,
) {
    let allow = |scope: &str, granted: i64, expires: i64| SessionAllow {
        scope: scope.into(),
        tool: "write_file".into(),
        sensitivity: "\"sensitive\"".into(),
        by: "ui@w1".into(),
        granted,
        expires,
    };
    let allowed = |scope: &'static str, tool: &'static str, sensitivity: &'static str, now| {
        let store = Arc::clone(&store);
        async move {
            store
                .session_allowed(scope, tool, sensitivity, now)
                .await
                .unwrap()
        }
    };
    assert!(!allowed("client:ci", "write_file", "\"sensitive\"", 1_000).await);
    store
        .allow_for_session(&allow("client:ci", 1_000, 5_000))
        .await
        .unwrap();
    assert!(allowed("client:ci", "write_file", "\"sensitive\"", 4_999).await);
    // Another scope, tool or sensitivity: not allowed.
    assert!(!allowed("client:bot", "write_file", "\"sensitive\"", 2_000).await);
    assert!(!allowed("client:ci", "edit_file", "\"sensitive\"", 2_000).await);
    assert!(
        !allowed(
            "client:ci",
            "write_file",
            "{\"command\":\"dangerous\"}",
            2_000
        )
        .await
    );
    // Expired at its time.
    assert!(!allowed("client:ci", "write_file", "\"sensitive\"", 5_000).await);
    // Given again with an earlier expiry: the later one is kept; with a
    // later one, it is extended.
    store
        .allow_for_session(&allow("client:ci", 2_000, 3_000))
        .await
        .unwrap();
    assert!(allowed("client:ci", "write_file", "\"sensitive\"", 4_000).await);
    store
        .allow_for_session(&allow("client:ci", 4_500, 9_000))
        .await
        .unwrap();
    assert!(allowed("client:ci", "write_file", "\"sensitive\"", 8_999).await);
    // An expired one is dropped when another is given, and can be given
    // anew.
    store
        .allow_for_session(&allow("client:bot", 10_000, 11_000))
        .await
        .unwrap();
    assert!(!allowed("client:ci", "write_file", "\"sensitive\"", 10_000).await);
    store
        .allow_for_session(&allow("client:ci", 10_000, 12_000))
        .await
        .unwrap();
    assert!(allowed("client:ci", "write_file", "\"sensitive\"", 11_500).await);
}

pub(crate) async fn request_budgets_are_taken_once_by_concurrent_takers(store: Arc<impl Backend>) {
    // Six a minute: six at once, then one every 10 seconds.
    let budget = Budget::per_minute(6);
    let now = 1_000_000;
    let takes: Vec<_> = (0..10)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.take_request("ci", budget, now).await.unwrap() })
        })
        .collect();
    let mut granted = 0;
    let mut waits = Vec::new();
    for take in takes {
        match take.await.unwrap() {
            None => granted += 1,
            Some(wait) => waits.push(wait),
        }
    }
    assert_eq!(granted, 6, "of 10 takes at once on a bucket of 6");
    // Empty: the next one is 10 s away.
    assert!(
        waits.iter().all(|w| (9_990..=10_000).contains(w)),
        "{waits:?}"
    );
    // Another key has its own bucket.
    assert_eq!(store.take_request("bot", budget, now).await.unwrap(), None);
    // Half the wait later: still none; after the wait: one, and only one.
    let wait = store.take_request("ci", budget, now + 5_000).await.unwrap();
    assert!(
        wait.is_some_and(|w| (4_990..=5_000).contains(&w)),
        "{wait:?}"
    );
    assert_eq!(
        store
            .take_request("ci", budget, now + 10_000)
            .await
            .unwrap(),
        None
    );
    assert!(
        store
            .take_request("ci", budget, now + 10_000)
            .await
            .unwrap()
            .is_some()
    );
    // A clock behind the last take counts as no time, not as a refund.
    assert!(
        store
            .take_request("ci", budget, now)
            .await
            .unwrap()
            .is_some()
    );
    // A minute later, full again (not more).
    let later = now + 10_000 + 600_000;
    for _ in 0..6 {
        assert_eq!(store.take_request("ci", budget, later).await.unwrap(), None);
    }
    assert!(
        store
            .take_request("ci", budget, later)
            .await
            .unwrap()
            .is_some()
    );
}
