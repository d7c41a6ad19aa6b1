//! The task tools of the `tasks` group: `add_task`, `list_tasks`,
//! `update_task`, `delete_task`.

use std::fmt::Write as _;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};
use toolgate_store::{NewTask, Priority, TaskFilter, TaskStatus, TaskUpdate};

use super::{
    PriorityArg, ProjectRef, TaskStatusArg, Tasks, no_project, no_task, reads, task_json,
    task_line, writes,
};
use crate::notes::store_failure;

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
pub struct AddTask(pub(super) Tasks);

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
pub struct ListTasks(pub(super) Tasks);

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
pub struct UpdateTask(pub(super) Tasks);

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

/// `delete_task`: removes a task (sensitive: see the module docs of `tasks`);
/// the activity log keeps a record of it.
#[derive(Debug, Clone)]
pub struct DeleteTask(pub(super) Tasks);

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
