//! The tool calls of one step: through the gate, then into the
//! conversation and the report.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_core::{Effects, ToolCall};
use toolgate_engine::Decision;

use super::events::{AgentEvent, ToolCallRecord};
use super::report::RunReport;
use super::{AgentRunner, truncate_head_tail};
use crate::llm::{Message, ModelToolCall, Role};
use crate::recover::TextCall;

/// The name given to a recovered call that could not be read, so that its
/// tool error reaches the model in proper tool-call form.
pub(super) const UNREADABLE_CALL: &str = "unreadable_tool_call";

/// A call found in the model's text, as a structured call.
pub(super) fn text_call(step: u32, n: usize, call: TextCall) -> ModelToolCall {
    let id = format!("recovered_{step}_{n}");
    match call {
        TextCall::Call { name, arguments } => ModelToolCall {
            id,
            name,
            arguments,
        },
        TextCall::Malformed { reason } => ModelToolCall {
            id,
            name: UNREADABLE_CALL.to_owned(),
            arguments: json!({ "error": reason }).to_string(),
        },
    }
}

/// Identical calls in a row (same tool, same arguments), one per step: the
/// same call twice in one step is one call made twice at once, not a loop.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    last: Option<(String, String)>,
    /// The step the last call was made in.
    step: u32,
    /// How many steps in a row made the last call.
    pub(super) count: u32,
}

impl Repeats {
    /// Counts the call; from its second step in a row, the result the model
    /// sees starts by saying so.
    pub(super) fn note(&mut self, step: u32, name: &str, arguments: &str, text: String) -> String {
        // Compared on the parsed arguments, so spacing and key order do
        // not hide a repeat.
        let canonical = serde_json::from_str::<Value>(arguments)
            .map_or_else(|_| arguments.to_owned(), |v| v.to_string());
        let key = (name.to_owned(), canonical);
        if self.last.as_ref() != Some(&key) {
            self.last = Some(key);
            self.step = step;
            self.count = 1;
            return text;
        }
        if self.step != step {
            self.step = step;
            self.count += 1;
        }
        if self.count < 2 {
            return text;
        }
        format!(
            "[You already called `{name}` with these arguments {} times in a row, and the \
             result is the same as before. Do not call it again: use this result, call a \
             different tool, or give your answer.]\n{text}",
            self.count - 1
        )
    }
}

impl AgentRunner {
    /// The agent's tools as a call to an unknown tool lists them: names,
    /// then one line per tool with the first sentence of its description,
    /// so a small model can pick the right one next time.
    fn tool_menu(&self, registry: &toolgate_core::Registry) -> String {
        let names = self.agent.tool_names(registry);
        let mut menu = names.join(", ");
        menu.push_str(". Call one of them by its exact name:");
        for name in &names {
            let Ok(tool) = registry.get(name) else {
                continue;
            };
            let first = toolgate_core::first_sentence(&tool.spec().description);
            let _ = write!(menu, "\n- {name}: {first}");
        }
        menu
    }

    /// Runs the calls of one step; returns whether the person aborted.
    /// `recovered`: the calls were written as text and recovered.
    pub(super) async fn run_tools(
        &self,
        step: u32,
        calls: &[ModelToolCall],
        recovered: bool,
        messages: &mut Vec<Message>,
        report: &mut RunReport,
        repeats: &mut Repeats,
    ) -> bool {
        let registry = self.engine.registry().clone();
        // Pre-check every call: Err = the tool error the model will see.
        let prepared: Vec<Result<ToolCall, (String, String)>> = calls
            .iter()
            .map(|c| {
                if c.name == UNREADABLE_CALL {
                    let reason = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .and_then(|v| v["error"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    return Err((
                        "malformed_tool_call".to_owned(),
                        format!(
                            "your tool call could not be read: {reason}. Write one JSON object: \
                             {{\"name\": \"TOOL\", \"arguments\": {{...}}}}"
                        ),
                    ));
                }
                if !registry.has(&c.name) {
                    return Err((
                        "not_found".to_owned(),
                        format!(
                            "unknown tool `{}`; available tools: {}",
                            c.name,
                            self.tool_menu(&registry)
                        ),
                    ));
                }
                if !self.agent.allows(&registry, &c.name) {
                    return Err((
                        "not_allowed".to_owned(),
                        format!("tool `{}` is not available to agent `{}`", c.name, self.agent.name),
                    ));
                }
                let raw = if c.arguments.trim().is_empty() { "{}" } else { &c.arguments };
                match serde_json::from_str::<Value>(raw) {
                    Ok(v) if v.is_object() => Ok(ToolCall::new(c.id.clone(), c.name.clone(), v)),
                    Ok(_) => Err((
                        "malformed_arguments".to_owned(),
                        "the arguments must be a JSON object".to_owned(),
                    )),
                    Err(e) => Err((
                        "malformed_arguments".to_owned(),
                        format!("the arguments are not valid JSON ({e}); send a JSON object matching the tool's schema"),
                    )),
                }
            })
            .collect();
        let all_read_only = prepared.iter().all(|p| {
            p.as_ref().is_ok_and(|c| {
                registry
                    .get(&c.name)
                    .is_ok_and(|t| t.spec().annotations.read_only_hint == Some(true))
            })
        });
        let mut results: Vec<Option<toolgate_engine::Execution>> = Vec::new();
        if all_read_only {
            let futs = prepared.iter().filter_map(|p| p.as_ref().ok()).map(|c| {
                let engine = self.engine.clone();
                let c = c.clone();
                async move { engine.execute(c).await }
            });
            results = futures_util::future::join_all(futs)
                .await
                .into_iter()
                .map(Some)
                .collect();
        } else {
            for p in &prepared {
                match p {
                    Ok(c) => {
                        let ex = self.engine.execute(c.clone()).await;
                        let aborted = ex.is_aborted();
                        results.push(Some(ex));
                        if aborted {
                            break;
                        }
                    }
                    Err(_) => results.push(None),
                }
            }
        }
        let mut results = results.into_iter();
        let mut aborted = false;
        let mut unreadable: Vec<String> = Vec::new();
        for (c, p) in calls.iter().zip(&prepared) {
            let (decision, success, text, ms, effects, approval) = match p {
                Err((d, msg)) => {
                    if !all_read_only {
                        results.next();
                    }
                    (
                        d.clone(),
                        false,
                        format!("error: {msg}"),
                        0,
                        Effects::none(),
                        None,
                    )
                }
                Ok(_) => match results.next().flatten() {
                    Some(ex) => {
                        aborted |= ex.is_aborted();
                        if ex.result.success && ex.decision == Decision::Executed {
                            report
                                .files_changed
                                .extend(ex.effects.changed_paths().into_iter().map(str::to_owned));
                        }
                        (
                            ex.decision.as_str().to_owned(),
                            ex.result.success,
                            ex.result.to_model_text(),
                            u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX),
                            ex.effects.summary(),
                            ex.approval,
                        )
                    }
                    None => (
                        "aborted".to_owned(),
                        false,
                        "error: not run: the run was aborted".to_owned(),
                        0,
                        Effects::none(),
                        None,
                    ),
                },
            };
            let mut text = truncate_head_tail(&text, self.max_output_chars);
            if decision == "executed"
                && let Some(more) = self
                    .instructions
                    .as_ref()
                    .and_then(|i| i.on_tool_used(&c.name))
            {
                text.push_str("\n\n");
                text.push_str(&more);
            }
            let text = repeats.note(step, &c.name, &c.arguments, text);
            let record = ToolCallRecord {
                step,
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                decision,
                success,
                duration_ms: ms,
                output: text.clone(),
                effects,
                recovered,
                waited_ms: approval.as_ref().map_or(0, |a| {
                    u64::try_from(a.waited.as_millis()).unwrap_or(u64::MAX)
                }),
                approval: approval.and_then(|a| serde_json::to_value(a).ok()),
            };
            self.emit(&AgentEvent::ToolCall(record.clone()));
            report.tool_calls.push(record);
            if c.name == UNREADABLE_CALL {
                unreadable.push(text);
            } else {
                messages.push(Message::tool_result(c.id.clone(), text));
            }
        }
        if !unreadable.is_empty() {
            messages.push(Message::text(Role::User, unreadable.join("\n")));
        }
        aborted
    }
}
