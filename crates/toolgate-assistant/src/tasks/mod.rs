//! The `tasks` group: seed 003's project tools — projects, their tasks with
//! a status and a priority, and an activity log of every change.
//!
//! | tool | does |
//! |---|---|
//! | `create_project`, `list_projects`, `update_project` | projects |
//! | `add_task`, `list_tasks`, `update_task`, `delete_task` | tasks |
//! | `project_activity` | a project's log, newest first |
//!
//! The session's plan (`update_plan`) is a coding tool of its own
//! (`toolgate-tools`' `plan` module); [`TasksConfig::plan`] and
//! [`TasksConfig::max_plan_steps`] still say whether the host offers it
//! beside these tools, as they did when it lived here.
//!
//! # Sensitivity
//!
//! As for notes (see [`notes`](crate::notes)): projects and tasks live in
//! toolgate's own store, not in the user's workspace, so adding and
//! changing them does not ask (`ReadOnly`) — every change is also in the
//! project's activity log, so none is lost without a trace. `delete_task`
//! is `Sensitive`: it removes what the user asked to track. The MCP
//! annotations say which tools write (`readOnlyHint: false`).
//!
//! None declares [`Effects`](toolgate_core::Effects): they touch nothing but the store.
//!
//! # Rules
//!
//! 1. A project is named by its name (case ignored) or its id (`3` or
//!    `#3`); the name wins when both could match.
//! 2. Titles are one line of at most `max_title_chars` characters; names,
//!    descriptions and notes are bounded too. Longer input is refused, not
//!    cut.
//! 3. Every change to a project or task is recorded in the project's
//!    activity log with its time, by the store, in the same transaction
//!    ([`TaskStore`]'s rules).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{Sensitivity, Tool, ToolAnnotations, ToolResult};
use toolgate_store::{Priority, Project, ProjectKey, ProjectStatus, Task, TaskStatus, TaskStore};

use crate::notes::store_failure;

pub use items::{
    AddTask, AddTaskArgs, DeleteTask, DeleteTaskArgs, ListTasks, ListTasksArgs, TaskListFilter,
    UpdateTask, UpdateTaskArgs,
};
pub use projects::{
    CreateProject, CreateProjectArgs, ListProjects, ListProjectsArgs, ProjectActivity,
    ProjectActivityArgs, UpdateProject, UpdateProjectArgs,
};

/// The system-prompt block for the `tasks` group.
pub const INSTRUCTIONS: &str = "## Projects and tasks
- Track the user's projects with `create_project`, `add_task`, `update_task` and `list_tasks`; `list_projects` shows them all, `update_project` changes a project's status (active, paused, done, archived).
- Task status: todo, in_progress, done or blocked. Priority: low, medium or high.
- When work on a task moves on, call `update_task` with the new status and a short `note` saying what happened.
- `project_activity` shows what changed and when.
- Only call `delete_task` when the user asks to delete a task; a finished task is marked done instead.
";

/// The `tools.tasks` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TasksConfig {
    /// Whether the group is registered. Default: false (an assistant
    /// feature: nine more tools in every prompt).
    pub enabled: bool,
    /// Whether the host offers `update_plan` (`toolgate-tools`' plan
    /// module) with the group. Default: true.
    pub plan: bool,
    /// The longest task title or project name, in characters. Default: 200.
    pub max_title_chars: usize,
    /// The longest description or note, in characters. Default: 4,000.
    pub max_text_chars: usize,
    /// The most steps a plan of that `update_plan` may have. Default: 30.
    pub max_plan_steps: usize,
    /// The most tasks `list_tasks` shows. Default: 100.
    pub list_limit: usize,
    /// How many activity entries `project_activity` shows when the call
    /// does not say, and the most it shows. Default: 30.
    pub activity_limit: usize,
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            plan: true,
            max_title_chars: 200,
            max_text_chars: 4_000,
            max_plan_steps: 30,
            list_limit: 100,
            activity_limit: 30,
        }
    }
}

/// The tools of the `tasks` group over `store`, which keeps the projects
/// (a [`SqliteStore`](toolgate_store::SqliteStore) does). Empty when the
/// group is disabled.
pub fn tools(config: &TasksConfig, store: Arc<dyn TaskStore>) -> Vec<Arc<dyn Tool>> {
    if !config.enabled {
        return Vec::new();
    }
    let ctx = Tasks {
        store,
        config: config.clone(),
    };
    vec![
        Arc::new(CreateProject(ctx.clone())),
        Arc::new(ListProjects(ctx.clone())),
        Arc::new(UpdateProject(ctx.clone())),
        Arc::new(AddTask(ctx.clone())),
        Arc::new(ListTasks(ctx.clone())),
        Arc::new(UpdateTask(ctx.clone())),
        Arc::new(DeleteTask(ctx.clone())),
        Arc::new(ProjectActivity(ctx)),
    ]
}

/// What every project tool holds.
#[derive(Clone)]
struct Tasks {
    store: Arc<dyn TaskStore>,
    config: TasksConfig,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Tasks {
    /// A one-line title or name (rule 2).
    fn title(&self, what: &str, text: &str) -> Result<String, ToolResult> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ToolResult::failure(format!("the {what} is empty")));
        }
        if text.contains('\n') {
            return Err(ToolResult::failure(format!(
                "the {what} must be one line; put details in the description"
            )));
        }
        let chars = text.chars().count();
        if chars > self.config.max_title_chars {
            return Err(ToolResult::failure(format!(
                "the {what} is {chars} characters; at most {} are allowed",
                self.config.max_title_chars
            )));
        }
        Ok(text.to_owned())
    }

    /// A description or note (rule 2).
    fn text(&self, what: &str, text: Option<String>) -> Result<Option<String>, ToolResult> {
        let Some(text) = text else { return Ok(None) };
        let chars = text.chars().count();
        if chars > self.config.max_text_chars {
            return Err(ToolResult::failure(format!(
                "the {what} is {chars} characters; at most {} are allowed",
                self.config.max_text_chars
            )));
        }
        Ok(Some(text.trim().to_owned()))
    }

    /// Finds a project by name or id (rule 1).
    async fn find(&self, project: &ProjectRef) -> Result<Project, ToolResult> {
        let name = match project {
            ProjectRef::Id(id) => return self.by_id(*id, &id.to_string()).await,
            ProjectRef::Name(name) => name.trim(),
        };
        match self.store.project(&ProjectKey::Name(name.to_owned())).await {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            Err(error) => return Err(store_failure(&error)),
        }
        match name.trim_start_matches('#').parse::<i64>() {
            Ok(id) => self.by_id(id, name).await,
            Err(_) => Err(no_project(name)),
        }
    }

    async fn by_id(&self, id: i64, asked: &str) -> Result<Project, ToolResult> {
        match self.store.project(&ProjectKey::Id(id)).await {
            Ok(Some(project)) => Ok(project),
            Ok(None) => Err(no_project(asked)),
            Err(error) => Err(store_failure(&error)),
        }
    }
}

fn no_project(asked: &str) -> ToolResult {
    ToolResult::failure(format!(
        "there is no project `{asked}`; see them with `list_projects` or create it with `create_project`"
    ))
}

fn no_task(id: i64) -> ToolResult {
    ToolResult::failure(format!(
        "there is no task #{id}; see the tasks with `list_tasks`"
    ))
}

/// A project, as a call names it: its name, or its id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ProjectRef {
    /// The id.
    Id(i64),
    /// The name (case ignored), or `#id`.
    Name(String),
}

/// A task's status, as a call gives it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatusArg {
    /// Not started.
    Todo,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
    /// Waiting on something else.
    Blocked,
}

impl From<TaskStatusArg> for TaskStatus {
    fn from(status: TaskStatusArg) -> Self {
        match status {
            TaskStatusArg::Todo => Self::Todo,
            TaskStatusArg::InProgress => Self::InProgress,
            TaskStatusArg::Done => Self::Done,
            TaskStatusArg::Blocked => Self::Blocked,
        }
    }
}

/// A task's priority, as a call gives it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriorityArg {
    /// Some day.
    Low,
    /// The default.
    Medium,
    /// First.
    High,
}

impl From<PriorityArg> for Priority {
    fn from(priority: PriorityArg) -> Self {
        match priority {
            PriorityArg::Low => Self::Low,
            PriorityArg::Medium => Self::Medium,
            PriorityArg::High => Self::High,
        }
    }
}

/// A project's status, as a call gives it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProjectStatusArg {
    /// Being worked on.
    Active,
    /// Put aside.
    Paused,
    /// Finished.
    Done,
    /// Hidden from `list_projects` unless asked for.
    Archived,
}

impl From<ProjectStatusArg> for ProjectStatus {
    fn from(status: ProjectStatusArg) -> Self {
        match status {
            ProjectStatusArg::Active => Self::Active,
            ProjectStatusArg::Paused => Self::Paused,
            ProjectStatusArg::Done => Self::Done,
            ProjectStatusArg::Archived => Self::Archived,
        }
    }
}

fn project_json(p: &Project) -> serde_json::Value {
    json!({"id": p.id, "name": p.name, "status": p.status.as_str(), "updated": p.updated})
}

fn task_json(t: &Task) -> serde_json::Value {
    json!({"id": t.id, "project_id": t.project_id, "title": t.title,
           "status": t.status.as_str(), "priority": t.priority.as_str(), "updated": t.updated})
}

fn task_line(t: &Task) -> String {
    format!(
        "#{} [{}] ({}) {} — project \"{}\"",
        t.id, t.status, t.priority, t.title, t.project
    )
}

/// Annotations of a tool that changes the store.
fn writes(destructive: bool) -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: Some(false),
        destructive_hint: Some(destructive),
        idempotent_hint: Some(false),
        open_world_hint: Some(false),
        ..ToolAnnotations::default()
    }
}

/// Annotations of a tool that only reads the store.
fn reads() -> ToolAnnotations {
    ToolAnnotations {
        idempotent_hint: Some(true),
        ..ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly)
    }
}

/// Implements the parts every tool of the group shares: no effects and
/// the annotations.
macro_rules! store_only {
    ($args:ty, $annotations:expr) => {
        fn annotations(&self) -> ToolAnnotations {
            $annotations
        }

        /// None: it touches toolgate's own store only.
        fn effects(&self, _args: &$args) -> Result<Effects, EffectsError> {
            Ok(Effects::none())
        }
    };
}

/// The `tasks` group, `tools.tasks` (off by default). Part: `Arc<dyn TaskStore>`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TasksGroup;

impl toolgate_core::Group for TasksGroup {
    fn name(&self) -> &'static str {
        "tasks"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("tasks")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &[
            "create_project",
            "list_projects",
            "update_project",
            "add_task",
            "list_tasks",
            "update_task",
            "delete_task",
            "project_activity",
        ]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<TasksConfig>()?;
        let tools = if section.enabled {
            tools(section, ctx.part::<Arc<dyn TaskStore>>()?)
        } else {
            Vec::new()
        };
        Ok(toolgate_core::ToolGroup::new("tasks", INSTRUCTIONS, tools))
    }
}

// After `store_only!`: the tools' modules use it.
mod items;
mod projects;
