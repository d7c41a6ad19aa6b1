//! The project tools of the `tasks` group: `create_project`,
//! `list_projects`, `update_project`, `project_activity`.

use std::fmt::Write as _;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};
use toolgate_store::{NewProject, ProjectUpdate};

use super::{ProjectRef, ProjectStatusArg, Tasks, no_project, project_json, reads, writes};
use crate::notes::{format_time, preview, store_failure};

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
pub struct CreateProject(pub(super) Tasks);

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
pub struct ListProjects(pub(super) Tasks);

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
pub struct UpdateProject(pub(super) Tasks);

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
pub struct ProjectActivity(pub(super) Tasks);

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
