//! `StoreApprover`: a question asked by one worker waits in the store and
//! is answered through another worker's handle on it (two connections to
//! one `SQLite` file, as two processes have).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Change, Effect, Effects, Sensitivity};
use toolgate_engine::{Approval, ApprovalRequest, ApprovalView, Approver as _};
use toolgate_gateway::{StoreApprover, StoredView};
use toolgate_store::{Answer, Answered, ApprovalStatus, SqliteStore, Store};

fn two_workers(dir: &std::path::Path) -> (Arc<dyn Store>, Arc<dyn Store>) {
    let path = dir.join("toolgate.db");
    (
        Arc::new(SqliteStore::open(&path).unwrap()),
        Arc::new(SqliteStore::open(&path).unwrap()),
    )
}

/// The pending approvals of `store`, once there is one.
async fn first_pending(store: &Arc<dyn Store>) -> toolgate_store::ApprovalRecord {
    loop {
        if let Some(first) = store.pending_approvals(0).await.unwrap().into_iter().next() {
            return first;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waits_in_the_store_and_the_first_answer_from_another_worker_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = two_workers(dir.path());
    let approver = Arc::new(StoreApprover::new(one, "worker-1"));
    let effects = Effects::known([Effect::write("a.txt", Change::from_texts(None, "x\n"))]);
    let asking = {
        let approver = Arc::clone(&approver);
        let effects = effects.clone();
        tokio::spawn(async move {
            let args = json!({"path": "a.txt", "content": "x\n"});
            let view =
                ApprovalView::new("write_file", "c1", &args, &effects, Sensitivity::Sensitive);
            let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
            approver.approve(&request).await
        })
    };
    // Worker 2 sees what the person is shown: the gate's view, and the
    // rule "Always allow" would save.
    let pending = first_pending(&two).await;
    assert_eq!(pending.worker, "worker-1");
    assert_eq!(pending.tool, "write_file");
    let shown = StoredView::read(&pending).unwrap();
    assert_eq!(shown.view.tool, "write_file");
    assert!(shown.view.lines().iter().any(|l| l.text.contains("a.txt")));
    assert_eq!(shown.always.unwrap().path.as_deref(), Some("a.txt"));
    // Two answers: the first wins, "allow for the session" kept.
    let answer = |approve, for_session| Answer {
        id: pending.id,
        approve,
        for_session,
        by: "ui@worker-2".into(),
        at: 1,
    };
    assert!(matches!(
        two.answer_approval(&answer(true, true)).await.unwrap(),
        Answered::Answered(_)
    ));
    assert!(matches!(
        two.answer_approval(&answer(false, false)).await.unwrap(),
        Answered::AlreadyAnswered(_)
    ));
    assert_eq!(asking.await.unwrap(), Approval::AllowForSession);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_from_another_worker_denies_and_an_unanswered_question_expires() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = two_workers(dir.path());
    let effects = Effects::Opaque;
    let args = json!({});
    let view = ApprovalView::new(
        "mcp_fs_write",
        "c1",
        &args,
        &effects,
        Sensitivity::Sensitive,
    );
    let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);

    let approver = StoreApprover::new(Arc::clone(&one), "worker-1");
    let record = approver.ask(&request, Some("s1")).await.unwrap();
    assert_eq!(record.session_id.as_deref(), Some("s1"));
    two.answer_approval(&Answer {
        id: record.id,
        approve: false,
        for_session: false,
        by: "ui@worker-2".into(),
        at: 1,
    })
    .await
    .unwrap();
    assert_eq!(approver.wait(record.clone()).await, Approval::Deny);

    // Nobody answers: expired in the store, the call refused saying so,
    // and a late answer is not taken.
    let denied = record.id;
    let approver = StoreApprover::new(one, "worker-1").timeout(Duration::from_millis(300));
    let Approval::Unavailable(why) = approver.approve(&request).await else {
        panic!("an unanswered question is not allowed");
    };
    assert!(why.contains("expired"), "{why}");
    let lapsed = two.approval(denied + 1).await.unwrap().unwrap();
    assert_eq!(lapsed.status, ApprovalStatus::Expired);
    assert!(matches!(
        two.answer_approval(&Answer {
            id: lapsed.id,
            approve: true,
            for_session: false,
            by: "late".into(),
            at: 2,
        })
        .await
        .unwrap(),
        Answered::AlreadyAnswered(_)
    ));
}
