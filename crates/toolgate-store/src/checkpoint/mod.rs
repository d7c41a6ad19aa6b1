//! Checkpoints: what each step of a session changed in the workspace, with
//! the content to put it back, and the rewinds made from them.
//!
//! - [`WorkspaceTracker`](tracker::WorkspaceTracker) is the [`ChangeCapture`](toolgate_core::ChangeCapture)
//!   the gate uses: it says what a call changed, keeping every content in a
//!   [`BlobStore`](blobs::BlobStore) (content-addressed, deduplicated) so that the state
//!   before a change can be put back although nobody knew it would change.
//! - [`CheckpointStore`] keeps, per session and step, the
//!   [`PathChange`]s of the step, and the rewinds made.
//! - [`restore`] plans and applies the undoing of changes, with the
//!   conflict check.

use std::collections::HashSet;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{FileState, PathChange};

use crate::StoreError;

pub mod blobs;
pub mod restore;
pub mod tracker;

/// One step's checkpoint, as [`CheckpointStore::record_checkpoint`] takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCheckpoint {
    /// The session.
    pub session_id: String,
    /// The run.
    pub run: u32,
    /// The step's number within the run.
    pub run_step: u32,
    /// How many messages the conversation held before the step.
    pub messages_from: usize,
    /// What the step changed, in order.
    pub changes: Vec<PathChange>,
    /// Why some changes cannot be undone (content too large to keep, the
    /// capture failed), when so.
    pub incomplete: Option<String>,
}

/// A stored checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The step's number within the session, from 1, over all runs.
    pub step: u32,
    /// The run.
    pub run: u32,
    /// The step's number within the run.
    pub run_step: u32,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub recorded: i64,
    /// How many messages the conversation held before the step.
    pub messages_from: usize,
    /// What the step changed, in order.
    pub changes: Vec<PathChange>,
    /// Why some changes cannot be undone, when so.
    pub incomplete: Option<String>,
    /// The rewind that undid the step, while it stands.
    pub rewound_by: Option<i64>,
}

/// A rewind, as [`CheckpointStore::record_rewind`] takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRewind {
    /// The session.
    pub session_id: String,
    /// Things were put back as they were before this step.
    pub to_step: u32,
    /// Whether the workspace was rewound.
    pub code: bool,
    /// Whether the conversation was cut back to before the step.
    pub conversation: bool,
    /// What the rewind changed in the workspace.
    pub changes: Vec<PathChange>,
}

/// A stored rewind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindRecord {
    /// Its id.
    pub id: i64,
    /// The session.
    pub session_id: String,
    /// Things were put back as they were before this step.
    pub to_step: u32,
    /// When, in milliseconds since the Unix epoch.
    pub created: i64,
    /// Whether the workspace was rewound.
    pub code: bool,
    /// Whether the conversation was cut back.
    pub conversation: bool,
    /// What the rewind changed in the workspace.
    pub changes: Vec<PathChange>,
    /// The messages the cut removed (kept for its undo).
    pub messages: Vec<Value>,
    /// Whether it was undone.
    pub undone: bool,
}

/// Where checkpoints and rewinds are kept.
///
/// # Rules
///
/// 1. A session's steps are numbered from 1 over all its runs, in the
///    order they are recorded; a step that changed nothing is recorded too,
///    so the numbers are those `toolgate sessions show` counts.
/// 2. A rewind to step N marks every step from N on that no standing
///    rewind marks; its undo clears the marks it set and puts back the
///    messages its conversation cut removed.
#[async_trait]
pub trait CheckpointStore: Send + Sync {
    /// Records a step's checkpoint; returns its session-wide step number.
    async fn record_checkpoint(&self, checkpoint: &NewCheckpoint) -> Result<u32, StoreError>;

    /// Adds `changes` to the end of step `step`'s checkpoint (what a
    /// background process the step started wrote after it).
    async fn extend_checkpoint(
        &self,
        session_id: &str,
        step: u32,
        changes: &[PathChange],
    ) -> Result<(), StoreError>;

    /// A session's checkpoints, oldest first.
    async fn checkpoints(&self, session_id: &str) -> Result<Vec<Checkpoint>, StoreError>;

    /// Records a rewind (rule 2); with `conversation`, cuts the session's
    /// messages back to before `to_step`. Returns the rewind's id.
    async fn record_rewind(&self, rewind: &NewRewind) -> Result<i64, StoreError>;

    /// The session's last rewind that was not undone.
    async fn last_rewind(&self, session_id: &str) -> Result<Option<RewindRecord>, StoreError>;

    /// Marks rewind `id` undone (rule 2).
    async fn undo_rewind(&self, id: i64) -> Result<(), StoreError>;

    /// How many checkpoints are stored, over all sessions.
    async fn checkpoint_count(&self) -> Result<usize, StoreError>;

    /// Every content hash a checkpoint or rewind names.
    async fn referenced_hashes(&self) -> Result<HashSet<String>, StoreError>;

    /// Deletes the checkpoints recorded before `older_than` (milliseconds
    /// since the Unix epoch) and, beyond the newest `keep` steps of all
    /// sessions, the oldest. Returns how many were deleted.
    async fn prune_checkpoints(&self, older_than: i64, keep: usize) -> Result<usize, StoreError>;
}

/// The content hashes `state` names.
pub fn hash_of(state: &FileState) -> Option<&str> {
    match state {
        FileState::File { hash, .. } => hash.as_deref(),
        _ => None,
    }
}
