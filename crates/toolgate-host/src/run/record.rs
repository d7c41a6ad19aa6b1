//! How a run is kept in the store, step by step (`StoreRecorder`): each
//! complete step with its messages, calls and usage, the confirmation mode
//! when it changes (so a resumed session starts in the mode it was left
//! in), what each step changed in the workspace for rewind, and the skills
//! already given.

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_agent::{Message, RecordError, RunRecorder, RunReport, StepSnapshot};
use toolgate_core::ChangeCapture as _;
use toolgate_policy::ConfirmationMode;
use toolgate_store::{
    NewCheckpoint, SessionEvent, StepRecord, Store, ToolCallRow, UsageRow, WorkspaceTracker,
};

/// Records a run in the store, step by step.
pub(super) struct StoreRecorder {
    pub(super) store: Arc<dyn Store>,
    pub(super) session_id: String,
    pub(super) run: u32,
    /// The gate's capture, looked at once more when the run ends.
    pub(super) capture: Option<Arc<WorkspaceTracker>>,
    /// The session-wide number of the last checkpoint this run recorded.
    pub(super) last_checkpoint: std::sync::Mutex<Option<u32>>,
    /// The run's confirmation mode, which plan mode changes.
    pub(super) mode: toolgate_engine::ModeCell,
    /// The mode the session's last `mode` event says (see
    /// [`session_mode_of`]).
    pub(super) recorded_mode: std::sync::Mutex<Option<ConfirmationMode>>,
}

impl StoreRecorder {
    /// A `mode` event when the run's mode at the end of the step is not the
    /// one the session's record says.
    pub(super) fn mode_event(&self, step: u32) -> Option<SessionEvent> {
        let now = self.mode.get();
        let mut recorded = self
            .recorded_mode
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *recorded == Some(now) {
            return None;
        }
        *recorded = Some(now);
        Some(SessionEvent {
            step,
            kind: MODE_EVENT.to_owned(),
            data: serde_json::json!({ "mode": now.as_str() }),
        })
    }

    /// A step's checkpoint, to record after the step: what its calls changed (each call's
    /// earlier changes, found before it ran, first), then what changed
    /// after its last call, found by one more look now: everything that
    /// changed since the previous step's checkpoint.
    pub(super) async fn checkpoint(&self, snapshot: &StepSnapshot<'_>) -> NewCheckpoint {
        let mut changes = Vec::new();
        let mut problems = Vec::new();
        for call in snapshot.tool_calls {
            changes.extend(call.changed_before.iter().cloned());
            changes.extend(call.files_changed.iter().cloned());
            if let Some(error) = &call.capture_error {
                problems.push(format!(
                    "the changes of `{}` are unknown: {error}",
                    call.name
                ));
            }
        }
        match &self.capture {
            // What changed after the step's last call looked: a background
            // process the step started, say.
            Some(capture) => match sync(capture).await {
                Ok(late) => changes.extend(late),
                Err(error) => problems.push(format!("the look at the step's end failed: {error}")),
            },
            None => problems
                .push("changes were not captured (store.checkpoints.enabled is off)".to_owned()),
        }
        let incomplete = incomplete(&changes, problems);
        if let Some(why) = &incomplete {
            tracing::warn!("step {} cannot be fully undone: {why}", snapshot.step);
        }
        NewCheckpoint {
            session_id: self.session_id.clone(),
            run: self.run,
            run_step: snapshot.step,
            messages_from: snapshot.messages_from,
            changes,
            incomplete,
        }
    }
}

/// The kind of the session event that records the run's confirmation mode
/// at the end of a step where it differs from the last one recorded.
pub(super) const MODE_EVENT: &str = "mode";

/// The mode a session was left in by plan mode, from its events: the last
/// `mode` event (plan mode entered, or left into the mode the person
/// chose), or for sessions recorded before those events, the mode of the
/// last approved `plan`. `None`: the session never was in plan mode, and a
/// resumed run takes the configured mode.
pub(super) fn session_mode_of(
    events: &[toolgate_store::SessionEventRow],
) -> Option<ConfirmationMode> {
    events.iter().rev().find_map(|row| {
        let data = &row.event.data;
        let mode = match row.event.kind.as_str() {
            MODE_EVENT => data["mode"].as_str(),
            "plan" if data["answer"] == "approved" => data["mode"].as_str(),
            _ => None,
        };
        mode.and_then(|m| m.parse().ok())
    })
}

/// One look of the capture, off the async threads.
pub(super) async fn sync(
    capture: &Arc<WorkspaceTracker>,
) -> Result<Vec<toolgate_core::PathChange>, String> {
    let capture = Arc::clone(capture);
    match tokio::task::spawn_blocking(move || capture.sync()).await {
        Ok(Ok(changes)) => Ok(changes),
        Ok(Err(e)) => Err(toolgate_core::error_chain(&e)),
        Err(e) => Err(e.to_string()),
    }
}

/// Why some of `changes` cannot be undone, with the other `problems`.
pub(super) fn incomplete(
    changes: &[toolgate_core::PathChange],
    mut problems: Vec<String>,
) -> Option<String> {
    let lost: Vec<&str> = changes
        .iter()
        .filter(|c| !c.before.is_restorable())
        .map(|c| c.path.as_str())
        .collect();
    if !lost.is_empty() {
        problems.push(format!(
            "too large to keep (store.checkpoints.max_file_mb): {}",
            lost.join(", ")
        ));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[async_trait]
impl RunRecorder for StoreRecorder {
    async fn step(&self, snapshot: &StepSnapshot<'_>) -> Result<(), RecordError> {
        let messages = snapshot
            .messages
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<_>, _>>()?;
        let tool_calls = snapshot
            .tool_calls
            .iter()
            .map(|c| ToolCallRow {
                step: c.step,
                call_id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                decision: c.decision.to_string(),
                success: c.success,
                duration_ms: c.duration_ms,
                output: c.output.clone(),
                effects: serde_json::to_value(&c.effects).unwrap_or_default(),
                recovered: c.recovered,
            })
            .collect();
        // The step's model call, and any summarising call made for it.
        let usage = (!snapshot.usage.is_empty()).then(|| {
            snapshot.usage.iter().fold(
                UsageRow {
                    input_tokens: 0,
                    output_tokens: 0,
                    estimated: false,
                    cost_usd: Some(0.0),
                },
                |sum, u| UsageRow {
                    input_tokens: sum.input_tokens + u.usage.input_tokens,
                    output_tokens: sum.output_tokens + u.usage.output_tokens,
                    estimated: sum.estimated || u.estimated,
                    cost_usd: sum.cost_usd.zip(u.cost_usd).map(|(a, b)| a + b),
                },
            )
        });
        let checkpoint = if snapshot.step >= 1 {
            Some(self.checkpoint(snapshot).await)
        } else {
            None
        };
        let mut events: Vec<SessionEvent> = snapshot
            .events
            .iter()
            .map(|e| SessionEvent {
                step: e.step,
                kind: e.kind.clone(),
                data: e.data.clone(),
            })
            .collect();
        events.extend(self.mode_event(snapshot.step));
        if let Some(why) = checkpoint.as_ref().and_then(|c| c.incomplete.as_ref()) {
            events.push(SessionEvent {
                step: snapshot.step,
                kind: "checkpoint_incomplete".to_owned(),
                data: serde_json::json!({ "reason": why }),
            });
        }
        self.store
            .record_step(&StepRecord {
                session_id: self.session_id.clone(),
                run: self.run,
                step: snapshot.step,
                messages_from: snapshot.messages_from,
                messages,
                tool_calls,
                usage,
                events,
            })
            .await
            .map_err(RecordError::store)?;
        if let Some(checkpoint) = checkpoint {
            let step = self
                .store
                .record_checkpoint(&checkpoint)
                .await
                .map_err(RecordError::store)?;
            *self
                .last_checkpoint
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(step);
        }
        Ok(())
    }

    async fn finish(&self, report: &RunReport) -> Result<(), RecordError> {
        // What background processes wrote after the last call looked: the
        // run's last step started them.
        let last = *self
            .last_checkpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let (Some(capture), Some(step)) = (&self.capture, last) {
            match sync(capture).await {
                Ok(changes) if !changes.is_empty() => self
                    .store
                    .extend_checkpoint(&self.session_id, step, &changes)
                    .await
                    .map_err(RecordError::store)?,
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    "the last look at the workspace failed; later changes cannot be undone: {error}"
                ),
            }
        }
        let outcome = serde_json::to_value(report.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "unknown".to_owned());
        self.store
            .finish(&self.session_id, self.run, &outcome)
            .await
            .map_err(RecordError::store)
    }
}

/// The skills whose bodies earlier turns gave the model: results of the
/// `skill` tool that start a skill's frame (`# Skill: NAME`), and lazy
/// frames (`# Skill: NAME` then `(given because …`) after a blank line in
/// other tools' results. Text a tool merely read cannot pass for a `skill`
/// result, whose call id the model's own call names.
pub(super) fn given_skills(history: &[Message]) -> Vec<String> {
    let skill_calls: Vec<&str> = history
        .iter()
        .flat_map(|m| &m.tool_calls)
        .filter(|c| c.name == toolgate_skills::SkillTool::NAME)
        .map(|c| c.id.as_str())
        .collect();
    let mut names = Vec::new();
    for message in history
        .iter()
        .filter(|m| m.role == toolgate_agent::Role::Tool)
    {
        let from_skill = message
            .tool_call_id
            .as_deref()
            .is_some_and(|id| skill_calls.contains(&id));
        for (n, part) in message.content.split("\n\n").enumerate() {
            let Some((name, lazy)) = toolgate_skills::framed_skill(part) else {
                continue;
            };
            if (from_skill && n == 0) || (lazy && n > 0) {
                names.push(name.to_owned());
            }
        }
    }
    names
}
