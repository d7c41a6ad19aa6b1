//! Saved confirmation rules kept in the store: with a store that several
//! workers share, a rule saved from any worker ("Always allow" in a UI,
//! `toolgate rules add --store`) applies on every worker.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// A confirmation rule as it is saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRule {
    /// The rule, as the configuration writes it (`confirmation.rules`);
    /// what it means is the caller's, the store keeps it as given.
    pub rule: Value,
    /// Who saved it: the person answering in a UI, or the client's name.
    pub saved_by: String,
    /// When, in milliseconds since the Unix epoch (the caller's clock).
    pub saved: i64,
}

/// A confirmation rule kept in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRule {
    /// Its id: stable, never given to another rule of the store.
    pub id: i64,
    /// The rule, as given.
    pub rule: Value,
    /// Who saved it.
    pub saved_by: String,
    /// When it was saved (milliseconds since the Unix epoch).
    pub saved: i64,
}

/// Where saved confirmation rules are kept.
///
/// # Rules
///
/// 1. [`rules`](Self::rules) lists them in the order they were added
///    (by id, which only grows).
/// 2. [`remove_rule`](Self::remove_rule) of an id that is not there (never
///    given, or removed already) changes nothing and returns `false`.
/// 3. A rule is read back exactly as added, by any process sharing the
///    store, and survives the store being opened again.
/// 4. [`rules_stamp`](Self::rules_stamp) lets a process keep the rules it
///    read: while it returns the same `Some` value, no process has changed
///    the rules since (as far as notifications travel: on `PostgreSQL`,
///    every change notifies [`RULES_CHANNEL`] when it commits). `None`
///    when the store cannot tell (`SQLite`; `PostgreSQL` until its
///    listening connection is open, and while it is lost): then read them
///    again.
/// 5. An "allow for the session" ([`SessionAllow`]) holds for its scope,
///    tool and sensitivity only, in every process sharing the store, until
///    it expires; given again, the later expiry is kept.
#[async_trait]
pub trait RuleStore: Send + Sync {
    /// Saves a rule; returns it with its id.
    async fn add_rule(&self, rule: &NewRule) -> Result<SavedRule, StoreError>;

    /// Every saved rule, oldest first (rule 1).
    async fn rules(&self) -> Result<Vec<SavedRule>, StoreError>;

    /// Removes rule `id`; `false` when there is none (rule 2).
    async fn remove_rule(&self, id: i64) -> Result<bool, StoreError>;

    /// A value that changes whenever the saved rules may have changed, or
    /// `None` when the store cannot tell now (rule 4). Cheap: no query.
    fn rules_stamp(&self) -> Option<u64> {
        None
    }
    /// Records `allow` (rule 5).
    async fn allow_for_session(&self, allow: &SessionAllow) -> Result<(), StoreError>;

    /// Whether `tool` with `sensitivity` is allowed for the session
    /// `scope` at `now` (rule 5).
    async fn session_allowed(
        &self,
        scope: &str,
        tool: &str,
        sensitivity: &str,
        now: i64,
    ) -> Result<bool, StoreError>;
}

/// "Allow for the session", answered for one client's calls of a tool with
/// one sensitivity, kept in the store so that every worker honours it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionAllow {
    /// Whose session: a client as the gate names its approval scope.
    pub scope: String,
    /// The tool allowed.
    pub tool: String,
    /// The sensitivity allowed with it, as the gate writes it.
    pub sensitivity: String,
    /// Who answered (`ui@WORKER`).
    pub by: String,
    /// When (milliseconds since the Unix epoch).
    pub granted: i64,
    /// Until when.
    pub expires: i64,
}

/// The `PostgreSQL` channel on which every change of the saved rules is
/// notified, the rule's id as the payload (rule 4).
pub const RULES_CHANNEL: &str = "toolgate_rules";
