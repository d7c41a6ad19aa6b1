//! Step 5 with real file tools: what a person is shown is what runs, and an
//! approval belongs to the scope that gave it, on every worker when the
//! scope's allows are shared.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::Notify;
use toolgate_core::{Registry, Sensitivity, ToolCall, Workspace};
use toolgate_engine::{
    Action, Answered, Approval, ApprovalRequest, ApprovalScope, Approver, Decision,
    ExecutionEngine, SharedAllows,
};
use toolgate_tools::{BuiltinOptions, builtin_tools};

struct Fixture {
    dir: tempfile::TempDir,
    registry: Arc<Registry>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::builder(dir.path()).build().unwrap();
        let registry = Arc::new(Registry::new());
        for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
            registry.register_arc(tool).unwrap();
        }
        Self { dir, registry }
    }

    fn engine(&self, approver: Arc<dyn Approver>) -> ExecutionEngine {
        ExecutionEngine::builder(Arc::clone(&self.registry))
            .approver(approver)
            .workspace(Workspace::builder(self.dir.path()).build().unwrap())
            .build()
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(path)).unwrap()
    }
}

/// Allows, after doing `meanwhile` (what someone else does while the
/// person reads the question).
struct AllowAfter {
    meanwhile: Box<dyn Fn() + Send + Sync>,
    shown: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for AllowAfter {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        self.shown.lock().unwrap().push(request.view.text());
        (self.meanwhile)();
        Approval::Allow
    }
}

#[tokio::test]
async fn a_file_changed_while_the_person_decides_is_not_overwritten() {
    let f = Fixture::new();
    std::fs::write(f.dir.path().join("a.txt"), "old text\n").unwrap();
    let path = f.dir.path().join("a.txt");
    let approver = Arc::new(AllowAfter {
        meanwhile: Box::new(move || {
            std::fs::write(&path, "old text\nand a line someone added\n").unwrap();
        }),
        shown: Mutex::default(),
    });
    let engine = f.engine(Arc::clone(&approver) as Arc<dyn Approver>);
    let run = engine
        .execute(ToolCall::new(
            "1",
            "write_file",
            json!({"path": "a.txt", "content": "new text\n"}),
        ))
        .await;
    assert_eq!(run.decision, Decision::Changed, "{:?}", run.result);
    assert_eq!(f.read("a.txt"), "old text\nand a line someone added\n");
    let record = run.approval.unwrap();
    assert_eq!(record.answer, Answered::Changed);
    // What was shown: the diff against the file as it was then.
    let shown = approver.shown.lock().unwrap()[0].clone();
    assert!(
        shown.contains("-old text") && shown.contains("+new text"),
        "{shown}"
    );
}

#[tokio::test]
async fn an_unchanged_file_is_written_as_shown_and_the_record_says_so() {
    let f = Fixture::new();
    std::fs::write(f.dir.path().join("a.txt"), "1\n2\n3\n4\n5\n").unwrap();
    let approver = Arc::new(AllowAfter {
        meanwhile: Box::new(|| {}),
        shown: Mutex::default(),
    });
    let engine = f.engine(Arc::clone(&approver) as Arc<dyn Approver>);
    let run = engine
        .execute(ToolCall::new(
            "1",
            "write_file",
            json!({"path": "a.txt", "content": "x\ny\n"}),
        ))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(f.read("a.txt"), "x\ny\n");
    let record = run.approval.unwrap();
    assert_eq!(record.answer, Answered::Allow);
    assert!(record.waited <= run.duration);
    let Action::Write { summary, .. } = &record.view.actions[0] else {
        panic!("{:?}", record.view)
    };
    assert_eq!(
        summary,
        "replaces an existing file of 5 lines (10 bytes) with 2 lines (4 bytes); +2 −5 lines"
    );
}

/// Answers per scope: `a` waits until released, then allows for the
/// session; `b` denies at once.
struct PerScope {
    release: Notify,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for PerScope {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        self.asked.lock().unwrap().push(request.view.scope.clone());
        if request.view.scope == "a" {
            self.release.notified().await;
            Approval::AllowForSession
        } else {
            Approval::Deny
        }
    }
}

#[tokio::test]
async fn an_approval_belongs_to_its_scope_and_holds_up_no_other() {
    let f = Fixture::new();
    let approver = Arc::new(PerScope {
        release: Notify::new(),
        asked: Mutex::default(),
    });
    let engine = Arc::new(f.engine(Arc::clone(&approver) as Arc<dyn Approver>));
    let (a, b) = (Arc::new(ApprovalScope::new("a")), ApprovalScope::new("b"));
    let write = |id: &str, path: &str| {
        ToolCall::new(id, "write_file", json!({"path": path, "content": "x\n"}))
    };
    let first = {
        let (engine, a) = (Arc::clone(&engine), Arc::clone(&a));
        tokio::spawn(async move { engine.execute_in(write("1", "a1.txt"), &a).await })
    };
    // While a's question is open, b's calls run: a read at once, a write
    // asked and denied.
    while approver.asked.lock().unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    std::fs::write(f.dir.path().join("r.txt"), "readable\n").unwrap();
    let read = engine
        .execute_in(
            ToolCall::new("2", "read_file", json!({"path": "r.txt"})),
            &b,
        )
        .await;
    assert_eq!(read.decision, Decision::Executed);
    assert!(read.result.output.contains("readable"));
    let denied = engine.execute_in(write("3", "b1.txt"), &b).await;
    assert_eq!(denied.decision, Decision::Denied);
    assert!(!first.is_finished(), "a's question is still open");
    approver.release.notify_one();
    assert_eq!(first.await.unwrap().decision, Decision::Executed);
    // a's session allow covers a's next write without a question...
    let again = engine.execute_in(write("4", "a2.txt"), &a).await;
    assert_eq!(again.decision, Decision::Executed);
    assert!(again.approval.is_none());
    // ...and nobody else's.
    let other = engine.execute_in(write("5", "b2.txt"), &b).await;
    assert_eq!(other.decision, Decision::Denied);
    let unscoped = engine.execute(write("6", "c.txt")).await;
    assert_eq!(unscoped.decision, Decision::Denied);
    assert_eq!(*approver.asked.lock().unwrap(), ["a", "b", "b", "this run"]);
    for (file, exists) in [
        ("a1.txt", true),
        ("a2.txt", true),
        ("b1.txt", false),
        ("b2.txt", false),
        ("c.txt", false),
    ] {
        assert_eq!(f.dir.path().join(file).exists(), exists, "{file}");
    }
}

/// Allows kept outside the process, as a store shared by workers keeps
/// them.
#[derive(Debug, Default)]
struct Kept(Mutex<Vec<(String, String, Sensitivity)>>);

#[async_trait]
impl SharedAllows for Kept {
    async fn allows(&self, scope: &str, tool: &str, sensitivity: Sensitivity) -> bool {
        self.0
            .lock()
            .unwrap()
            .contains(&(scope.to_owned(), tool.to_owned(), sensitivity))
    }

    async fn allow(&self, scope: &str, tool: &str, sensitivity: Sensitivity) {
        self.0
            .lock()
            .unwrap()
            .push((scope.to_owned(), tool.to_owned(), sensitivity));
    }
}

/// Allows for the session the first time, then denies.
#[derive(Default)]
struct SessionOnce(Mutex<usize>);

#[async_trait]
impl Approver for SessionOnce {
    async fn approve(&self, _: &ApprovalRequest<'_>) -> Approval {
        let mut asked = self.0.lock().unwrap();
        *asked += 1;
        if *asked == 1 {
            Approval::AllowForSession
        } else {
            Approval::Deny
        }
    }
}

#[tokio::test]
async fn a_shared_session_allow_holds_on_another_worker_for_the_same_client_only() {
    let f = Fixture::new();
    let kept: Arc<dyn SharedAllows> = Arc::new(Kept::default());
    // Two workers (two engines, two processes' scopes) sharing the store.
    let (approver_1, approver_2) = (
        Arc::new(SessionOnce::default()),
        Arc::new(SessionOnce::default()),
    );
    let worker_1 = f.engine(Arc::clone(&approver_1) as Arc<dyn Approver>);
    let worker_2 = f.engine(Arc::clone(&approver_2) as Arc<dyn Approver>);
    let ci_on_1 = ApprovalScope::new("MCP client `ci`").shared("client:ci", Arc::clone(&kept));
    let ci_on_2 = ApprovalScope::new("MCP client `ci`").shared("client:ci", Arc::clone(&kept));
    let bot_on_2 = ApprovalScope::new("MCP client `bot`").shared("client:bot", Arc::clone(&kept));
    let write = |id: &str, path: &str| {
        ToolCall::new(id, "write_file", json!({"path": path, "content": "x\n"}))
    };
    let first = worker_1.execute_in(write("1", "one.txt"), &ci_on_1).await;
    assert_eq!(first.decision, Decision::Executed);
    assert_eq!(*approver_1.0.lock().unwrap(), 1);
    // The same client on the other worker: not asked.
    let second = worker_2.execute_in(write("2", "two.txt"), &ci_on_2).await;
    assert_eq!(second.decision, Decision::Executed);
    assert!(second.approval.is_none());
    assert_eq!(*approver_2.0.lock().unwrap(), 0);
    // Another client there: asked (and allowed for its own session).
    let third = worker_2
        .execute_in(write("3", "three.txt"), &bot_on_2)
        .await;
    assert_eq!(third.decision, Decision::Executed);
    assert_eq!(*approver_2.0.lock().unwrap(), 1);
    // A scope that is not shared is not covered by the kept allows.
    let alone = ApprovalScope::new("MCP client `ci`");
    let fourth = worker_2.execute_in(write("4", "four.txt"), &alone).await;
    assert_eq!(fourth.decision, Decision::Denied);
}
