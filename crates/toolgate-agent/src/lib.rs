//! The agent loop of toolgate: the step loop, sessions and reports.
//!
//! - [`LlmClient`] is the model interface, with [`OpenAiClient`]
//!   (OpenAI-compatible chat completions) and [`AnthropicClient`]
//!   (Anthropic Messages), both streaming with tool calls and retrying
//!   429/5xx/connection errors; they live in `toolgate-llm` and are
//!   re-exported here.
//! - [`AgentDef`] says what an agent may use (`build`, `plan`, `review`,
//!   custom agents).
//! - [`AgentRunner`] runs the step loop; every tool call goes through the
//!   [`toolgate_engine::ExecutionEngine`] gate. [`LifecycleHooks`] and
//!   [`QualityGates`] plug hooks and guardrails in: the engine's
//!   [`toolgate_engine::HookExecutor`] is a [`LifecycleHooks`] (`agent_stop`
//!   fires `agent_complete`, a run that ends in error fires `on_error`), and
//!   [`GuardrailGates`] runs `guardrails.quality_gates`.
//! - A tool call's [`CallDecision`] is the gate's
//!   [`toolgate_engine::Decision`], or the [`LoopDecision`] of a call the
//!   loop refused before the gate; hooks are emitted at each
//!   [`LifecycleEvent`].
//! - [`RunRecorder`] keeps a run step by step (the host records it in its
//!   store); [`RunReport`] renders as JSON or Markdown.
//! - [`Profile`] says how much of the runtime a model gets: the small
//!   profile offers a handful of compact tools, one call a step, outputs
//!   cut by lines ([`trim_lines`]) and a [`FINISH`] tool; `auto` decides
//!   from what the server reports ([`ModelFacts`]).
//! - [`recover_tool_calls`] finds tool calls a model wrote as text.
//! - [`probe()`] tells whether a model server is reachable, which models it
//!   serves, its context window and whether it calls tools;
//!   [`detect_local_servers`] asks Ollama, llama.cpp, LM Studio and vLLM at
//!   their usual local addresses.
//!
//! ```no_run
//! # async fn f(engine: std::sync::Arc<toolgate_engine::ExecutionEngine>) {
//! use std::sync::Arc;
//! use toolgate_agent::{AgentDef, AgentRunner, ApiKey, HttpSettings, OpenAiClient};
//! let llm = OpenAiClient::new(HttpSettings::new("http://127.0.0.1:8080/v1", "local", ApiKey::default()));
//! let agent = AgentDef::builtin("plan").unwrap_or_else(|| unreachable!());
//! let report = AgentRunner::builder(Arc::new(llm), engine, agent).build().run("Plan it", Vec::new()).await;
//! println!("{}", report.final_text);
//! # }
//! ```

pub use agent::{
    AgentConfig, AgentDef, DEFAULT_MAX_CALLS_PER_STEP, DEFAULT_MAX_REPEATED_CALLS,
    DEFAULT_MAX_STEPS,
};
pub use bridge::GuardrailGates;
pub use checks::{Leftover, MustPass, Rename, TaskChecks, on_path};
pub use context::{
    BYTES_PER_TOKEN_X2, ContextBudget, DEFAULT_CONTEXT_WINDOW, ENVELOPE_BYTES,
    WIRE_BYTES_PER_TOKEN, exceeds_context, fit, fit_wire, message_bytes, messages_bytes,
    wire_messages_bytes,
};
pub use fallback::{
    FallbackClient, FallbackClientBuilder, FallbackEntry, FallbackError, ProviderKind,
    ProviderSwitch, SwitchCallback, SwitchLog, SwitchReason, is_provider_failure,
};
pub use llm::{
    AnthropicClient, ApiKey, DEFAULT_TEMPERATURE, HttpSettings, LlmClient, LlmError, LlmRequest,
    LlmResponse, Message, ModelToolCall, OpenAiClient, REPEAT_PENALTY, Role, TextSink, Usage,
    decode_constrained, reply_rules, reply_schema,
};
pub use probe::{
    ContextSource, ContextWindow, LOCAL_SERVERS, LocalServer, ProbeError, ProbeRequest, Provider,
    ServedModel, ServerKind, ServerProbe, detect_local_servers, detect_servers, list_models, probe,
};
pub use profile::{
    FINISH, ModelFacts, Profile, SMALL_OUTPUT_CHARS, SMALL_PARAMETERS, SMALL_REPLY_TOKENS,
    SMALL_WINDOW, small_offer, trim_lines,
};
pub use prompt::{
    AGENTS_MD_CAP, AGENTS_MD_SMALL_CAP, Environment, PromptBuilder, PromptMode, SMALL_RULES,
};
pub use recover::{Recovered, TextCall, recover_tool_calls};
pub use routing::{
    CLASSIFY_MAX_TOKENS, CLASSIFY_MESSAGE_CAP, DEFAULT_MAX_TOOLS, IntentAnswer, RouteReason,
    Routed, Router, RouterBuilder, RoutingConfig, RoutingError, parse_intent, select_tools,
};
pub use runner::{
    AgentEvent, AgentRunner, AgentRunnerBuilder, CallDecision, EMPTY_REPLY_NUDGE, EventSink,
    GateReport, HookVerdict, LifecycleEvent, LifecycleHooks, LoopDecision, Outcome, QualityGates,
    RecordError, RecordedEvent, RunRecorder, RunReport, SpendMeter, StepSnapshot, StepUsage,
    ToolCallRecord, ToolInstructions, ToolRefresh, truncate_head_tail,
};

use toolgate_llm as llm;
use toolgate_llm::probe;

mod agent;
mod bridge;
mod checks;
mod context;
pub mod delegate;
mod fallback;
mod profile;
mod prompt;
mod recover;
mod routing;
mod runner;
