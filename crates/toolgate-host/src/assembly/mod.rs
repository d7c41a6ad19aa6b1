//! Assembly: everything a [`Host`](host::Host) builds from its
//! configuration — the registry from the group catalog, the gate (engine,
//! hooks, guardrails, approver, audit, MCP), the model client and the
//! stores.

pub(crate) mod catalog;
pub(crate) mod gate;
pub(crate) mod groups;
pub(crate) mod host;
pub(crate) mod llm;
pub(crate) mod skills;
pub(crate) mod stores;
