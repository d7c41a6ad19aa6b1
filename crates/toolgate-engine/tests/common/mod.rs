//! A real workspace with the real built-in tools, behind a gate with the
//! real hooks and guardrails.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::{
    Execution, ExecutionEngine, GuardrailsConfig, GuardrailsEngine, HookExecutor, HooksConfig,
};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::CommandOptions;

pub(crate) struct Env {
    pub(crate) dir: TempDir,
    pub(crate) root: PathBuf,
    pub(crate) engine: ExecutionEngine,
    pub(crate) guardrails: Arc<GuardrailsEngine>,
}

impl Env {
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(crate) async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("t", tool, args)).await
    }

    /// Files modified and lines changed so far, as the guardrails count them.
    pub(crate) fn guardrails_usage(&self) -> (usize, usize) {
        self.guardrails.usage()
    }
}

/// A workspace in a fresh temp dir; `prepare` runs before the engine exists.
pub(crate) fn env(
    hooks_yaml: &str,
    guardrails_yaml: &str,
    dry_run: bool,
    prepare: impl FnOnce(&Path),
) -> Env {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let root = dir.path().join("ws").canonicalize().unwrap();
    prepare(&root);
    let hooks: HooksConfig = serde_yaml_ng::from_str(hooks_yaml).unwrap();
    let guardrails: GuardrailsConfig = serde_yaml_ng::from_str(guardrails_yaml).unwrap();
    let workspace = Workspace::builder(&root).build().unwrap();
    // Deleting allowed, so delete_file is offered and the guardrails have
    // something to refuse.
    let options = BuiltinOptions::default()
        .allow_delete(true)
        .commands(Some(CommandOptions::default()));
    let registry = Registry::new();
    for tool in toolgate_tools::builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    let hooks = Arc::new(
        HookExecutor::builder(hooks, &root)
            .session_id("s1")
            .build()
            .unwrap(),
    );
    let guardrails = Arc::new(
        GuardrailsEngine::builder(guardrails, &root)
            .build()
            .unwrap(),
    );
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .guardrails(Arc::clone(&guardrails) as Arc<dyn toolgate_engine::Guardrails>)
        .pre_hooks(hooks.clone())
        .post_hooks(hooks)
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .dry_run(dry_run)
        .build();
    Env {
        dir,
        root,
        engine,
        guardrails,
    }
}

/// Writes an executable script.
pub(crate) fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
