//! [`TaskStore`] and [`PlanStore`] for [`SqliteStore`] (migration 6).

use std::fmt::Write as _;
use std::str::FromStr;

use async_trait::async_trait;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension as _, Row, params, params_from_iter};

use super::{Db as _, SqliteStore, from_i64, now_ms, to_i64, write_tx};
use crate::{
    Activity, NewProject, NewTask, Plan, PlanStore, Priority, Project, ProjectKey, ProjectStatus,
    ProjectSummary, ProjectUpdate, StoreError, Task, TaskFilter, TaskStatus, TaskStore, TaskUpdate,
};

/// The columns of a [`Project`], read by [`project_row`].
const PROJECT: &str = "SELECT id, name, description, status, created, updated FROM projects";

/// The columns of a [`Task`], read by [`task_row`].
const TASK: &str = "SELECT t.id, t.project_id, p.name, t.title, t.description, t.status,
        t.priority, t.created, t.updated
    FROM tasks t JOIN projects p ON p.id = t.project_id";

/// Statuses and priorities are stored by name; the schema's `CHECK`s keep
/// out names this build does not know.
macro_rules! sql_name {
    ($($type:ty),+) => {$(
        impl ToSql for $type {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $type {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                <$type>::from_str(value.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    )+};
}

sql_name!(ProjectStatus, TaskStatus, Priority);

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create_project(&self, project: &NewProject) -> Result<Option<Project>, StoreError> {
        let project = project.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let now = stamp(&tx)?;
            let id: Option<i64> = tx
                .query_row(
                    "INSERT INTO projects (name, description, status, created, updated)
                     VALUES (?1, ?2, ?3, ?4, ?4)
                     ON CONFLICT (name) DO NOTHING RETURNING id",
                    params![
                        project.name,
                        project.description,
                        ProjectStatus::Active,
                        now
                    ],
                    |r| r.get(0),
                )
                .optional()
                .db()?;
            let Some(id) = id else {
                return Ok(None);
            };
            let mut detail = format!("project \"{}\" created", project.name);
            if !project.description.is_empty() {
                let _ = write!(detail, ": {}", project.description);
            }
            log(&tx, id, None, "project_created", &detail)?;
            let created = get_project(&tx, &ProjectKey::Id(id))?;
            tx.commit().db()?;
            Ok(created)
        })
        .await
    }

    async fn project(&self, key: &ProjectKey) -> Result<Option<Project>, StoreError> {
        let key = key.clone();
        self.with_conn(move |conn| get_project(conn, &key)).await
    }

    async fn list_projects(
        &self,
        include_archived: bool,
    ) -> Result<Vec<ProjectSummary>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare(
                    "SELECT p.id, p.name, p.description, p.status, p.created, p.updated,
                            COALESCE(SUM(t.status != 'done'), 0), COALESCE(SUM(t.status = 'done'), 0)
                     FROM projects p LEFT JOIN tasks t ON t.project_id = p.id
                     WHERE ?1 OR p.status != 'archived'
                     GROUP BY p.id ORDER BY p.updated DESC, p.id DESC",
                )
                .db()?;
            st.query_map([include_archived], |r| {
                Ok(ProjectSummary {
                    project: project_row(r)?,
                    open_tasks: from_i64(r.get(6)?),
                    done_tasks: from_i64(r.get(7)?),
                })
            })
            .db()?
            .collect::<Result<_, _>>()
            .db()
        })
        .await
    }

    async fn update_project(
        &self,
        id: i64,
        update: &ProjectUpdate,
    ) -> Result<Option<Project>, StoreError> {
        let update = update.clone();
        self.with_conn(move |conn| update_project(conn, id, &update))
            .await
    }

    async fn add_task(&self, task: &NewTask) -> Result<Option<Task>, StoreError> {
        let task = task.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            if get_project(&tx, &ProjectKey::Id(task.project_id))?.is_none() {
                return Ok(None);
            }
            let now = now_ms();
            let id: i64 = tx
                .query_row(
                    "INSERT INTO tasks (project_id, title, description, status, priority,
                                        created, updated)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) RETURNING id",
                    params![
                        task.project_id,
                        task.title,
                        task.description,
                        task.status,
                        task.priority,
                        now
                    ],
                    |r| r.get(0),
                )
                .db()?;
            let detail = format!(
                "task #{id} \"{}\" added ({}, {} priority)",
                task.title, task.status, task.priority
            );
            log(&tx, task.project_id, Some(id), "task_added", &detail)?;
            touch_project(&tx, task.project_id)?;
            let added = get_task(&tx, id)?;
            tx.commit().db()?;
            Ok(added)
        })
        .await
    }

    async fn task(&self, id: i64) -> Result<Option<Task>, StoreError> {
        self.with_conn(move |conn| get_task(conn, id)).await
    }

    async fn update_task(&self, id: i64, update: &TaskUpdate) -> Result<Option<Task>, StoreError> {
        let update = update.clone();
        self.with_conn(move |conn| update_task(conn, id, &update))
            .await
    }

    async fn delete_task(&self, id: i64) -> Result<Option<Task>, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(task) = get_task(&tx, id)? else {
                return Ok(None);
            };
            tx.execute("DELETE FROM tasks WHERE id = ?1", [id]).db()?;
            let detail = format!(
                "task #{id} \"{}\" deleted (was {}, {} priority)",
                task.title, task.status, task.priority
            );
            log(&tx, task.project_id, Some(id), "task_deleted", &detail)?;
            touch_project(&tx, task.project_id)?;
            tx.commit().db()?;
            Ok(Some(task))
        })
        .await
    }

    async fn list_tasks(&self, filter: &TaskFilter) -> Result<Vec<Task>, StoreError> {
        let filter = filter.clone();
        self.with_conn(move |conn| {
            let mut sql = format!("{TASK} WHERE 1");
            let mut args: Vec<Box<dyn ToSql + Send>> = Vec::new();
            if let Some(project) = filter.project_id {
                args.push(Box::new(project));
                let _ = write!(sql, " AND t.project_id = ?{}", args.len());
            }
            if !filter.statuses.is_empty() {
                let mut marks = Vec::new();
                for status in &filter.statuses {
                    args.push(Box::new(*status));
                    marks.push(format!("?{}", args.len()));
                }
                let _ = write!(sql, " AND t.status IN ({})", marks.join(", "));
            }
            sql.push_str(
                " ORDER BY CASE t.status WHEN 'in_progress' THEN 0 WHEN 'todo' THEN 1
                    WHEN 'blocked' THEN 2 ELSE 3 END,
                  CASE t.priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END, t.id",
            );
            if filter.limit > 0 {
                args.push(Box::new(to_i64(filter.limit)));
                let _ = write!(sql, " LIMIT ?{}", args.len());
            }
            let mut st = conn.prepare(&sql).db()?;
            st.query_map(params_from_iter(args.iter()), task_row)
                .db()?
                .collect::<Result<_, _>>()
                .db()
        })
        .await
    }

    async fn activity(&self, project_id: i64, limit: usize) -> Result<Vec<Activity>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare(
                    "SELECT id, project_id, task_id, at, action, detail FROM project_activity
                     WHERE project_id = ?1 ORDER BY id DESC LIMIT ?2",
                )
                .db()?;
            st.query_map(params![project_id, to_i64(limit)], |r| {
                Ok(Activity {
                    id: r.get(0)?,
                    project_id: r.get(1)?,
                    task_id: r.get(2)?,
                    at: r.get(3)?,
                    action: r.get(4)?,
                    detail: r.get(5)?,
                })
            })
            .db()?
            .collect::<Result<_, _>>()
            .db()
        })
        .await
    }
}

#[async_trait]
impl PlanStore for SqliteStore {
    async fn set_plan(&self, session_id: &str, plan: &Plan) -> Result<(), StoreError> {
        let id = session_id.to_owned();
        let json = serde_json::to_string(plan).map_err(StoreError::Json)?;
        let updated = plan.updated;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            tx.execute(
                "INSERT INTO session_plans (session_id, plan, updated) VALUES (?1, ?2, ?3)
                 ON CONFLICT (session_id) DO UPDATE SET plan = excluded.plan,
                    updated = excluded.updated",
                params![id, json, updated],
            )
            .db()?;
            tx.commit().db()
        })
        .await
    }

    async fn plan(&self, session_id: &str) -> Result<Option<Plan>, StoreError> {
        let id = session_id.to_owned();
        let json: Option<String> = self
            .with_conn(move |conn| {
                conn.query_row(
                    "SELECT plan FROM session_plans WHERE session_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .optional()
                .db()
            })
            .await?;
        json.map(|j| serde_json::from_str(&j).map_err(StoreError::Json))
            .transpose()
    }
}

fn update_project(
    conn: &mut Connection,
    id: i64,
    update: &ProjectUpdate,
) -> Result<Option<Project>, StoreError> {
    let tx = write_tx(conn)?;
    let Some(old) = get_project(&tx, &ProjectKey::Id(id))? else {
        return Ok(None);
    };
    let mut new = old.clone();
    let mut changes = Vec::new();
    if let Some(name) = update.name.as_ref().filter(|n| **n != old.name) {
        if get_project(&tx, &ProjectKey::Name(name.clone()))?.is_some_and(|p| p.id != id) {
            return Ok(None);
        }
        changes.push(format!("name \"{}\" → \"{name}\"", old.name));
        new.name.clone_from(name);
    }
    if let Some(description) = update
        .description
        .as_ref()
        .filter(|d| **d != old.description)
    {
        changes.push("description changed".to_owned());
        new.description.clone_from(description);
    }
    if let Some(status) = update.status.filter(|s| *s != old.status) {
        changes.push(format!("status {} → {status}", old.status));
        new.status = status;
    }
    let Some((action, detail)) = describe("project_updated", &changes, update.note.as_deref())
    else {
        return Ok(Some(old));
    };
    new.updated = stamp(&tx)?;
    tx.execute(
        "UPDATE projects SET name = ?2, description = ?3, status = ?4, updated = ?5
         WHERE id = ?1",
        params![id, new.name, new.description, new.status, new.updated],
    )
    .db()?;
    log(&tx, id, None, action, &detail)?;
    tx.commit().db()?;
    Ok(Some(new))
}

fn update_task(
    conn: &mut Connection,
    id: i64,
    update: &TaskUpdate,
) -> Result<Option<Task>, StoreError> {
    let tx = write_tx(conn)?;
    let Some(old) = get_task(&tx, id)? else {
        return Ok(None);
    };
    let mut new = old.clone();
    let mut changes = Vec::new();
    if let Some(title) = update.title.as_ref().filter(|t| **t != old.title) {
        changes.push(format!("title \"{}\" → \"{title}\"", old.title));
        new.title.clone_from(title);
    }
    if let Some(description) = update
        .description
        .as_ref()
        .filter(|d| **d != old.description)
    {
        changes.push("description changed".to_owned());
        new.description.clone_from(description);
    }
    if let Some(status) = update.status.filter(|s| *s != old.status) {
        changes.push(format!("status {} → {status}", old.status));
        new.status = status;
    }
    if let Some(priority) = update.priority.filter(|p| *p != old.priority) {
        changes.push(format!("priority {} → {priority}", old.priority));
        new.priority = priority;
    }
    let Some((action, detail)) = describe("task_updated", &changes, update.note.as_deref()) else {
        return Ok(Some(old));
    };
    let detail = format!("task #{id} \"{}\": {detail}", new.title);
    new.updated = now_ms().max(old.updated + 1);
    tx.execute(
        "UPDATE tasks SET title = ?2, description = ?3, status = ?4, priority = ?5,
            updated = ?6 WHERE id = ?1",
        params![
            id,
            new.title,
            new.description,
            new.status,
            new.priority,
            new.updated
        ],
    )
    .db()?;
    log(&tx, old.project_id, Some(id), action, &detail)?;
    touch_project(&tx, old.project_id)?;
    tx.commit().db()?;
    Ok(Some(new))
}

/// The activity entry of an update: the changes in words, then the note;
/// `note` as the action when only a note was given; nothing when there is
/// neither (rule 4).
fn describe(
    action: &'static str,
    changes: &[String],
    note: Option<&str>,
) -> Option<(&'static str, String)> {
    let note = note.map(str::trim).filter(|n| !n.is_empty());
    match (changes.is_empty(), note) {
        (true, None) => None,
        (true, Some(note)) => Some(("note", note.to_owned())),
        (false, None) => Some((action, changes.join(", "))),
        (false, Some(note)) => Some((action, format!("{} — note: {note}", changes.join(", ")))),
    }
}

fn get_project(conn: &Connection, key: &ProjectKey) -> Result<Option<Project>, StoreError> {
    match key {
        ProjectKey::Id(id) => {
            conn.query_row(&format!("{PROJECT} WHERE id = ?1"), [id], project_row)
        }
        ProjectKey::Name(name) => {
            conn.query_row(&format!("{PROJECT} WHERE name = ?1"), [name], project_row)
        }
    }
    .optional()
    .db()
}

fn get_task(conn: &Connection, id: i64) -> Result<Option<Task>, StoreError> {
    conn.query_row(&format!("{TASK} WHERE t.id = ?1"), [id], task_row)
        .optional()
        .db()
}

fn project_row(r: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        status: r.get(3)?,
        created: r.get(4)?,
        updated: r.get(5)?,
    })
}

fn task_row(r: &Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task {
        id: r.get(0)?,
        project_id: r.get(1)?,
        project: r.get(2)?,
        title: r.get(3)?,
        description: r.get(4)?,
        status: r.get(5)?,
        priority: r.get(6)?,
        created: r.get(7)?,
        updated: r.get(8)?,
    })
}

/// Records one activity entry (in the caller's transaction: rule 2).
fn log(
    conn: &Connection,
    project_id: i64,
    task_id: Option<i64>,
    action: &str,
    detail: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO project_activity (project_id, task_id, at, action, detail)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![project_id, task_id, now_ms(), action, detail],
    )
    .db()
    .map(drop)
}

/// Marks a project as changed now (one of its tasks changed).
fn touch_project(conn: &Connection, id: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE projects SET updated = ?2 WHERE id = ?1",
        params![id, stamp(conn)?],
    )
    .db()
    .map(drop)
}

/// The time of a project write: now, but after every project's `updated`,
/// so that listing projects by `updated` is the exact order of their last
/// changes. (Called inside the write transaction.)
fn stamp(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row(
        "SELECT MAX(?1, COALESCE(MAX(updated) + 1, 0)) FROM projects",
        [now_ms()],
        |r| r.get(0),
    )
    .db()
}
