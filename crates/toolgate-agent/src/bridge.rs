//! The engine's hooks and guardrails as the loop's [`LifecycleHooks`] and
//! [`QualityGates`].

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolgate_engine::{GuardrailsEngine, HookEvent, HookExecutor};

use crate::runner::{GateReport, HookVerdict, LifecycleEvent, LifecycleHooks, QualityGates};

/// The loop's event as a configured hook event. `agent_stop` is the seeds'
/// `agent_complete`; `agent_start` has no hook event of its own.
fn hook_event(event: LifecycleEvent) -> Option<HookEvent> {
    Some(match event {
        LifecycleEvent::SessionStart => HookEvent::SessionStart,
        LifecycleEvent::AgentStart => return None,
        LifecycleEvent::PreLlmCall => HookEvent::PreLlmCall,
        LifecycleEvent::PostLlmCall => HookEvent::PostLlmCall,
        LifecycleEvent::BudgetWarning => HookEvent::BudgetWarning,
        LifecycleEvent::ContextCompress => HookEvent::ContextCompress,
        LifecycleEvent::OnError => HookEvent::OnError,
        LifecycleEvent::AgentStop => HookEvent::AgentComplete,
        LifecycleEvent::SessionEnd => HookEvent::SessionEnd,
    })
}

#[async_trait]
impl LifecycleHooks for HookExecutor {
    async fn emit(&self, event: LifecycleEvent, payload: Value) -> HookVerdict {
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
        let cases = [
            (LifecycleEvent::SessionStart, Some(HookEvent::SessionStart)),
            (LifecycleEvent::AgentStart, None),
            (LifecycleEvent::PreLlmCall, Some(HookEvent::PreLlmCall)),
            (LifecycleEvent::PostLlmCall, Some(HookEvent::PostLlmCall)),
            (
                LifecycleEvent::BudgetWarning,
                Some(HookEvent::BudgetWarning),
            ),
            (
                LifecycleEvent::ContextCompress,
                Some(HookEvent::ContextCompress),
            ),
            (LifecycleEvent::OnError, Some(HookEvent::OnError)),
            (LifecycleEvent::AgentStop, Some(HookEvent::AgentComplete)),
            (LifecycleEvent::SessionEnd, Some(HookEvent::SessionEnd)),
        ];
        for (event, hook) in cases {
            assert_eq!(hook_event(event), hook, "{event}");
            // Every event a hook is configured for keeps its name, but
            // `agent_stop`, which is the seeds' `agent_complete`.
            if let Some(hook) = hook
                && event != LifecycleEvent::AgentStop
            {
                assert_eq!(HookEvent::parse(event.as_str()), Some(hook));
            }
        }
    }
}
