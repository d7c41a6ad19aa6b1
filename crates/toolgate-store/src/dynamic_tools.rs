//! Dynamic tools: tools an agent wrote at run time (seed 002's
//! `create_tool`), kept with their review status until a person approves
//! or rejects them.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// Where dynamic tools are kept, and their review status.
///
/// The store keeps what the creating agent wrote (name, description,
/// source, argument schema) and the advice of the static analysis, as
/// given; what a source means and whether it is valid is the caller's
/// business (`toolgate-tools`' `dynamic` module). Times are milliseconds
/// since the Unix epoch.
///
/// # Rules
///
/// 1. Ids are assigned by the store, increase and are never reused; a
///    record never changes after creation but for its status and `updated`.
/// 2. Names are unique among tools that are pending or approved: a second
///    creation of a live name is [`Created::NameTaken`]. A rejected tool
///    gives its name back (it stays listed, as a record of the review).
/// 3. An agent has at most `max_per_agent` tools pending or approved
///    (`created_by`, whatever their scope); one more is
///    [`Created::LimitReached`]. Rejected tools do not count.
/// 4. Rules 2 and 3 are checked in the transaction that inserts the tool,
///    which holds the write lock: two processes creating at once cannot
///    both get a name or both take the last place.
/// 5. A pending tool may be approved or rejected, and an approved one
///    rejected (withdrawn) or put back to pending; setting the status a
///    tool already has changes nothing. A rejected tool stays rejected
///    ([`StatusChange::Final`]): its name may belong to another tool by
///    then.
/// 6. [`approved_dynamic_tools_for`](Self::approved_dynamic_tools_for) an
///    agent lists the approved tools whose scope is
///    [`global`](DynamicToolScope::Global), and the approved tools that
///    agent created with scope [`agent`](DynamicToolScope::Agent), by id.
#[async_trait]
pub trait DynamicToolStore: Send + Sync {
    /// Stores a new pending tool (rules 2 to 4).
    async fn create_dynamic_tool(
        &self,
        tool: &NewDynamicTool,
        max_per_agent: usize,
    ) -> Result<Created, StoreError>;

    /// One tool, or `None` when no tool has this id.
    async fn dynamic_tool(&self, id: i64) -> Result<Option<DynamicToolRecord>, StoreError>;

    /// The tools with this status (every tool with `None`), by id.
    async fn list_dynamic_tools(
        &self,
        status: Option<DynamicToolStatus>,
    ) -> Result<Vec<DynamicToolRecord>, StoreError>;

    /// Changes a tool's status (rule 5).
    async fn set_dynamic_tool_status(
        &self,
        id: i64,
        status: DynamicToolStatus,
    ) -> Result<StatusChange, StoreError>;

    /// The approved tools `agent` may use (rule 6), by id.
    async fn approved_dynamic_tools_for(
        &self,
        agent: &str,
    ) -> Result<Vec<DynamicToolRecord>, StoreError>;
}

/// What a dynamic tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicToolKind {
    /// An argument-vector template run without a shell.
    Command,
    /// A script run by an interpreter.
    Script,
}

names!(DynamicToolKind { Command => "command", Script => "script" });

/// Who may use a dynamic tool once approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicToolScope {
    /// Only the agent that created it.
    Agent,
    /// Every agent.
    Global,
}

names!(DynamicToolScope { Agent => "agent", Global => "global" });

/// Where a dynamic tool is in its review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicToolStatus {
    /// Waiting for a person; never callable.
    Pending,
    /// Approved by a person: loaded into registries.
    Approved,
    /// Rejected (or withdrawn after approval): never callable again.
    Rejected,
}

names!(DynamicToolStatus { Pending => "pending", Approved => "approved", Rejected => "rejected" });

/// A dynamic tool to store, pending review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewDynamicTool {
    /// The name models will call it by.
    pub name: String,
    /// The description models will read.
    pub description: String,
    /// What it runs.
    pub kind: DynamicToolKind,
    /// The interpreter of a script (`python3`, `node`, `sh`); `None` for a
    /// command.
    pub interpreter: Option<String>,
    /// The command template or the script.
    pub source: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
    /// Who may use it once approved.
    pub scope: DynamicToolScope,
    /// The agent that created it.
    pub created_by: String,
    /// The session it was created in, if any.
    pub session_id: Option<String>,
    /// The static analysis's findings, for the reviewer (kept as given).
    pub advice: Value,
}

/// A stored dynamic tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DynamicToolRecord {
    /// The id (rule 1).
    pub id: i64,
    /// The name models call it by.
    pub name: String,
    /// The description models read.
    pub description: String,
    /// What it runs.
    pub kind: DynamicToolKind,
    /// The interpreter of a script; `None` for a command.
    pub interpreter: Option<String>,
    /// The command template or the script.
    pub source: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
    /// Who may use it once approved.
    pub scope: DynamicToolScope,
    /// The agent that created it.
    pub created_by: String,
    /// The session it was created in, if any.
    pub session_id: Option<String>,
    /// The static analysis's findings.
    pub advice: Value,
    /// Where it is in its review.
    pub status: DynamicToolStatus,
    /// When it was created.
    pub created: i64,
    /// When its status last changed (its creation, before any review).
    pub updated: i64,
}

/// The result of [`DynamicToolStore::create_dynamic_tool`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Created {
    /// Stored, pending review.
    Created(Box<DynamicToolRecord>),
    /// A pending or approved tool has this name already (rule 2).
    NameTaken {
        /// That tool's id.
        id: i64,
        /// That tool's status.
        status: DynamicToolStatus,
    },
    /// The agent has as many live tools as it may (rule 3).
    LimitReached {
        /// How many it has.
        count: usize,
    },
}

/// The result of [`DynamicToolStore::set_dynamic_tool_status`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StatusChange {
    /// The tool has the status now (it may have had it already), as stored.
    Changed(DynamicToolRecord),
    /// The tool is rejected and stays so (rule 5), as stored.
    Final(DynamicToolRecord),
    /// No tool has this id.
    NotFound,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in [DynamicToolKind::Command, DynamicToolKind::Script] {
            assert_eq!(DynamicToolKind::from_name(kind.as_str()), Some(kind));
        }
        for scope in [DynamicToolScope::Agent, DynamicToolScope::Global] {
            assert_eq!(DynamicToolScope::from_name(scope.as_str()), Some(scope));
        }
        for status in [
            DynamicToolStatus::Pending,
            DynamicToolStatus::Approved,
            DynamicToolStatus::Rejected,
        ] {
            assert_eq!(DynamicToolStatus::from_name(status.as_str()), Some(status));
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                Value::from(status.as_str())
            );
        }
        assert_eq!(DynamicToolStatus::from_name("Approved"), None);
        assert_eq!(DynamicToolKind::from_name(""), None);
    }
}
