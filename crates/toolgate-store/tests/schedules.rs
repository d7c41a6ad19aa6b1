//! Scheduled jobs in a real `SQLite` file: the job table, leases, run
//! records, and claims racing from several connections.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::collections::HashSet;
use std::sync::{Arc, Barrier};

use serde_json::json;
use toolgate_store::{
    AfterRun, Claim, ClaimedJob, NewJob, RUN_ABANDONED, RUN_RUNNING, RunEnd, ScheduleStore as _,
    SqliteStore, Trigger,
};

fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    (dir, store)
}

fn new_job(name: &str, next_run: Option<i64>) -> NewJob {
    NewJob {
        name: name.to_owned(),
        schedule: json!({"kind": "every", "every_ms": 60_000, "anchor": 0}),
        task: json!({"kind": "message", "text": format!("hello from {name}")}),
        delete_after_run: false,
        session_id: Some("s1".to_owned()),
        created: 1_000,
        next_run,
    }
}

fn claim(owner: &str, now: i64) -> Claim {
    Claim {
        owner: owner.to_owned(),
        now,
        lease_ms: 1_000,
        limit: 10,
    }
}

fn end(claimed: &ClaimedJob, owner: &str, ended: i64, then: AfterRun) -> RunEnd {
    RunEnd {
        job_id: claimed.job.id,
        run_id: claimed.run_id,
        owner: owner.to_owned(),
        ended,
        outcome: "ok".to_owned(),
        summary: format!("ran {}", claimed.job.name),
        then,
    }
}

#[tokio::test]
async fn jobs_round_trip_and_ids_are_never_reused() {
    let (_dir, store) = store();
    let a = store.add_job(&new_job("a", Some(5_000))).await.unwrap();
    let b = store.add_job(&new_job("b", None)).await.unwrap();
    assert_eq!((a.id, b.id), (1, 2));
    assert!(a.enabled && !b.enabled, "no next run: stored finished");
    assert_eq!(a.schedule["every_ms"], 60_000);
    assert_eq!(a.task["text"], "hello from a");
    assert_eq!(a.session_id.as_deref(), Some("s1"));
    assert_eq!((a.next_run, a.lease_until, a.runs), (Some(5_000), 0, 0));
    assert_eq!(store.job(a.id).await.unwrap().as_ref(), Some(&a));

    let removed = store.remove_job(b.id).await.unwrap().unwrap();
    assert_eq!(removed.name, "b");
    assert_eq!(store.remove_job(b.id).await.unwrap(), None);
    assert_eq!(store.job(b.id).await.unwrap(), None);
    // The highest id was removed; the next job still gets a new one.
    let c = store.add_job(&new_job("c", Some(1))).await.unwrap();
    assert_eq!(c.id, 3);
    let names: Vec<_> = store
        .jobs()
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.name)
        .collect();
    assert_eq!(names, ["a", "c"]);
}

#[tokio::test]
async fn only_due_enabled_unleased_jobs_are_claimed_oldest_first() {
    let (_dir, store) = store();
    let later = store.add_job(&new_job("later", Some(200))).await.unwrap();
    let due2 = store.add_job(&new_job("due2", Some(100))).await.unwrap();
    let due1 = store.add_job(&new_job("due1", Some(50))).await.unwrap();
    store.add_job(&new_job("off", None)).await.unwrap();

    let first = store.claim_due(&claim("A", 150)).await.unwrap();
    let ids: Vec<_> = first.iter().map(|c| c.job.id).collect();
    assert_eq!(ids, [due1.id, due2.id]);
    assert_eq!(first[0].scheduled, 50);
    assert_eq!(first[0].job.lease_owner.as_deref(), Some("A"));
    assert_eq!(first[0].job.lease_until, 1_150);
    // Leased: nobody else gets them, and the job not yet due stays.
    assert!(store.claim_due(&claim("B", 150)).await.unwrap().is_empty());
    // At 200 the later job is due; the leased ones are still A's.
    let second = store.claim_due(&claim("B", 200)).await.unwrap();
    assert_eq!(
        second.iter().map(|c| c.job.id).collect::<Vec<_>>(),
        [later.id]
    );

    let runs = store.runs(None, 10).await.unwrap();
    assert_eq!(runs.len(), 3);
    assert!(
        runs.iter()
            .all(|r| r.outcome == RUN_RUNNING && r.ended.is_none())
    );

    // A limit of one claims one.
    let (_dir2, other) = self::store();
    other.add_job(&new_job("x", Some(1))).await.unwrap();
    other.add_job(&new_job("y", Some(2))).await.unwrap();
    let mut one = claim("A", 10);
    one.limit = 1;
    assert_eq!(other.claim_due(&one).await.unwrap().len(), 1);
}

#[tokio::test]
async fn finishing_reschedules_finishes_or_deletes_and_records_the_run() {
    let (_dir, store) = store();
    let every = store.add_job(&new_job("every", Some(10))).await.unwrap();
    let once = store.add_job(&new_job("once", Some(10))).await.unwrap();
    let gone = store.add_job(&new_job("gone", Some(10))).await.unwrap();
    let claimed = store.claim_due(&claim("A", 10)).await.unwrap();
    assert_eq!(claimed.len(), 3);
    let then = [
        AfterRun::Reschedule(60_010),
        AfterRun::Finish,
        AfterRun::Delete,
    ];
    for (c, then) in claimed.iter().zip(then) {
        assert!(store.finish_run(&end(c, "A", 20, then)).await.unwrap());
    }

    let every = store.job(every.id).await.unwrap().unwrap();
    assert_eq!(
        (every.enabled, every.next_run, every.lease_owner.as_deref()),
        (true, Some(60_010), None)
    );
    assert_eq!(
        (every.last_run, every.last_outcome.as_deref(), every.runs),
        (Some(20), Some("ok"), 1)
    );
    let once = store.job(once.id).await.unwrap().unwrap();
    assert_eq!((once.enabled, once.next_run), (false, None));
    assert_eq!(store.job(gone.id).await.unwrap(), None);

    // Runs outlive their job.
    let runs = store.runs(Some(gone.id), 10).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (
            runs[0].job_name.as_str(),
            runs[0].started,
            runs[0].ended,
            runs[0].outcome.as_str(),
            runs[0].summary.as_str()
        ),
        ("gone", 10, Some(20), "ok", "ran gone")
    );
    assert_eq!(store.next_due().await.unwrap(), Some(60_010));
}

#[tokio::test]
async fn an_expired_lease_passes_to_another_scheduler_and_the_first_cannot_touch_the_job() {
    let (_dir, store) = store();
    let job = store.add_job(&new_job("slow", Some(0))).await.unwrap();
    let a = store.claim_due(&claim("A", 0)).await.unwrap().remove(0);
    // The lease holds until 1000: not before.
    assert!(store.claim_due(&claim("B", 999)).await.unwrap().is_empty());
    assert_eq!(store.next_due().await.unwrap(), Some(1_001));
    // A renews it; B still waits.
    assert!(store.renew_lease(job.id, "A", 2_000).await.unwrap());
    assert!(!store.renew_lease(job.id, "B", 9_000).await.unwrap());
    assert!(
        store
            .claim_due(&claim("B", 1_500))
            .await
            .unwrap()
            .is_empty()
    );
    // A stalls past its lease; B claims, and A's run is abandoned.
    let b = store.claim_due(&claim("B", 2_001)).await.unwrap().remove(0);
    assert_eq!(b.job.lease_owner.as_deref(), Some("B"));
    let runs = store.runs(Some(job.id), 10).await.unwrap();
    assert_eq!(runs[1].id, a.run_id);
    assert_eq!(
        (runs[1].outcome.as_str(), runs[1].ended),
        (RUN_ABANDONED, Some(2_001))
    );
    assert_eq!(runs[0].outcome, RUN_RUNNING);
    assert!(!store.renew_lease(job.id, "A", 9_000).await.unwrap());

    // A ends at last: its run records how, the job is left to B.
    let held = store
        .finish_run(&end(&a, "A", 2_100, AfterRun::Delete))
        .await
        .unwrap();
    assert!(!held);
    let stored = store.job(job.id).await.unwrap().unwrap();
    assert_eq!(stored.lease_owner.as_deref(), Some("B"));
    assert_eq!(stored.runs, 0);
    assert!(
        store
            .finish_run(&end(&b, "B", 2_200, AfterRun::Reschedule(5_000)))
            .await
            .unwrap()
    );
    let stored = store.job(job.id).await.unwrap().unwrap();
    assert_eq!((stored.next_run, stored.runs), (Some(5_000), 1));
    let outcomes: Vec<_> = store
        .runs(Some(job.id), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.owner, r.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [("B".into(), "ok".into()), ("A".into(), "ok".into())]
    );
}

#[tokio::test]
async fn trigger_queues_a_job_unless_it_is_running() {
    let (_dir, store) = store();
    assert_eq!(store.trigger(42, 0).await.unwrap(), Trigger::NotFound);
    let job = store.add_job(&new_job("done", None)).await.unwrap();
    let Trigger::Queued(queued) = store.trigger(job.id, 500).await.unwrap() else {
        panic!("a finished job is queued again");
    };
    assert_eq!((queued.enabled, queued.next_run), (true, Some(500)));
    store.claim_due(&claim("A", 500)).await.unwrap();
    assert_eq!(
        store.trigger(job.id, 600).await.unwrap(),
        Trigger::Running { lease_until: 1_500 }
    );
    // Once the lease has expired, the job can be queued again.
    assert!(matches!(
        store.trigger(job.id, 1_501).await.unwrap(),
        Trigger::Queued(_)
    ));
}

#[tokio::test]
async fn each_job_keeps_its_newest_hundred_runs() {
    let (_dir, store) = store();
    let job = store.add_job(&new_job("often", Some(0))).await.unwrap();
    for k in 0..105_i64 {
        let c = store
            .claim_due(&claim("A", k * 10))
            .await
            .unwrap()
            .remove(0);
        let then = AfterRun::Reschedule(k * 10 + 10);
        store
            .finish_run(&end(&c, "A", k * 10 + 1, then))
            .await
            .unwrap();
    }
    let runs = store.runs(Some(job.id), 1_000).await.unwrap();
    assert_eq!(runs.len(), 100);
    assert_eq!(runs[0].started, 1_040);
    assert_eq!(runs[99].started, 50);
    assert_eq!(store.job(job.id).await.unwrap().unwrap().runs, 105);
}

#[test]
fn claims_racing_from_many_connections_take_each_job_once() {
    const JOBS: i64 = 60;
    const CLAIMERS: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    {
        let store = SqliteStore::open(&path).unwrap();
        runtime.block_on(async {
            for k in 0..JOBS {
                store
                    .add_job(&new_job(&format!("j{k}"), Some(k)))
                    .await
                    .unwrap();
            }
        });
    }
    let start = Arc::new(Barrier::new(CLAIMERS));
    let threads: Vec<_> = (0..CLAIMERS)
        .map(|n| {
            let (path, start) = (path.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                let store = SqliteStore::open(&path).unwrap();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                start.wait();
                let owner = format!("owner{n}");
                let mut mine = Vec::new();
                runtime.block_on(async {
                    // Small batches, so the claimers interleave.
                    loop {
                        let mut c = claim(&owner, JOBS);
                        c.limit = 2;
                        let got = store.claim_due(&c).await.unwrap();
                        if got.is_empty() {
                            break;
                        }
                        mine.extend(got.into_iter().map(|c| c.job.id));
                    }
                });
                mine
            })
        })
        .collect();
    let all: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let unique: HashSet<_> = all.iter().collect();
    assert_eq!(all.len(), usize::try_from(JOBS).unwrap(), "{all:?}");
    assert_eq!(unique.len(), all.len());
}
