//! Sessions written step by step, read back by another store object (as a
//! new process would), resumed, finished; the errors of misuse.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use common::{call, message, new_session, step};
use toolgate_store::{
    NewSession, RUNNING, RunStart, SessionStore, SqliteStore, StepRecord, StoreError,
};

fn db(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("data").join("toolgate.db")
}

#[tokio::test]
async fn steps_survive_in_a_new_store_and_a_lower_messages_from_replaces_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SqliteStore::open(db(&dir)).unwrap();

    let start = writer.begin(&new_session("s1")).await.unwrap();
    assert_eq!(
        start,
        RunStart {
            run: 1,
            stored_messages: 0
        }
    );
    let step1 = step(
        "s1",
        1,
        1,
        0,
        vec![
            message("system", "you are an agent"),
            message("user", "fix it"),
            serde_json::json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}),
        ],
        vec![call(1, "c1"), call(1, "c2")],
    );
    let step2 = step(
        "s1",
        1,
        2,
        3,
        vec![message("tool", "contents"), message("assistant", "done")],
        vec![call(2, "c3")],
    );
    writer.record_step(&step1).await.unwrap();
    writer.record_step(&step2).await.unwrap();

    // A new store object on the same file, as after a crash.
    let reader = SqliteStore::open(db(&dir)).unwrap();
    let list = reader.list().await.unwrap();
    assert_eq!(list.len(), 1);
    let s = &list[0];
    assert_eq!(
        (s.id.as_str(), s.agent.as_str(), s.task.as_str()),
        ("s1", "build", "task of s1")
    );
    assert_eq!(s.outcome, RUNNING);
    assert_eq!(s.pid, Some(std::process::id()));
    assert_eq!((s.runs, s.steps), (1, 2));
    assert_eq!((s.input_tokens, s.output_tokens), (100 + 200, 10 + 20));
    assert!(s.updated > s.created, "{s:?}");
    assert_eq!(reader.get("s1").await.unwrap(), *s);

    let all: Vec<_> = step1
        .messages
        .iter()
        .chain(&step2.messages)
        .cloned()
        .collect();
    assert_eq!(reader.messages("s1").await.unwrap(), all);
    let calls: Vec<_> = step1
        .tool_calls
        .iter()
        .chain(&step2.tool_calls)
        .cloned()
        .collect();
    assert_eq!(reader.tool_calls("s1").await.unwrap(), calls);

    // Context compression: step 3 rewrites everything after the system
    // message.
    let step3 = step(
        "s1",
        1,
        3,
        1,
        vec![
            message("user", "summary of the work so far"),
            message("assistant", "next"),
        ],
        vec![],
    );
    reader.record_step(&step3).await.unwrap();
    let expected = vec![
        all[0].clone(),
        step3.messages[0].clone(),
        step3.messages[1].clone(),
    ];
    assert_eq!(writer.messages("s1").await.unwrap(), expected);
    assert_eq!(writer.get("s1").await.unwrap().steps, 3);
    // Tool calls are a history: compression does not remove them.
    assert_eq!(writer.tool_calls("s1").await.unwrap(), calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_starts_a_new_run_and_fences_off_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    store.begin(&new_session("s1")).await.unwrap();
    let two = vec![message("user", "a"), message("assistant", "b")];
    store
        .record_step(&step("s1", 1, 1, 0, two.clone(), vec![call(1, "c1")]))
        .await
        .unwrap();

    // Resume, with another agent and task: the session keeps its first ones.
    let resumed = NewSession {
        id: "s1".to_owned(),
        agent: "plan".to_owned(),
        task: "continue".to_owned(),
    };
    let start = store.begin(&resumed).await.unwrap();
    assert_eq!(
        start,
        RunStart {
            run: 2,
            stored_messages: 2
        }
    );
    let s = store.get("s1").await.unwrap();
    assert_eq!((s.agent.as_str(), s.task.as_str()), ("build", "task of s1"));
    assert_eq!((s.runs, s.outcome.as_str()), (2, RUNNING));

    // The old run can neither write nor finish any more.
    let stale = store
        .record_step(&step("s1", 1, 2, 2, vec![message("user", "late")], vec![]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            stale,
            StoreError::NotCurrentRun {
                run: 1,
                current: 2,
                ..
            }
        ),
        "{stale:?}"
    );
    assert!(matches!(
        store.finish("s1", 1, "completed").await,
        Err(StoreError::NotCurrentRun { run: 1, .. })
    ));
    // Nor can a run that was never begun.
    assert!(matches!(
        store.finish("s1", 3, "completed").await,
        Err(StoreError::NotCurrentRun { run: 3, .. })
    ));

    store
        .record_step(&step(
            "s1",
            2,
            1,
            2,
            vec![message("user", "continue")],
            vec![call(1, "c9")],
        ))
        .await
        .unwrap();
    store.finish("s1", 2, "completed").await.unwrap();
    let s = store.get("s1").await.unwrap();
    assert_eq!((s.outcome.as_str(), s.pid, s.steps), ("completed", None, 2));
    let mut all = two;
    all.push(message("user", "continue"));
    assert_eq!(store.messages("s1").await.unwrap(), all);
    let names: Vec<_> = store
        .tool_calls("s1")
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.call_id)
        .collect();
    assert_eq!(names, ["c1", "c9"]);
}

#[tokio::test]
async fn a_step_that_would_leave_a_hole_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    store.begin(&new_session("s1")).await.unwrap();
    store
        .record_step(&step("s1", 1, 1, 0, vec![message("user", "a")], vec![]))
        .await
        .unwrap();
    let before = store.get("s1").await.unwrap();

    let err = store
        .record_step(&step(
            "s1",
            1,
            2,
            2,
            vec![message("user", "c")],
            vec![call(2, "x")],
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::MessageGap {
                from: 2,
                stored: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(store.get("s1").await.unwrap(), before);
    assert_eq!(store.messages("s1").await.unwrap(), [message("user", "a")]);
    assert!(store.tool_calls("s1").await.unwrap().is_empty());
}

#[tokio::test]
async fn unknown_sessions_are_not_found_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    store.begin(&new_session("other")).await.unwrap();

    let errors = [
        store.get("nope").await.map(drop).unwrap_err(),
        store.messages("nope").await.map(drop).unwrap_err(),
        store.tool_calls("nope").await.map(drop).unwrap_err(),
        store.finish("nope", 1, "completed").await.unwrap_err(),
        store
            .record_step(&step("nope", 1, 1, 0, vec![], vec![]))
            .await
            .unwrap_err(),
    ];
    for err in errors {
        assert!(
            matches!(&err, StoreError::NotFound(id) if id == "nope"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "no session with id `nope`; list them with `toolgate sessions list`"
        );
    }
}

#[tokio::test]
async fn list_is_in_the_order_of_the_last_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    for id in ["a", "b", "c"] {
        store.begin(&new_session(id)).await.unwrap();
    }
    let ids = |list: Vec<toolgate_store::SessionSummary>| -> Vec<String> {
        list.into_iter().map(|s| s.id).collect()
    };
    assert_eq!(ids(store.list().await.unwrap()), ["c", "b", "a"]);

    store
        .record_step(&step("a", 1, 1, 0, vec![message("user", "x")], vec![]))
        .await
        .unwrap();
    assert_eq!(ids(store.list().await.unwrap()), ["a", "c", "b"]);
    store.finish("b", 1, "failed").await.unwrap();
    assert_eq!(ids(store.list().await.unwrap()), ["b", "a", "c"]);
    // Stamps are unique, even within one millisecond.
    let list = store.list().await.unwrap();
    assert!(
        list.windows(2).all(|w| w[0].updated > w[1].updated),
        "{list:?}"
    );
}

#[tokio::test]
async fn a_step_without_usage_or_calls_counts_as_a_step_with_no_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    store.begin(&new_session("s1")).await.unwrap();
    store
        .record_step(&StepRecord {
            usage: None,
            events: Vec::new(),
            ..step("s1", 1, 1, 0, vec![message("user", "a")], vec![])
        })
        .await
        .unwrap();
    let s = store.get("s1").await.unwrap();
    assert_eq!((s.steps, s.input_tokens, s.output_tokens), (1, 0, 0));
}

/// Polls a future to completion on this thread, with no runtime at all.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

#[test]
fn works_outside_any_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    let start = block_on(store.begin(&new_session("s1"))).unwrap();
    block_on(store.record_step(&step(
        "s1",
        start.run,
        1,
        0,
        vec![message("user", "a")],
        vec![],
    )))
    .unwrap();
    assert_eq!(
        block_on(store.messages("s1")).unwrap(),
        [message("user", "a")]
    );
}

#[tokio::test]
async fn the_traits_work_as_trait_objects_shared_between_tasks() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<SqliteStore>();
    send_sync::<toolgate_store::AuditWriter>();

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db(&dir)).unwrap());
    let tasks: Vec<_> = ["x", "y", "z"]
        .into_iter()
        .map(|id| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let run = store.begin(&new_session(id)).await.unwrap().run;
                store
                    .record_step(&step(id, run, 1, 0, vec![message("user", id)], vec![]))
                    .await
                    .unwrap();
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let mut ids: Vec<_> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["x", "y", "z"]);
}

#[tokio::test]
async fn events_are_kept_with_their_step_and_a_refused_step_keeps_none() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(db(&dir)).unwrap();
    store.begin(&new_session("s1")).await.unwrap();
    let event = |step: u32, kind: &str, n: u32| toolgate_store::SessionEvent {
        step,
        kind: kind.to_owned(),
        data: serde_json::json!({"n": n}),
    };
    let mut first = step("s1", 1, 1, 0, vec![message("user", "a")], vec![]);
    first.events = vec![event(0, "routed", 1), event(1, "provider_switch", 2)];
    store.record_step(&first).await.unwrap();
    // A step refused for its gap writes none of its events either.
    let mut gap = step("s1", 1, 2, 5, vec![message("user", "b")], vec![]);
    gap.events = vec![event(2, "provider_switch", 3)];
    assert!(store.record_step(&gap).await.is_err());
    store.begin(&new_session("s1")).await.unwrap();
    let mut resumed = step("s1", 2, 1, 1, vec![message("user", "c")], vec![]);
    resumed.events = vec![event(1, "routed", 4)];
    store.record_step(&resumed).await.unwrap();

    let events = store.events("s1").await.unwrap();
    let seen: Vec<(u32, u32, &str, &serde_json::Value)> = events
        .iter()
        .map(|e| (e.run, e.event.step, e.event.kind.as_str(), &e.event.data))
        .collect();
    assert_eq!(
        seen,
        [
            (1, 0, "routed", &serde_json::json!({"n": 1})),
            (1, 1, "provider_switch", &serde_json::json!({"n": 2})),
            (2, 1, "routed", &serde_json::json!({"n": 4})),
        ]
    );
    assert!(events.iter().all(|e| e.at > 0));
    assert!(matches!(
        store.events("nope").await,
        Err(StoreError::NotFound(_))
    ));
}
