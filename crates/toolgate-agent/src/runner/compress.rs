//! Keeping the conversation inside the context window: old steps
//! summarised by the model, old tool outputs elided.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::json;

use super::events::AgentEvent;
use super::lifecycle::LifecycleEvent;
use super::report::RunReport;
use super::run::Journal;
use super::{AgentRunner, truncate_head_tail};
use crate::context::messages_bytes;
use crate::llm::{Message, Role};

impl AgentRunner {
    /// Keeps the conversation under the context threshold: first the model
    /// summarises the completed old steps (everything between the task and
    /// the latest step, never splitting a step from its tool results) into
    /// one message; if that is not possible or not enough, old tool outputs
    /// beyond the last four are elided.
    pub(super) async fn compress(
        &self,
        messages: &mut Vec<Message>,
        step: u32,
        report: &mut RunReport,
        journal: &mut Journal,
        tools_bytes: usize,
    ) {
        let size = |m: &[Message]| messages_bytes(m);
        let threshold = self.threshold(tools_bytes);
        let total = size(messages);
        if total <= threshold {
            return;
        }
        let mut summarised = 0;
        // The task is the first message after the system prompt; the latest
        // step starts at the last assistant message.
        let start = messages
            .iter()
            .position(|m| m.role != Role::System)
            .map_or(messages.len(), |i| i + 1);
        let end = messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .unwrap_or(0);
        if end > start
            && let Some(summary) = self
                .summarise_steps(&messages[start..end], step, report)
                .await
        {
            summarised = end - start;
            journal.clean_until = journal.clean_until.min(start);
            messages.splice(
                start..end,
                [Message::text(
                    Role::User,
                    format!("[Summary of the earlier steps of this run]\n{summary}"),
                )],
            );
        }
        let mut elided = 0;
        if size(messages) > threshold {
            let tool_idx: Vec<usize> = messages
                .iter()
                .enumerate()
                .filter(|(_, m)| m.role == Role::Tool)
                .map(|(i, _)| i)
                .collect();
            for &i in tool_idx.iter().rev().skip(4) {
                let m = &mut messages[i];
                if m.content.len() > 200 {
                    journal.clean_until = journal.clean_until.min(i);
                    elided += m.content.len();
                    let head: String = m.content.chars().take(120).collect();
                    m.content = format!("{head}\n[older output elided to save context]");
                }
            }
        }
        let removed = total.saturating_sub(size(messages));
        if summarised > 0 || elided > 0 {
            self.hooks
                .emit(
                    LifecycleEvent::ContextCompress,
                    json!({"removed_chars": removed, "summarised_messages": summarised}),
                )
                .await;
            self.emit(&AgentEvent::ContextCompress {
                removed_chars: removed,
            });
        }
    }

    /// Asks the model, without tools, for a summary of `old` steps. `None`
    /// when the call fails or comes back empty (the caller then elides).
    pub(super) async fn summarise_steps(
        &self,
        old: &[Message],
        step: u32,
        report: &mut RunReport,
    ) -> Option<String> {
        let mut transcript = String::new();
        for m in old {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool result",
            };
            let _ = writeln!(
                transcript,
                "[{role}] {}",
                truncate_head_tail(&m.content, 4_000)
            );
            for call in &m.tool_calls {
                let _ = writeln!(
                    transcript,
                    "[tool call] {}({})",
                    call.name,
                    truncate_head_tail(&call.arguments, 1_000)
                );
            }
        }
        let request = vec![
            Message::text(
                Role::System,
                "You compress the transcript of an agent's earlier steps so that it can go on \
                 working. Keep every fact it will need: files read or changed and what was \
                 found in them, decisions, errors, what is left to do. Be concise.",
            ),
            Message::text(
                Role::User,
                format!(
                    "Summarise these earlier steps:\n\n{}",
                    // The summary call must fit the window too.
                    truncate_head_tail(&transcript, self.context.input_bytes() / 2)
                ),
            ),
        ];
        let call = self.call_model(&request, super::run::Asked::default(), step, true, report);
        match tokio::time::timeout(Duration::from_secs(120), call).await {
            Ok(Ok(resp)) if !resp.content.trim().is_empty() => Some(resp.content),
            _ => None,
        }
    }
}
