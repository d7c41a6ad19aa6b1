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
//! None declares [`Effects`]: they touch nothing but the store.
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

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};
use toolgate_store::{
    NewProject, NewTask, Priority, Project, ProjectKey, ProjectStatus, ProjectUpdate, Task,
    TaskFilter, TaskStatus, TaskStore, TaskUpdate,
};

use crate::notes::{format_time, preview, store_failure};

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

// ---------------------------------------------------------- create_project

/// Arguments of `create_project`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateProjectArgs {
    /// A short unique name, e.g. `Kitchen renovation`.
    pub name: String,
    /// What the project is about.
    pub description: Option<String>,
}

/// `create_project`: a new project, status active.
#[derive(Debug, Clone)]
pub struct CreateProject(Tasks);

#[async_trait]
impl TypedTool for CreateProject {
    type Args = CreateProjectArgs;
    const NAME: &'static str = "create_project";
    const DESCRIPTION: &'static str = "Create a project to track tasks in. Give a short unique \
        `name` and optionally a `description`. Then add tasks with `add_task`.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(CreateProjectArgs, writes(false));

    async fn run(&self, args: CreateProjectArgs, _ctx: &ToolContext) -> ToolResult {
        let name = match self.0.title("project name", &args.name) {
            Ok(name) => name,
            Err(failure) => return failure,
        };
        let description = match self.0.text("description", args.description) {
            Ok(text) => text.unwrap_or_default(),
            Err(failure) => return failure,
        };
        let new = NewProject {
            name: name.clone(),
            description,
        };
        match self.0.store.create_project(&new).await {
            Ok(Some(project)) => ToolResult::success(format!(
                "Created project #{} \"{}\".",
                project.id, project.name
            ))
            .with_metadata("project", project_json(&project)),
            Ok(None) => ToolResult::failure(format!(
                "a project named \"{name}\" already exists; add tasks to it or pick another name"
            )),
            Err(error) => store_failure(&error),
        }
    }
}

// ----------------------------------------------------------- list_projects

/// Arguments of `list_projects`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListProjectsArgs {
    /// Also show archived projects.
    #[serde(default)]
    pub include_archived: bool,
}

/// `list_projects`: every project with its status and task counts.
#[derive(Debug, Clone)]
pub struct ListProjects(Tasks);

#[async_trait]
impl TypedTool for ListProjects {
    type Args = ListProjectsArgs;
    const NAME: &'static str = "list_projects";
    const DESCRIPTION: &'static str = "List projects, most recently active first, with their \
        status and how many tasks are open and done. Archived ones only with `include_archived`.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(ListProjectsArgs, reads());

    async fn run(&self, args: ListProjectsArgs, _ctx: &ToolContext) -> ToolResult {
        let projects = match self.0.store.list_projects(args.include_archived).await {
            Ok(projects) => projects,
            Err(error) => return store_failure(&error),
        };
        if projects.is_empty() {
            return ToolResult::success(
                "No projects yet. Create one with `create_project`.".to_owned(),
            )
            .with_metadata("projects", json!([]));
        }
        let mut out = format!("{} project(s):", projects.len());
        for p in &projects {
            let _ = write!(
                out,
                "\n#{} {} [{}] — {} open, {} done",
                p.project.id, p.project.name, p.project.status, p.open_tasks, p.done_tasks
            );
            let about = preview(&p.project.description, 80);
            if !about.is_empty() {
                let _ = write!(out, " — {about}");
            }
        }
        ToolResult::success(out).with_metadata(
            "projects",
            projects
                .iter()
                .map(|p| project_json(&p.project))
                .collect::<Vec<_>>(),
        )
    }
}

// ---------------------------------------------------------- update_project

/// Arguments of `update_project`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateProjectArgs {
    /// The project's name or id.
    pub project: ProjectRef,
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new status: active, paused, done or archived.
    pub status: Option<ProjectStatusArg>,
    /// A progress note for the activity log.
    pub note: Option<String>,
}

/// `update_project`: renames a project, changes its description or status,
/// or logs a note.
#[derive(Debug, Clone)]
pub struct UpdateProject(Tasks);

#[async_trait]
impl TypedTool for UpdateProject {
    type Args = UpdateProjectArgs;
    const NAME: &'static str = "update_project";
    const DESCRIPTION: &'static str = "Change a project (by name or id): `status` (active, paused, \
        done, archived), `name`, `description`, and/or log a progress `note`.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(UpdateProjectArgs, writes(false));

    async fn run(&self, args: UpdateProjectArgs, _ctx: &ToolContext) -> ToolResult {
        if args.name.is_none()
            && args.description.is_none()
            && args.status.is_none()
            && args.note.is_none()
        {
            return ToolResult::failure(
                "nothing to change: give `status`, `name`, `description` or `note`".to_owned(),
            );
        }
        let checked = (|| {
            let name = args
                .name
                .as_deref()
                .map(|n| self.0.title("project name", n))
                .transpose()?;
            let description = self.0.text("description", args.description.clone())?;
            let note = self.0.text("note", args.note.clone())?;
            Ok::<_, ToolResult>((name, description, note))
        })();
        let (name, description, note) = match checked {
            Ok(checked) => checked,
            Err(failure) => return failure,
        };
        let project = match self.0.find(&args.project).await {
            Ok(project) => project,
            Err(failure) => return failure,
        };
        let update = ProjectUpdate {
            name: name.clone(),
            description,
            status: args.status.map(Into::into),
            note,
        };
        match self.0.store.update_project(project.id, &update).await {
            Ok(Some(updated)) => ToolResult::success(format!(
                "Project #{} \"{}\" is {}.",
                updated.id, updated.name, updated.status
            ))
            .with_metadata("project", project_json(&updated)),
            Ok(None) => match name {
                Some(name) => {
                    ToolResult::failure(format!("another project is already named \"{name}\""))
                }
                None => no_project(&project.name),
            },
            Err(error) => store_failure(&error),
        }
    }
}

// ---------------------------------------------------------------- add_task

/// Arguments of `add_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddTaskArgs {
    /// The project's name or id.
    pub project: ProjectRef,
    /// What to do, in one line, e.g. `Order the tiles`.
    pub title: String,
    /// More detail.
    pub description: Option<String>,
    /// low, medium (default) or high.
    pub priority: Option<PriorityArg>,
    /// `todo` (default), `in_progress`, `done` or `blocked`.
    pub status: Option<TaskStatusArg>,
}

/// `add_task`: a new task in a project.
#[derive(Debug, Clone)]
pub struct AddTask(Tasks);

#[async_trait]
impl TypedTool for AddTask {
    type Args = AddTaskArgs;
    const NAME: &'static str = "add_task";
    const DESCRIPTION: &'static str = "Add a task to a project (by name or id). `title` is one \
        line; optional `priority` low/medium/high (default medium) and `status` \
        todo/in_progress/done/blocked (default todo). Returns the task id.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(AddTaskArgs, writes(false));

    async fn run(&self, args: AddTaskArgs, _ctx: &ToolContext) -> ToolResult {
        let title = match self.0.title("task title", &args.title) {
            Ok(title) => title,
            Err(failure) => return failure,
        };
        let description = match self.0.text("description", args.description) {
            Ok(text) => text.unwrap_or_default(),
            Err(failure) => return failure,
        };
        let project = match self.0.find(&args.project).await {
            Ok(project) => project,
            Err(failure) => return failure,
        };
        let new = NewTask {
            project_id: project.id,
            title,
            description,
            status: args.status.map_or(TaskStatus::Todo, Into::into),
            priority: args.priority.map_or(Priority::Medium, Into::into),
        };
        match self.0.store.add_task(&new).await {
            Ok(Some(task)) => ToolResult::success(format!("Added task {}.", task_line(&task)))
                .with_metadata("task", task_json(&task)),
            Ok(None) => no_project(&project.name),
            Err(error) => store_failure(&error),
        }
    }
}

// -------------------------------------------------------------- list_tasks

/// Which tasks `list_tasks` shows.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskListFilter {
    /// Not done: todo, in progress and blocked (the default).
    #[default]
    Open,
    /// Every task.
    All,
    /// Only todo.
    Todo,
    /// Only in progress.
    InProgress,
    /// Only done.
    Done,
    /// Only blocked.
    Blocked,
}

impl TaskListFilter {
    fn statuses(self) -> Vec<TaskStatus> {
        match self {
            Self::Open => vec![
                TaskStatus::Todo,
                TaskStatus::InProgress,
                TaskStatus::Blocked,
            ],
            Self::All => Vec::new(),
            Self::Todo => vec![TaskStatus::Todo],
            Self::InProgress => vec![TaskStatus::InProgress],
            Self::Done => vec![TaskStatus::Done],
            Self::Blocked => vec![TaskStatus::Blocked],
        }
    }
}

/// Arguments of `list_tasks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasksArgs {
    /// Only this project's tasks (name or id); all projects when left out.
    pub project: Option<ProjectRef>,
    /// `open` (default: not done), `all`, `todo`, `in_progress`, `done` or `blocked`.
    #[serde(default)]
    pub status: TaskListFilter,
}

/// `list_tasks`: tasks, in progress first, then by priority.
#[derive(Debug, Clone)]
pub struct ListTasks(Tasks);

#[async_trait]
impl TypedTool for ListTasks {
    type Args = ListTasksArgs;
    const NAME: &'static str = "list_tasks";
    const DESCRIPTION: &'static str = "List tasks with id, status, priority and project: in \
        progress first, then by priority. Optional `project` (name or id) and `status` \
        (open = not done (default), all, todo, in_progress, done, blocked).";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(ListTasksArgs, reads());

    async fn run(&self, args: ListTasksArgs, _ctx: &ToolContext) -> ToolResult {
        let project = match &args.project {
            Some(asked) => match self.0.find(asked).await {
                Ok(project) => Some(project),
                Err(failure) => return failure,
            },
            None => None,
        };
        let filter = TaskFilter {
            project_id: project.as_ref().map(|p| p.id),
            statuses: args.status.statuses(),
            limit: self.0.config.list_limit.max(1) + 1,
        };
        let mut tasks = match self.0.store.list_tasks(&filter).await {
            Ok(tasks) => tasks,
            Err(error) => return store_failure(&error),
        };
        let more = tasks.len() > self.0.config.list_limit.max(1);
        tasks.truncate(self.0.config.list_limit.max(1));
        let scope = project
            .as_ref()
            .map_or_else(String::new, |p| format!(" in project \"{}\"", p.name));
        if tasks.is_empty() {
            return ToolResult::success(format!("No tasks{scope} match."))
                .with_metadata("tasks", json!([]));
        }
        let mut out = format!("{} task(s){scope}:", tasks.len());
        for task in &tasks {
            out.push('\n');
            out.push_str(&task_line(task));
        }
        if more {
            let _ = write!(
                out,
                "\n(only the first {} are shown: narrow with `project` or `status`)",
                tasks.len()
            );
        }
        ToolResult::success(out)
            .with_metadata("tasks", tasks.iter().map(task_json).collect::<Vec<_>>())
    }
}

// ------------------------------------------------------------- update_task

/// Arguments of `update_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTaskArgs {
    /// The task's id.
    pub id: i64,
    /// `todo`, `in_progress`, `done` or `blocked`.
    pub status: Option<TaskStatusArg>,
    /// low, medium or high.
    pub priority: Option<PriorityArg>,
    /// A new title.
    pub title: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// What happened, for the project's activity log, e.g. `waiting for the quote`.
    pub note: Option<String>,
}

/// `update_task`: changes a task's status, priority, title or description,
/// or logs a note about it.
#[derive(Debug, Clone)]
pub struct UpdateTask(Tasks);

#[async_trait]
impl TypedTool for UpdateTask {
    type Args = UpdateTaskArgs;
    const NAME: &'static str = "update_task";
    const DESCRIPTION: &'static str = "Change a task by id: `status` (todo, in_progress, done, \
        blocked), `priority` (low, medium, high), `title`, `description`, and/or a `note` saying \
        what happened. Every change goes into the project's activity log.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(UpdateTaskArgs, writes(false));

    async fn run(&self, args: UpdateTaskArgs, _ctx: &ToolContext) -> ToolResult {
        if args.status.is_none()
            && args.priority.is_none()
            && args.title.is_none()
            && args.description.is_none()
            && args.note.is_none()
        {
            return ToolResult::failure(
                "nothing to change: give `status`, `priority`, `title`, `description` or `note`"
                    .to_owned(),
            );
        }
        let checked = (|| {
            let title = args
                .title
                .as_deref()
                .map(|t| self.0.title("task title", t))
                .transpose()?;
            let description = self.0.text("description", args.description.clone())?;
            let note = self.0.text("note", args.note.clone())?;
            Ok::<_, ToolResult>((title, description, note))
        })();
        let (title, description, note) = match checked {
            Ok(checked) => checked,
            Err(failure) => return failure,
        };
        let update = TaskUpdate {
            title,
            description,
            status: args.status.map(Into::into),
            priority: args.priority.map(Into::into),
            note,
        };
        match self.0.store.update_task(args.id, &update).await {
            Ok(Some(task)) => ToolResult::success(format!("Updated task {}.", task_line(&task)))
                .with_metadata("task", task_json(&task)),
            Ok(None) => no_task(args.id),
            Err(error) => store_failure(&error),
        }
    }
}

// ------------------------------------------------------------- delete_task

/// Arguments of `delete_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteTaskArgs {
    /// The task's id.
    pub id: i64,
}

/// `delete_task`: removes a task (sensitive: see the [module docs](self));
/// the activity log keeps a record of it.
#[derive(Debug, Clone)]
pub struct DeleteTask(Tasks);

#[async_trait]
impl TypedTool for DeleteTask {
    type Args = DeleteTaskArgs;
    const NAME: &'static str = "delete_task";
    const DESCRIPTION: &'static str = "Delete a task by id, only when the user asks for it \
        (to finish a task, set its status to done with `update_task` instead).";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    store_only!(DeleteTaskArgs, writes(true));

    async fn run(&self, args: DeleteTaskArgs, _ctx: &ToolContext) -> ToolResult {
        match self.0.store.delete_task(args.id).await {
            Ok(Some(task)) => ToolResult::success(format!("Deleted task {}.", task_line(&task)))
                .with_metadata("task", task_json(&task)),
            Ok(None) => no_task(args.id),
            Err(error) => store_failure(&error),
        }
    }
}

// -------------------------------------------------------- project_activity

/// Arguments of `project_activity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectActivityArgs {
    /// The project's name or id.
    pub project: ProjectRef,
    /// How many entries to show, newest first (default 30).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// `project_activity`: the project's log of changes and notes.
#[derive(Debug, Clone)]
pub struct ProjectActivity(Tasks);

#[async_trait]
impl TypedTool for ProjectActivity {
    type Args = ProjectActivityArgs;
    const NAME: &'static str = "project_activity";
    const DESCRIPTION: &'static str = "Show a project's activity log (by name or id), newest \
        first: every task added, changed or deleted and every note, with its time (UTC).";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    store_only!(ProjectActivityArgs, reads());

    async fn run(&self, args: ProjectActivityArgs, _ctx: &ToolContext) -> ToolResult {
        let project = match self.0.find(&args.project).await {
            Ok(project) => project,
            Err(failure) => return failure,
        };
        let most = self.0.config.activity_limit.max(1);
        let limit = args.limit.unwrap_or(most).clamp(1, most);
        let entries = match self.0.store.activity(project.id, limit).await {
            Ok(entries) => entries,
            Err(error) => return store_failure(&error),
        };
        let mut out = format!(
            "Activity of project #{} \"{}\" (newest first):",
            project.id, project.name
        );
        for entry in &entries {
            let _ = write!(
                out,
                "\n{}  {}  {}",
                format_time(entry.at),
                entry.action,
                entry.detail
            );
        }
        ToolResult::success(out).with_metadata(
            "activity",
            entries
                .iter()
                .map(|e| json!({"at": e.at, "action": e.action, "task_id": e.task_id, "detail": e.detail}))
                .collect::<Vec<_>>(),
        )
    }
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
