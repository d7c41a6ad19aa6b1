//! How a run ended ([`RunReport`]) and its rendering as JSON and Markdown.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};
use toolgate_core::Effect;
use toolgate_engine::Decision;

use super::decision::CallDecision;
use super::events::ToolCallRecord;
use crate::llm::{Message, Usage};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without tool calls; or the repeated-call guard
    /// stopped a run whose task the runtime could tell was done (the
    /// repeated call was a change that had already succeeded, nothing
    /// failed since, the required quality gates pass).
    Completed,
    /// `max_steps` was reached (partial).
    MaxSteps,
    /// The time budget ran out.
    Timeout,
    /// The model made the same call with the same arguments too many times
    /// in a row (`max_repeated_calls`) (partial); the report's answer is
    /// built from the log ([`RunReport::log_summary`]).
    Repeating,
    /// The cost budget ran out (partial).
    Budget,
    /// Stopped gracefully by the person (Ctrl-C).
    Interrupted,
    /// The person aborted at a confirmation prompt.
    Aborted,
    /// The model server refused the credentials.
    AuthFailed,
    /// The model call failed or a hook blocked the run.
    Failed,
    /// Calls the task needed were refused because nobody could be asked to
    /// approve them (no terminal, no approver): whatever the model said,
    /// the work was not done.
    Blocked,
    /// The model kept answering before it read a file or ran a command
    /// its task names, or while a command the task says must pass failed
    /// (partial): the task checks gave up after their nudges.
    Unverified,
}

impl Outcome {
    /// The outcome's name as sessions, reports and `--json` spell it
    /// (`completed`, `max_steps`, `blocked`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxSteps => "max_steps",
            Self::Timeout => "timeout",
            Self::Repeating => "repeating",
            Self::Budget => "budget",
            Self::Interrupted => "interrupted",
            Self::Aborted => "aborted",
            Self::AuthFailed => "auth_failed",
            Self::Failed => "failed",
            Self::Blocked => "blocked",
            Self::Unverified => "unverified",
        }
    }
}

/// Tokens and cost of one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct StepUsage {
    /// Step number (0 for the summary call).
    pub step: u32,
    /// Tokens.
    pub usage: Usage,
    /// Whether the counts are estimates (~4 characters a token).
    pub estimated: bool,
    /// Cost in USD, when prices are configured.
    pub cost_usd: Option<f64>,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RunReport {
    /// How it ended.
    pub outcome: Outcome,
    /// The agent.
    pub agent: String,
    /// The task.
    pub task: String,
    /// The last answer of the model.
    pub final_text: String,
    /// Steps taken (model calls with tools).
    pub steps: u32,
    /// Per-step usage.
    pub step_usage: Vec<StepUsage>,
    /// Every tool call.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The files successful calls changed, from their declared effects
    /// (written, deleted, either end of a rename), sorted.
    pub files_changed: Vec<String>,
    /// The error, when the run failed.
    pub error: Option<String>,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// How a failed command ended, from its result: `exit code N`, or what
/// the result says first.
fn exit_of(output: &str) -> String {
    if let Some(at) = output.find("exit code ") {
        let code: String = output[at + 10..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        if !code.is_empty() {
            return format!("exit code {code}");
        }
    }
    let first = output.lines().next().unwrap_or("failed");
    first.chars().take(120).collect()
}

impl RunReport {
    /// Total tokens (input, output).
    pub fn tokens(&self) -> (u64, u64) {
        self.step_usage.iter().fold((0, 0), |(i, o), s| {
            (i + s.usage.input_tokens, o + s.usage.output_tokens)
        })
    }

    /// Prompt tokens the server processed over the run (the rest came
    /// from its cache), when it said for every call.
    pub fn processed_tokens(&self) -> Option<u64> {
        self.step_usage
            .iter()
            .map(|s| s.usage.processed_tokens)
            .try_fold(0, |acc, n| n.map(|n| acc + n))
            .filter(|_| !self.step_usage.is_empty())
    }

    /// Total cost, when prices are configured.
    pub fn cost_usd(&self) -> Option<f64> {
        self.step_usage
            .iter()
            .map(|s| s.cost_usd)
            .try_fold(0.0, |acc, c| c.map(|c| acc + c))
    }

    /// How many calls were refused because nobody could be asked to
    /// approve them ([`Outcome::Blocked`]).
    pub fn blocked_calls(&self) -> usize {
        self.tool_calls
            .iter()
            .filter(|c| c.decision == CallDecision::Gate(Decision::NoApprover))
            .count()
    }

    /// What the run did, from its log alone (the tool calls' records),
    /// for a run a guard stopped: `reason`, the files changed, the
    /// commands run with how they ended, the calls that did not run and
    /// why. Nothing in it comes from the model.
    pub fn log_summary(&self, reason: &str) -> String {
        let mut s = format!(
            "Stopped: {reason}. This summary is built from the run's log, not written by the \
             model.\n"
        );
        let executed: Vec<&ToolCallRecord> = self
            .tool_calls
            .iter()
            .filter(|c| c.decision.executed())
            .collect();
        let failed = executed.iter().filter(|c| !c.success).count();
        let _ = writeln!(
            s,
            "Tool calls: {} made, {} ran ({} failed), {} did not run.",
            self.tool_calls.len(),
            executed.len(),
            failed,
            self.tool_calls.len() - executed.len()
        );
        let mut changed: Vec<&str> = executed
            .iter()
            .filter(|c| c.success)
            .flat_map(|c| c.effects.changed_paths())
            .collect();
        changed.sort_unstable();
        changed.dedup();
        if changed.is_empty() {
            s.push_str("Files changed: none.\n");
        } else {
            let _ = writeln!(s, "Files changed: {}.", changed.join(", "));
        }
        let commands: Vec<(&ToolCallRecord, &str)> = executed
            .iter()
            .flat_map(|c| {
                c.effects.list().iter().filter_map(move |e| match e {
                    Effect::Command { command, .. } => Some((*c, command.as_str())),
                    _ => None,
                })
            })
            .collect();
        if !commands.is_empty() {
            s.push_str("Commands run:\n");
            for (c, command) in commands {
                let ended = if c.success {
                    "exit code 0".to_owned()
                } else {
                    exit_of(&c.output)
                };
                let _ = writeln!(s, "- step {}: `{command}`: {ended}", c.step);
            }
        }
        let mut refused: Vec<(&str, &str, usize)> = Vec::new();
        for c in self.tool_calls.iter().filter(|c| !c.decision.executed()) {
            let decision = c.decision.as_str();
            match refused
                .iter_mut()
                .find(|(n, d, _)| *n == c.name && *d == decision)
            {
                Some((_, _, k)) => *k += 1,
                None => refused.push((&c.name, decision, 1)),
            }
        }
        if !refused.is_empty() {
            s.push_str("Calls that did not run:\n");
            for (name, decision, k) in refused {
                let _ = writeln!(s, "- `{name}` x{k}: {decision}");
            }
        }
        s
    }

    /// Milliseconds people took to answer questions during the run.
    pub fn waited_ms(&self) -> u64 {
        self.tool_calls.iter().map(|c| c.waited_ms).sum()
    }

    /// The report as JSON (without the conversation). Each tool call
    /// carries `waited_ms` (the person's part of `duration_ms`) and, when a
    /// person was asked, `approval` (what they were shown and answered).
    pub fn to_json(&self) -> Value {
        let (i, o) = self.tokens();
        json!({
            "outcome": self.outcome, "agent": self.agent, "task": self.task,
            "final_text": self.final_text, "steps": self.steps,
            "tokens": {"input": i, "output": o, "processed": self.processed_tokens()},
            "step_usage": self.step_usage.iter().map(|s| json!({
                "step": s.step, "input": s.usage.input_tokens, "output": s.usage.output_tokens,
                "processed": s.usage.processed_tokens, "estimated": s.estimated,
            })).collect::<Vec<_>>(),
            "cost_usd": self.cost_usd(),
            "tool_calls": self.tool_calls.iter().map(|c| {
                let mut call = json!({
                    "step": c.step, "id": c.id, "name": c.name, "decision": c.decision,
                    "success": c.success, "duration_ms": c.duration_ms,
                    "waited_ms": c.waited_ms});
                if let Some(approval) = &c.approval {
                    call["approval"] = approval.clone();
                }
                call
            }).collect::<Vec<_>>(),
            "blocked_calls": self.blocked_calls(),
            "files_changed": self.files_changed, "error": self.error,
            "duration_ms": self.duration_ms, "waited_ms": self.waited_ms(),
        })
    }

    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let (i, o) = self.tokens();
        let mut s = format!(
            "# toolgate run report\n\n- Task: {}\n- Agent: {}\n",
            self.task, self.agent
        );
        let _ = writeln!(s, "- Outcome: {:?}\n- Steps: {}", self.outcome, self.steps);
        let _ = writeln!(s, "- Tokens: {i} in, {o} out");
        if let Some(p) = self.processed_tokens() {
            let _ = writeln!(
                s,
                "- Prompt tokens processed: {p} (the rest from the cache)"
            );
        }
        if let Some(c) = self.cost_usd() {
            let _ = writeln!(s, "- Cost: ${c:.4}");
        }
        let _ = writeln!(
            s,
            "- Duration: {} ms ({} ms waiting for answers)\n\n## Tool calls\n",
            self.duration_ms,
            self.waited_ms()
        );
        let _ = writeln!(
            s,
            "| step | tool | decision | ok | ms | waited ms |\n|---|---|---|---|---|---|"
        );
        for c in &self.tool_calls {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                c.step,
                c.name,
                c.decision,
                c.success,
                c.duration_ms.saturating_sub(c.waited_ms),
                c.waited_ms
            );
        }
        let asked: Vec<&ToolCallRecord> = self
            .tool_calls
            .iter()
            .filter(|c| c.approval.is_some())
            .collect();
        if !asked.is_empty() {
            let _ = writeln!(s, "\n## Approvals\n");
            for c in asked {
                let approval = c.approval.as_ref().unwrap_or(&Value::Null);
                let _ = writeln!(
                    s,
                    "- step {} `{}`: {} after {} ms: {}",
                    c.step,
                    c.name,
                    approval["answer"].as_str().unwrap_or("?"),
                    c.waited_ms,
                    approval["view"]["reason"].as_str().unwrap_or("")
                );
                for action in approval["view"]["actions"].as_array().into_iter().flatten() {
                    let _ = writeln!(s, "  - {}", action["summary"].as_str().unwrap_or(""));
                }
            }
        }
        let _ = writeln!(s, "\n## Files changed\n");
        for f in &self.files_changed {
            let _ = writeln!(s, "- {f}");
        }
        let _ = writeln!(s, "\n## Answer\n\n{}", self.final_text);
        s
    }
}
