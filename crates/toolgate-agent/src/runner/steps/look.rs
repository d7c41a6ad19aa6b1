//! Looking first, for the model: in the small profile, the files a task
//! names are read through the gate before the first step, and the
//! conversation starts with those reads as calls of the run.
//!
//! # Rules
//!
//! 1. Only in the small profile with the task checks on, and only the
//!    first [`MAX_LOOKS`] files the task names (rule 1 of `checks`).
//! 2. The reader is the agent's offered tool that is read-only and says it
//!    reads files (`ToolAnnotations::reads_files`), and declares for
//!    `{"path": FILE}` exactly one read of that file: no tool is named
//!    here.
//! 3. Each read goes through the gate like a model's call (policy, hooks,
//!    audit), is recorded as a call of step 1 with the id `look_N`, and
//!    joins the conversation as an assistant call and its result, cut like
//!    every result of the profile. A read the gate refuses or that fails
//!    is recorded too, and the model sees its error. The last result ends
//!    with the next move, as the model's own calls' results do.
//!
//! A small model told to read a file first often answers, runs something
//! else, or writes the file from nothing; the read it needs costs a whole
//! step of prompt processing when it does make it. Made by the runtime, it
//! is certain and costs no model call.

use serde_json::json;
use toolgate_core::{Effect, Registry};

use super::progress::next_move;
use super::{AgentRunner, Progress};
use crate::llm::{Message, ModelToolCall, Role};

/// The most files read before the first step (rule 1).
pub(super) const MAX_LOOKS: usize = 3;

impl AgentRunner {
    /// Reads the files the task names for the model (see the rules).
    pub(super) async fn look_first(&self, p: &mut Progress<'_>) {
        if !self.agent.is_small() || !self.agent.task_checks {
            return;
        }
        let registry = self.engine.registry().clone();
        let files: Vec<String> = p.checks.files.iter().take(MAX_LOOKS).cloned().collect();
        let before = p.messages.len();
        for (n, file) in files.iter().enumerate() {
            let arguments = json!({ "path": file });
            let Some(reader) = Self::reader(&registry, &p.offer.names, &arguments, file) else {
                break;
            };
            let id = format!("look_{n}");
            let (_, _, text) = self
                .own_call(1, id.clone(), &reader, arguments.clone(), p.report)
                .await;
            let mut asked = Message::text(Role::Assistant, String::new());
            asked.tool_calls.push(ModelToolCall {
                id: id.clone(),
                name: reader,
                arguments: arguments.to_string(),
            });
            p.messages.push(asked);
            p.messages.push(Message::tool_result(id, text));
        }
        next_move(p, before);
    }

    /// The offered tool that reads `file` and nothing else (rule 2).
    fn reader(
        registry: &Registry,
        offered: &[String],
        arguments: &serde_json::Value,
        file: &str,
    ) -> Option<String> {
        offered.iter().find_map(|name| {
            let tool = registry.get(name).ok()?;
            let annotations = &tool.spec().annotations;
            if !(annotations.read_only() && annotations.reads_files) {
                return None;
            }
            let effects = tool.tool().effects(arguments).ok()?;
            let reads_it = matches!(effects.list(), [Effect::Read { path, tree: false }]
                if path.strip_prefix("./").unwrap_or(path) == file);
            reads_it.then(|| name.clone())
        })
    }
}
