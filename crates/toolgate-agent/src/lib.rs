//! The agent loop of toolgate: LLM providers, the step loop, context building
//! and sessions.
//!
//! Nothing is implemented here yet; the crate exists so the layering of the
//! workspace (core → policy → engine → tools/mcp → agent → cli) holds from
//! the start. The agent-loop issue fills it in.
