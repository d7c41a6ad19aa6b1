//! Projects, tasks, their activity log and session plans in a real
//! `SQLite` file.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use rusqlite::Connection;
use toolgate_store::{
    NewProject, NewTask, Plan, PlanStep, PlanStore, Priority, ProjectKey, ProjectStatus,
    ProjectUpdate, SCHEMA_VERSION, SqliteStore, StepStatus, TaskFilter, TaskStatus, TaskStore,
    TaskUpdate,
};

fn project(name: &str) -> NewProject {
    NewProject {
        name: name.to_owned(),
        description: format!("about {name}"),
    }
}

fn task(project_id: i64, title: &str, status: TaskStatus, priority: Priority) -> NewTask {
    NewTask {
        project_id,
        title: title.to_owned(),
        description: String::new(),
        status,
        priority,
    }
}

/// A `list_tasks` case: project, statuses, limit, expected titles.
type ListCase<'a> = (Option<i64>, &'a [TaskStatus], usize, &'a [&'a str]);

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test]
async fn every_change_is_in_the_activity_log_with_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let store = SqliteStore::open(&path).unwrap();
    let before = now_ms();

    let home = store
        .create_project(&project("Home"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(home.status, ProjectStatus::Active);
    // Names are unique, case ignored.
    assert_eq!(store.create_project(&project("HOME")).await.unwrap(), None);
    assert_eq!(
        store
            .project(&ProjectKey::Name("home".into()))
            .await
            .unwrap()
            .unwrap()
            .id,
        home.id
    );

    let paint = store
        .add_task(&task(
            home.id,
            "Paint the hall",
            TaskStatus::Todo,
            Priority::Medium,
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (paint.project.as_str(), paint.project_id),
        ("Home", home.id)
    );
    let tiles = store
        .add_task(&task(
            home.id,
            "Order tiles",
            TaskStatus::Todo,
            Priority::Low,
        ))
        .await
        .unwrap()
        .unwrap();
    // No project, no task.
    assert_eq!(
        store
            .add_task(&task(9999, "x", TaskStatus::Todo, Priority::Low))
            .await
            .unwrap(),
        None
    );

    let started = store
        .update_task(
            paint.id,
            &TaskUpdate {
                status: Some(TaskStatus::InProgress),
                priority: Some(Priority::High),
                note: Some("bought the paint".into()),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (started.status, started.priority),
        (TaskStatus::InProgress, Priority::High)
    );
    // Changing nothing records nothing.
    let same = store
        .update_task(
            paint.id,
            &TaskUpdate {
                status: Some(TaskStatus::InProgress),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same, started);
    // A note alone is a note.
    store
        .update_task(
            tiles.id,
            &TaskUpdate {
                note: Some("  waiting for the quote  ".into()),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.delete_task(tiles.id).await.unwrap().unwrap().id,
        tiles.id
    );
    assert_eq!(store.delete_task(tiles.id).await.unwrap(), None);
    assert_eq!(store.task(tiles.id).await.unwrap(), None);
    store
        .update_project(
            home.id,
            &ProjectUpdate {
                status: Some(ProjectStatus::Paused),
                ..ProjectUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();

    // Read back through another store object, newest first.
    let reader = SqliteStore::open(&path).unwrap();
    let log = reader.activity(home.id, 50).await.unwrap();
    let after = now_ms();
    let entries: Vec<(&str, Option<i64>, &str)> = log
        .iter()
        .map(|a| (a.action.as_str(), a.task_id, a.detail.as_str()))
        .collect();
    let paint_detail = format!(
        "task #{} \"Paint the hall\": status todo → in_progress, priority medium → high — note: bought the paint",
        paint.id
    );
    let deleted = format!(
        "task #{} \"Order tiles\" deleted (was todo, low priority)",
        tiles.id
    );
    let noted = format!("task #{} \"Order tiles\": waiting for the quote", tiles.id);
    let added_tiles = format!(
        "task #{} \"Order tiles\" added (todo, low priority)",
        tiles.id
    );
    let added_paint = format!(
        "task #{} \"Paint the hall\" added (todo, medium priority)",
        paint.id
    );
    assert_eq!(
        entries,
        [
            ("project_updated", None, "status active → paused"),
            ("task_deleted", Some(tiles.id), deleted.as_str()),
            ("note", Some(tiles.id), noted.as_str()),
            ("task_updated", Some(paint.id), paint_detail.as_str()),
            ("task_added", Some(tiles.id), added_tiles.as_str()),
            ("task_added", Some(paint.id), added_paint.as_str()),
            (
                "project_created",
                None,
                "project \"Home\" created: about Home"
            ),
        ]
    );
    for entry in &log {
        assert!(
            (before..=after).contains(&entry.at),
            "{} not within {before}..={after}",
            entry.at
        );
    }
    assert!(
        log.windows(2)
            .all(|w| w[0].id > w[1].id && w[0].at >= w[1].at)
    );
    assert_eq!(reader.activity(home.id, 2).await.unwrap().len(), 2);
}

#[tokio::test]
async fn projects_list_with_counts_and_tasks_sort_by_status_then_priority() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let a = store
        .create_project(&project("Alpha"))
        .await
        .unwrap()
        .unwrap();
    let b = store
        .create_project(&project("Beta"))
        .await
        .unwrap()
        .unwrap();
    let old = store
        .create_project(&project("Old"))
        .await
        .unwrap()
        .unwrap();
    let mut ids = Vec::new();
    for (project, title, status, priority) in [
        (a.id, "a-done", TaskStatus::Done, Priority::High),
        (a.id, "a-low", TaskStatus::Todo, Priority::Low),
        (a.id, "a-high", TaskStatus::Todo, Priority::High),
        (a.id, "a-blocked", TaskStatus::Blocked, Priority::High),
        (b.id, "b-doing", TaskStatus::InProgress, Priority::Low),
    ] {
        let t = store
            .add_task(&task(project, title, status, priority))
            .await
            .unwrap()
            .unwrap();
        ids.push(t.id);
    }
    store
        .update_project(
            old.id,
            &ProjectUpdate {
                status: Some(ProjectStatus::Archived),
                ..ProjectUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();

    let titles =
        |tasks: Vec<toolgate_store::Task>| tasks.into_iter().map(|t| t.title).collect::<Vec<_>>();
    let open = [
        TaskStatus::Todo,
        TaskStatus::InProgress,
        TaskStatus::Blocked,
    ];
    let cases: &[ListCase<'_>] = &[
        (
            None,
            &[],
            0,
            &["b-doing", "a-high", "a-low", "a-blocked", "a-done"],
        ),
        (None, &open, 0, &["b-doing", "a-high", "a-low", "a-blocked"]),
        (Some(a.id), &[TaskStatus::Done], 0, &["a-done"]),
        (Some(a.id), &[], 2, &["a-high", "a-low"]),
        (Some(old.id), &[], 0, &[]),
    ];
    for (project_id, statuses, limit, expected) in cases {
        let filter = TaskFilter {
            project_id: *project_id,
            statuses: statuses.to_vec(),
            limit: *limit,
        };
        assert_eq!(
            titles(store.list_tasks(&filter).await.unwrap()),
            *expected,
            "{filter:?}"
        );
    }

    // Most recently changed first (Old was archived last, then hidden);
    // counts per project.
    let listed = store.list_projects(false).await.unwrap();
    let rows: Vec<(&str, u64, u64)> = listed
        .iter()
        .map(|p| (p.project.name.as_str(), p.open_tasks, p.done_tasks))
        .collect();
    assert_eq!(rows, [("Beta", 1, 0), ("Alpha", 3, 1)]);
    let all = store.list_projects(true).await.unwrap();
    assert_eq!(all[0].project.name, "Old");
    assert_eq!(all.len(), 3);

    // A task change moves its project to the front.
    store
        .update_task(
            ids[1],
            &TaskUpdate {
                status: Some(TaskStatus::Done),
                ..TaskUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    let listed = store.list_projects(false).await.unwrap();
    assert_eq!(
        (listed[0].project.name.as_str(), listed[0].done_tasks),
        ("Alpha", 2)
    );
}

#[tokio::test]
async fn a_project_cannot_take_a_name_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let a = store
        .create_project(&project("Alpha"))
        .await
        .unwrap()
        .unwrap();
    store
        .create_project(&project("Beta"))
        .await
        .unwrap()
        .unwrap();
    let rename = |name: &str| ProjectUpdate {
        name: Some(name.to_owned()),
        ..ProjectUpdate::default()
    };
    assert_eq!(
        store.update_project(a.id, &rename("beta")).await.unwrap(),
        None
    );
    assert_eq!(
        store.update_project(999, &rename("Gamma")).await.unwrap(),
        None
    );
    // Its own name in another case is fine.
    let renamed = store
        .update_project(a.id, &rename("ALPHA"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renamed.name, "ALPHA");
    let log = store.activity(a.id, 1).await.unwrap();
    assert_eq!(log[0].detail, "name \"Alpha\" → \"ALPHA\"");
}

#[tokio::test]
async fn plans_are_replaced_per_session_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let store = SqliteStore::open(&path).unwrap();
    let plan = |steps: &[(&str, StepStatus)], updated: i64| Plan {
        steps: steps
            .iter()
            .map(|(step, status)| PlanStep {
                step: (*step).to_owned(),
                status: *status,
            })
            .collect(),
        explanation: Some("because".into()),
        updated,
    };
    let first = plan(
        &[
            ("read", StepStatus::InProgress),
            ("fix", StepStatus::Pending),
        ],
        1,
    );
    let second = plan(
        &[
            ("read", StepStatus::Completed),
            ("fix", StepStatus::InProgress),
        ],
        2,
    );
    let other = plan(&[("deploy", StepStatus::Pending)], 3);
    assert_eq!(store.plan("s1").await.unwrap(), None);
    store.set_plan("s1", &first).await.unwrap();
    store.set_plan("s2", &other).await.unwrap();
    store.set_plan("s1", &second).await.unwrap();

    let reader = SqliteStore::open(&path).unwrap();
    assert_eq!(reader.plan("s1").await.unwrap(), Some(second));
    assert_eq!(reader.plan("s2").await.unwrap(), Some(other));
    assert_eq!(reader.plan("s3").await.unwrap(), None);
}

#[test]
fn the_schema_refuses_values_the_readers_do_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    conn.execute(
        "INSERT INTO projects (name, description, status, created, updated)
         VALUES ('p', '', 'active', 0, 0)",
        [],
    )
    .unwrap();
    let cases = [
        "INSERT INTO projects (name, description, status, created, updated) VALUES ('q', '', 'closed', 0, 0)",
        "INSERT INTO tasks (project_id, title, description, status, priority, created, updated) VALUES (1, 't', '', 'waiting', 'low', 0, 0)",
        "INSERT INTO tasks (project_id, title, description, status, priority, created, updated) VALUES (1, 't', '', 'todo', 'urgent', 0, 0)",
    ];
    for sql in cases {
        let error = conn.execute(sql, []).unwrap_err();
        assert!(
            error.to_string().contains("CHECK constraint failed"),
            "{sql}: {error}"
        );
    }
}
