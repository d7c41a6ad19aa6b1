//! [`TaskStore`] and [`PlanStore`] for [`PostgresStore`].

use std::fmt::Write as _;
use std::str::FromStr;

use async_trait::async_trait;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_i64, from_json, now_ms, stamp, to_i64, to_json};
use toolgate_store::{
    Activity, NewProject, NewTask, Plan, PlanStore, Priority, Project, ProjectKey, ProjectStatus,
    ProjectSummary, ProjectUpdate, StoreError, Task, TaskFilter, TaskStatus, TaskStore, TaskUpdate,
};

const PROJECT: &str = "SELECT id, name, description, status, created, updated FROM projects";

const TASK: &str = "SELECT t.id, t.project_id, p.name, t.title, t.description, t.status,
        t.priority, t.created, t.updated
    FROM tasks t JOIN projects p ON p.id = t.project_id";

#[async_trait]
impl TaskStore for PostgresStore {
    async fn create_project(&self, project: &NewProject) -> Result<Option<Project>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let now = stamp(&tx, "projects").await?;
        let id: Option<i64> = tx
            .query_opt(
                "INSERT INTO projects (name, description, status, created, updated)
                 VALUES ($1, $2, $3, $4, $4)
                 ON CONFLICT (lower(name)) DO NOTHING RETURNING id",
                &[
                    &project.name,
                    &project.description,
                    &ProjectStatus::Active.as_str(),
                    &now,
                ],
            )
            .await
            .db()?
            .map(|r| r.get(0));
        let Some(id) = id else {
            return Ok(None);
        };
        let mut detail = format!("project \"{}\" created", project.name);
        if !project.description.is_empty() {
            let _ = write!(detail, ": {}", project.description);
        }
        log(&tx, id, None, "project_created", &detail).await?;
        let created = get_project(&tx, &ProjectKey::Id(id)).await?;
        tx.commit().await.db()?;
        Ok(created)
    }

    async fn project(&self, key: &ProjectKey) -> Result<Option<Project>, StoreError> {
        let client = self.client().await?;
        get_project(&**client, key).await
    }

    async fn list_projects(
        &self,
        include_archived: bool,
    ) -> Result<Vec<ProjectSummary>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT p.id, p.name, p.description, p.status, p.created, p.updated,
                        COUNT(t.id) FILTER (WHERE t.status <> 'done'),
                        COUNT(t.id) FILTER (WHERE t.status = 'done')
                 FROM projects p LEFT JOIN tasks t ON t.project_id = p.id
                 WHERE $1 OR p.status <> 'archived'
                 GROUP BY p.id ORDER BY p.updated DESC, p.id DESC",
                &[&include_archived],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(ProjectSummary {
                    project: project_row(r)?,
                    open_tasks: from_i64(r.get(6)),
                    done_tasks: from_i64(r.get(7)),
                })
            })
            .collect()
    }

    async fn update_project(
        &self,
        id: i64,
        update: &ProjectUpdate,
    ) -> Result<Option<Project>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The clock first (one order of locks), then the project's row.
        let now = stamp(&tx, "projects").await?;
        let Some(old) = get_project_locked(&tx, id).await? else {
            return Ok(None);
        };
        let mut new = old.clone();
        let mut changes = Vec::new();
        if let Some(name) = update.name.as_ref().filter(|n| **n != old.name) {
            if get_project(&tx, &ProjectKey::Name(name.clone()))
                .await?
                .is_some_and(|p| p.id != id)
            {
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
        new.updated = now;
        let changed = tx
            .execute(
                "UPDATE projects SET name = $2, description = $3, status = $4, updated = $5
                 WHERE id = $1",
                &[
                    &id,
                    &new.name,
                    &new.description,
                    &new.status.as_str(),
                    &new.updated,
                ],
            )
            .await;
        match changed {
            // Another worker took the name since the check.
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                return Ok(None);
            }
            other => other.db()?,
        };
        log(&tx, id, None, action, &detail).await?;
        tx.commit().await.db()?;
        Ok(Some(new))
    }

    async fn add_task(&self, task: &NewTask) -> Result<Option<Task>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let now = stamp(&tx, "projects").await?;
        if get_project_locked(&tx, task.project_id).await?.is_none() {
            return Ok(None);
        }
        let id: i64 = tx
            .query_one(
                "INSERT INTO tasks (project_id, title, description, status, priority,
                                    created, updated)
                 VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
                &[
                    &task.project_id,
                    &task.title,
                    &task.description,
                    &task.status.as_str(),
                    &task.priority.as_str(),
                    &now_ms(),
                ],
            )
            .await
            .db()?
            .get(0);
        let detail = format!(
            "task #{id} \"{}\" added ({}, {} priority)",
            task.title, task.status, task.priority
        );
        log(&tx, task.project_id, Some(id), "task_added", &detail).await?;
        touch_project(&tx, task.project_id, now).await?;
        let added = get_task(&tx, id).await?;
        tx.commit().await.db()?;
        Ok(added)
    }

    async fn task(&self, id: i64) -> Result<Option<Task>, StoreError> {
        let client = self.client().await?;
        get_task(&**client, id).await
    }

    async fn update_task(&self, id: i64, update: &TaskUpdate) -> Result<Option<Task>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let now = stamp(&tx, "projects").await?;
        let Some(old) = get_task_locked(&tx, id).await? else {
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
        let Some((action, detail)) = describe("task_updated", &changes, update.note.as_deref())
        else {
            return Ok(Some(old));
        };
        let detail = format!("task #{id} \"{}\": {detail}", new.title);
        new.updated = now_ms().max(old.updated + 1);
        tx.execute(
            "UPDATE tasks SET title = $2, description = $3, status = $4, priority = $5,
                updated = $6 WHERE id = $1",
            &[
                &id,
                &new.title,
                &new.description,
                &new.status.as_str(),
                &new.priority.as_str(),
                &new.updated,
            ],
        )
        .await
        .db()?;
        log(&tx, old.project_id, Some(id), action, &detail).await?;
        touch_project(&tx, old.project_id, now).await?;
        tx.commit().await.db()?;
        Ok(Some(new))
    }

    async fn delete_task(&self, id: i64) -> Result<Option<Task>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let now = stamp(&tx, "projects").await?;
        let Some(task) = get_task_locked(&tx, id).await? else {
            return Ok(None);
        };
        tx.execute("DELETE FROM tasks WHERE id = $1", &[&id])
            .await
            .db()?;
        let detail = format!(
            "task #{id} \"{}\" deleted (was {}, {} priority)",
            task.title, task.status, task.priority
        );
        log(&tx, task.project_id, Some(id), "task_deleted", &detail).await?;
        touch_project(&tx, task.project_id, now).await?;
        tx.commit().await.db()?;
        Ok(Some(task))
    }

    async fn list_tasks(&self, filter: &TaskFilter) -> Result<Vec<Task>, StoreError> {
        let statuses: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        let limit = if filter.limit > 0 {
            Some(to_i64(filter.limit))
        } else {
            None
        };
        let args: [&(dyn ToSql + Sync); 3] = [&filter.project_id, &statuses, &limit];
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "{TASK} WHERE ($1::BIGINT IS NULL OR t.project_id = $1)
                       AND (cardinality($2::TEXT[]) = 0 OR t.status = ANY($2))
                     ORDER BY CASE t.status WHEN 'in_progress' THEN 0 WHEN 'todo' THEN 1
                        WHEN 'blocked' THEN 2 ELSE 3 END,
                      CASE t.priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END, t.id
                     LIMIT $3"
                ),
                &args,
            )
            .await
            .db()?;
        rows.iter().map(task_row).collect()
    }

    async fn activity(&self, project_id: i64, limit: usize) -> Result<Vec<Activity>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, project_id, task_id, at, action, detail FROM project_activity
                 WHERE project_id = $1 ORDER BY id DESC LIMIT $2",
                &[&project_id, &to_i64(limit)],
            )
            .await
            .db()?;
        Ok(rows
            .iter()
            .map(|r| Activity {
                id: r.get(0),
                project_id: r.get(1),
                task_id: r.get(2),
                at: r.get(3),
                action: r.get(4),
                detail: r.get(5),
            })
            .collect())
    }
}

#[async_trait]
impl PlanStore for PostgresStore {
    async fn set_plan(&self, session_id: &str, plan: &Plan) -> Result<(), StoreError> {
        let json = to_json(plan)?;
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO session_plans (session_id, plan, updated) VALUES ($1, $2, $3)
                 ON CONFLICT (session_id) DO UPDATE SET plan = excluded.plan,
                    updated = excluded.updated",
                &[&session_id, &json, &plan.updated],
            )
            .await
            .db()
            .map(drop)
    }

    async fn plan(&self, session_id: &str) -> Result<Option<Plan>, StoreError> {
        let client = self.client().await?;
        client
            .query_opt(
                "SELECT plan FROM session_plans WHERE session_id = $1",
                &[&session_id],
            )
            .await
            .db()?
            .map(|r| from_json(r.get(0)))
            .transpose()
    }
}

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

async fn get_project(
    client: &impl GenericClient,
    key: &ProjectKey,
) -> Result<Option<Project>, StoreError> {
    let row = match key {
        ProjectKey::Id(id) => {
            client
                .query_opt(&format!("{PROJECT} WHERE id = $1"), &[id])
                .await
        }
        ProjectKey::Name(name) => {
            client
                .query_opt(&format!("{PROJECT} WHERE lower(name) = lower($1)"), &[name])
                .await
        }
    }
    .db()?;
    row.as_ref().map(project_row).transpose()
}

async fn get_project_locked(
    client: &impl GenericClient,
    id: i64,
) -> Result<Option<Project>, StoreError> {
    let row = client
        .query_opt(&format!("{PROJECT} WHERE id = $1 FOR UPDATE"), &[&id])
        .await
        .db()?;
    row.as_ref().map(project_row).transpose()
}

async fn get_task(client: &impl GenericClient, id: i64) -> Result<Option<Task>, StoreError> {
    let row = client
        .query_opt(&format!("{TASK} WHERE t.id = $1"), &[&id])
        .await
        .db()?;
    row.as_ref().map(task_row).transpose()
}

async fn get_task_locked(client: &impl GenericClient, id: i64) -> Result<Option<Task>, StoreError> {
    let row = client
        .query_opt(&format!("{TASK} WHERE t.id = $1 FOR UPDATE OF t"), &[&id])
        .await
        .db()?;
    row.as_ref().map(task_row).transpose()
}

/// A stored name back as its enum.
fn name<T: FromStr<Err = toolgate_store::UnknownName>>(
    column: &str,
    value: &str,
) -> Result<T, StoreError> {
    value.parse().map_err(|_| {
        StoreError::db(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{column} holds an unknown value {value:?}"),
        ))
    })
}

fn project_row(r: &Row) -> Result<Project, StoreError> {
    Ok(Project {
        id: r.get(0),
        name: r.get(1),
        description: r.get(2),
        status: name::<ProjectStatus>("projects.status", r.get(3))?,
        created: r.get(4),
        updated: r.get(5),
    })
}

fn task_row(r: &Row) -> Result<Task, StoreError> {
    Ok(Task {
        id: r.get(0),
        project_id: r.get(1),
        project: r.get(2),
        title: r.get(3),
        description: r.get(4),
        status: name::<TaskStatus>("tasks.status", r.get(5))?,
        priority: name::<Priority>("tasks.priority", r.get(6))?,
        created: r.get(7),
        updated: r.get(8),
    })
}

async fn log(
    client: &impl GenericClient,
    project_id: i64,
    task_id: Option<i64>,
    action: &str,
    detail: &str,
) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO project_activity (project_id, task_id, at, action, detail)
             VALUES ($1, $2, $3, $4, $5)",
            &[&project_id, &task_id, &now_ms(), &action, &detail],
        )
        .await
        .db()
        .map(drop)
}

async fn touch_project(client: &impl GenericClient, id: i64, at: i64) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE projects SET updated = $2 WHERE id = $1",
            &[&id, &at],
        )
        .await
        .db()
        .map(drop)
}
