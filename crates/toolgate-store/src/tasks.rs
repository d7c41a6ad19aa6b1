//! Projects and their tasks with an activity log (seed 003's
//! `project_tools`), and the plan an agent keeps for its session.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::StoreError;
pub use toolgate_core::{Plan, PlanStep, StepStatus};

/// Where projects, tasks and their activity are kept.
///
/// # Rules
///
/// 1. Project names are unique regardless of case; a project is found by
///    its id or by its name (case ignored).
/// 2. Every change is recorded in the project's activity log, in the same
///    transaction as the change, with the time it was made: a change is
///    never stored without its entry, nor an entry without its change.
///    Entries are never changed or removed (deleting a task keeps the log,
///    and its entry says what the task was).
/// 3. Something that does not exist (a project, a task) is `Ok(None)`, not
///    an error; so is a name already taken, for
///    [`create_project`](Self::create_project).
/// 4. A change that changes nothing (every field as it was, no note) is
///    not recorded and leaves `updated` alone.
/// 5. Ids are assigned by the store and never reused.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Creates a project; `None` when one of that name exists (rule 1).
    async fn create_project(&self, project: &NewProject) -> Result<Option<Project>, StoreError>;

    /// A project by id or name; `None` when there is none.
    async fn project(&self, key: &ProjectKey) -> Result<Option<Project>, StoreError>;

    /// Every project, most recently updated first, with its task counts;
    /// archived ones only when `include_archived`.
    async fn list_projects(
        &self,
        include_archived: bool,
    ) -> Result<Vec<ProjectSummary>, StoreError>;

    /// Changes a project; `None` when it does not exist, or when the new
    /// name is taken by another project.
    async fn update_project(
        &self,
        id: i64,
        update: &ProjectUpdate,
    ) -> Result<Option<Project>, StoreError>;

    /// Adds a task to a project; `None` when the project does not exist.
    async fn add_task(&self, task: &NewTask) -> Result<Option<Task>, StoreError>;

    /// One task; `None` when there is none.
    async fn task(&self, id: i64) -> Result<Option<Task>, StoreError>;

    /// Changes a task; `None` when it does not exist.
    async fn update_task(&self, id: i64, update: &TaskUpdate) -> Result<Option<Task>, StoreError>;

    /// Removes a task and returns it; `None` when it does not exist.
    async fn delete_task(&self, id: i64) -> Result<Option<Task>, StoreError>;

    /// The tasks that match `filter`: by status (in progress, todo,
    /// blocked, done), then priority (high first), then id.
    async fn list_tasks(&self, filter: &TaskFilter) -> Result<Vec<Task>, StoreError>;

    /// The newest `limit` entries of a project's activity log, newest
    /// first.
    async fn activity(&self, project_id: i64, limit: usize) -> Result<Vec<Activity>, StoreError>;
}

/// Where the plan of each agent session is kept: the checklist the agent
/// updates as it works (Codex's `update_plan`, Claude Code's `TodoWrite`).
/// The plan is `toolgate-core`'s [`Plan`], the one definition `update_plan`
/// and the front ends use; the store keeps it in its wire format (JSON).
///
/// # Rules
///
/// 1. A session has at most one plan; [`set_plan`](Self::set_plan)
///    replaces it whole.
/// 2. A session id is any string: plans are not tied to the sessions
///    table, so a front end that keeps its sessions elsewhere can keep plans
///    here.
/// 3. The store keeps what it is given: checking a plan (one step in
///    progress at most, …) is the caller's job.
#[async_trait]
pub trait PlanStore: Send + Sync {
    /// Replaces the plan of `session_id`.
    async fn set_plan(&self, session_id: &str, plan: &Plan) -> Result<(), StoreError>;

    /// The current plan of `session_id`, if it has one.
    async fn plan(&self, session_id: &str) -> Result<Option<Plan>, StoreError>;
}

/// How a project is found: by id or by name (case ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectKey {
    /// The id.
    Id(i64),
    /// The name.
    Name(String),
}

/// Where a project stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectStatus {
    /// Being worked on (the status of a new project).
    Active,
    /// Put aside for now.
    Paused,
    /// Finished.
    Done,
    /// Kept for the record; left out of listings unless asked for.
    Archived,
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started (the status of a new task).
    Todo,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
    /// Cannot go on until something else happens.
    Blocked,
}

/// How urgent a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Some day.
    Low,
    /// The default.
    Medium,
    /// First.
    High,
}

// The names the variants are stored and shown as, and parsed back from.

names!(ProjectStatus { Active => "active", Paused => "paused", Done => "done", Archived => "archived" });
names!(TaskStatus { Todo => "todo", InProgress => "in_progress", Done => "done", Blocked => "blocked" });
names!(Priority { Low => "low", Medium => "medium", High => "high" });

/// A stored status or priority this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value `{0}`")]
pub struct UnknownName(pub String);

/// A project to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewProject {
    /// Its name (unique, case ignored).
    pub name: String,
    /// What it is about.
    pub description: String,
}

/// Changes to a project: `None` keeps a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectUpdate {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new status.
    pub status: Option<ProjectStatus>,
    /// A progress note, recorded in the activity log.
    pub note: Option<String>,
}

/// A stored project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// The id.
    pub id: i64,
    /// The name.
    pub name: String,
    /// What it is about.
    pub description: String,
    /// Where it stands.
    pub status: ProjectStatus,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created: i64,
    /// When it or one of its tasks last changed, in milliseconds since the
    /// Unix epoch.
    pub updated: i64,
}

/// A project with its task counts, for listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectSummary {
    /// The project.
    pub project: Project,
    /// Tasks not done yet (todo, in progress, blocked).
    pub open_tasks: u64,
    /// Tasks done.
    pub done_tasks: u64,
}

/// A task to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTask {
    /// The project's id.
    pub project_id: i64,
    /// What to do, in a line.
    pub title: String,
    /// More detail.
    pub description: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// How urgent it is.
    pub priority: Priority,
}

/// Changes to a task: `None` keeps a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskUpdate {
    /// A new title.
    pub title: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new status.
    pub status: Option<TaskStatus>,
    /// A new priority.
    pub priority: Option<Priority>,
    /// A progress note, recorded in the activity log.
    pub note: Option<String>,
}

/// A stored task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// The id.
    pub id: i64,
    /// The project's id.
    pub project_id: i64,
    /// The project's name.
    pub project: String,
    /// What to do.
    pub title: String,
    /// More detail.
    pub description: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// How urgent it is.
    pub priority: Priority,
    /// When it was added, in milliseconds since the Unix epoch.
    pub created: i64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub updated: i64,
}

/// Which tasks [`TaskStore::list_tasks`] returns: every condition given
/// must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFilter {
    /// Only this project's tasks.
    pub project_id: Option<i64>,
    /// Only tasks with one of these statuses (empty: any).
    pub statuses: Vec<TaskStatus>,
    /// At most this many (0: no limit).
    pub limit: usize,
}

/// One entry of a project's activity log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// The entry's id: the order of recording.
    pub id: i64,
    /// The project.
    pub project_id: i64,
    /// The task it is about, if any (the id stays after the task is
    /// deleted).
    pub task_id: Option<i64>,
    /// When, in milliseconds since the Unix epoch.
    pub at: i64,
    /// What happened: `project_created`, `project_updated`, `task_added`,
    /// `task_updated`, `task_deleted` or `note`.
    pub action: String,
    /// The change, in words (`status todo → done`).
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for status in [
            TaskStatus::Todo,
            TaskStatus::InProgress,
            TaskStatus::Done,
            TaskStatus::Blocked,
        ] {
            assert_eq!(status.as_str().parse::<TaskStatus>(), Ok(status));
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
        for status in [
            ProjectStatus::Active,
            ProjectStatus::Paused,
            ProjectStatus::Done,
            ProjectStatus::Archived,
        ] {
            assert_eq!(status.as_str().parse::<ProjectStatus>(), Ok(status));
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
        for p in [Priority::Low, Priority::Medium, Priority::High] {
            assert_eq!(p.as_str().parse::<Priority>(), Ok(p));
        }
        assert_eq!(
            "urgent".parse::<Priority>(),
            Err(UnknownName("urgent".into()))
        );
    }
}
