//! The engine's hooks and guardrails as the loop's [`LifecycleHooks`] and
//! [`QualityGates`].

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolgate_engine::{GuardrailsEngine, HookEvent, HookExecutor};

use crate::runner::{GateReport, HookVerdict, LifecycleHooks, QualityGates};

/// The loop's event name as a configured hook event. `agent_stop` is the
/// seeds' `agent_complete`; `agent_start` has no hook event of its own.
fn hook_event(event: &str) -> Option<HookEvent> {
    match event {
        "agent_stop" => Some(HookEvent::AgentComplete),
        "agent_start" => None,
        other => HookEvent::parse(other),
    }
}

#[async_trait]
impl LifecycleHooks for HookExecutor {
    async fn emit(&self, event: &str, payload: Value) -> HookVerdict {
        let Some(event) = hook_event(event) else {
            return HookVerdict::default();
        };
        let outcome = HookExecutor::emit(self, event, payload).await;
        let context = outcome.context.join("\n");
        HookVerdict {
            block: outcome
                .blocked
                .map(|(hook, reason)| format!("{hook}: {reason}")),
            additional_context: (!context.is_empty()).then_some(context),
        }
    }
}

/// The configured `guardrails.quality_gates`, run in one directory.
#[derive(Debug, Clone)]
pub struct GuardrailGates {
    guardrails: Arc<GuardrailsEngine>,
    cwd: PathBuf,
}

impl GuardrailGates {
    /// Gates of `guardrails`, run in `cwd` (the workspace root).
    pub fn new(guardrails: Arc<GuardrailsEngine>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            guardrails,
            cwd: cwd.into(),
        }
    }
}

#[async_trait]
impl QualityGates for GuardrailGates {
    async fn run(&self) -> Vec<GateReport> {
        self.guardrails
            .run_quality_gates(&self.cwd)
            .await
            .into_iter()
            .map(|r| {
                let status = match (r.timed_out, r.exit_code) {
                    (true, _) => "timed out".to_owned(),
                    (false, Some(code)) => format!("exit {code}"),
                    (false, None) => "killed".to_owned(),
                };
                GateReport {
                    name: r.name,
                    passed: r.passed,
                    required: r.required,
                    output: if r.passed {
                        r.output
                    } else {
                        format!("({status})\n{}", r.output)
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_events_map_to_hook_events() {
        assert_eq!(hook_event("agent_stop"), Some(HookEvent::AgentComplete));
        assert_eq!(hook_event("session_start"), Some(HookEvent::SessionStart));
        assert_eq!(hook_event("pre_llm_call"), Some(HookEvent::PreLlmCall));
        assert_eq!(
            hook_event("context_compress"),
            Some(HookEvent::ContextCompress)
        );
        assert_eq!(hook_event("on_error"), Some(HookEvent::OnError));
        assert_eq!(hook_event("agent_start"), None);
    }
}
