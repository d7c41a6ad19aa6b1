//! The `files` group: `read_file`, `write_file`, `list_files`,
//! `delete_file` (when deleting is allowed), `edit_file` and `apply_patch`
//! ([`fs`] and [`editing`]).

use std::sync::Arc;

use toolgate_core::{Group, GroupContext, GroupError, Tool, ToolGroup, TypedTool, Workspace};
use toolgate_sandbox::Sandbox;

use crate::{BuiltinOptions, editing, fs};

/// The `files` group. Parts: the [`Workspace`] and the [`BuiltinOptions`]
/// (`max_file_size`, `allow_delete`, the sandbox GNU `patch` runs in).
#[derive(Debug, Clone, Copy, Default)]
pub struct FilesGroup;

impl FilesGroup {
    /// The group's tools over `workspace`, as `options` say; GNU `patch`
    /// runs in `sandbox` (without one, `apply_patch` uses its own parser
    /// only).
    pub fn tools(
        workspace: &Workspace,
        options: &BuiltinOptions,
        sandbox: Option<&Sandbox>,
    ) -> Vec<Arc<dyn Tool>> {
        let mut apply_patch =
            editing::ApplyPatch::new(workspace.clone()).allow_delete(options.allow_delete);
        if let Some(sandbox) = sandbox {
            apply_patch = apply_patch.gnu_patch_in(sandbox.clone());
        }
        let mut files: Vec<Arc<dyn Tool>> = vec![
            Arc::new(fs::ReadFile::new(workspace.clone(), options.max_file_size)),
            Arc::new(fs::WriteFile::new(workspace.clone())),
            Arc::new(fs::ListFiles::new(workspace.clone())),
            Arc::new(editing::EditFile::new(workspace.clone())),
            Arc::new(apply_patch),
        ];
        // A tool that could only refuse is not offered: it costs every request
        // its schema and invites calls that fail.
        if options.allow_delete {
            files.push(Arc::new(fs::DeleteFile::new(workspace.clone(), true)));
        }
        files
    }
}

impl Group for FilesGroup {
    fn name(&self) -> &'static str {
        "files"
    }

    fn tool_names(&self) -> &'static [&'static str] {
        const NAMES: &[&str] = &[
            <fs::ReadFile as TypedTool>::NAME,
            <fs::WriteFile as TypedTool>::NAME,
            <fs::ListFiles as TypedTool>::NAME,
            <fs::DeleteFile as TypedTool>::NAME,
            <editing::EditFile as TypedTool>::NAME,
            <editing::ApplyPatch as TypedTool>::NAME,
        ];
        NAMES
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let workspace = ctx.part::<Workspace>()?;
        let options = ctx.part::<BuiltinOptions>()?;
        let sandbox = options.sandbox_for(&workspace);
        Ok(ToolGroup::new(
            self.name(),
            fs::INSTRUCTIONS,
            Self::tools(&workspace, &options, sandbox.as_ref()),
        ))
    }
}
