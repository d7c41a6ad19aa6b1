//! Checkpoints and rewinds of a session, for every front end: list what
//! each step changed, put the workspace (and the conversation) back as it
//! was before a step, and undo that.
//!
//! # Rules
//!
//! 1. A rewind to step N undoes the changes of every step from N on that
//!    no standing rewind has undone, newest last; without N, the last
//!    such step that changed anything.
//! 2. A path changed since by someone else (its content, type or mode is
//!    not what the last undone step left) is a conflict: listed, and left
//!    alone unless forced. A path whose earlier content was not kept is
//!    listed as lost.
//! 3. Before a path is put back, its current content is kept, so that the
//!    rewind is itself recorded with the states before and after and can
//!    be undone ([`Host::undo_rewind`]) with the same conflict check.
//! 4. A session running in another process is not rewound, nor its
//!    rewind undone: the workspace would change under its agent (rules in
//!    `claim`).
//! 5. With the conversation, the session's messages are cut back to
//!    before step N (kept with the rewind, put back by its undo), so a
//!    resumed run continues from there.

use std::path::Path;

use serde::Serialize;
use toolgate_core::{FileState, PathChange};
use toolgate_store::checkpoint::restore;
use toolgate_store::{BlobStore, Checkpoint, Conflict, NewRewind};

use crate::assembly::host::Host;
use crate::error::HostError;

/// What a rewind should put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RewindOptions {
    /// Put things back as they were before this step (session-wide
    /// number); `None`: undo the last step that changed anything.
    pub to_step: Option<u32>,
    /// Put the workspace back.
    pub code: bool,
    /// Cut the conversation back.
    pub conversation: bool,
    /// Put back paths changed since by someone else too.
    pub force: bool,
}

/// What a rewind (or its undo) did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewindOutcome {
    /// The session.
    pub session_id: String,
    /// Things are as they were before this step.
    pub to_step: u32,
    /// The rewind's id (for its undo).
    pub rewind_id: i64,
    /// What was put back: each path's state before the rewind and after.
    pub restored: Vec<PathChange>,
    /// Paths changed since by someone else, left alone (rule 2).
    pub conflicts: Vec<Conflict>,
    /// Paths whose earlier content was not kept.
    pub lost: Vec<String>,
    /// Messages removed from the conversation (or put back, by an undo).
    pub messages: usize,
}

impl Host {
    /// The session `given`, else the most recently updated one.
    pub async fn session_or_latest(&self, given: Option<&str>) -> Result<String, HostError> {
        let store = self.store()?;
        if let Some(id) = given {
            store
                .get(id)
                .await
                .map_err(|source| self.store_error(source))?;
            return Ok(id.to_owned());
        }
        let sessions = store
            .list()
            .await
            .map_err(|source| self.store_error(source))?;
        sessions
            .into_iter()
            .next()
            .map(|s| s.id)
            .ok_or_else(|| HostError::Rewind("there are no sessions in this workspace".to_owned()))
    }

    /// A session's checkpoints, oldest first.
    pub async fn checkpoints(&self, session_id: &str) -> Result<Vec<Checkpoint>, HostError> {
        let store = self.store()?;
        store
            .get(session_id)
            .await
            .map_err(|source| self.store_error(source))?;
        store
            .checkpoints(session_id)
            .await
            .map_err(|source| self.store_error(source))
    }

    /// Rewinds a session (see the module's rules).
    pub async fn rewind(
        &self,
        session_id: &str,
        options: RewindOptions,
    ) -> Result<RewindOutcome, HostError> {
        if !options.code && !options.conversation {
            return Err(HostError::Rewind(
                "nothing to rewind: choose the code, the conversation or both".to_owned(),
            ));
        }
        let store = self.store()?;
        let all = self.checkpoints(session_id).await?;
        let _hold = self.hold_for_rewind(session_id)?;
        let standing: Vec<&Checkpoint> = all.iter().filter(|c| c.rewound_by.is_none()).collect();
        let to_step = match options.to_step {
            Some(n) => {
                if !all.iter().any(|c| c.step == n) {
                    return Err(HostError::Rewind(format!(
                        "session `{session_id}` has no step {n} (it has {})",
                        match all.last() {
                            Some(last) => format!("steps 1 to {}", last.step),
                            None => "no checkpoints".to_owned(),
                        }
                    )));
                }
                n
            }
            None => standing
                .iter()
                .rev()
                .find(|c| !c.changes.is_empty())
                .map(|c| c.step)
                .ok_or_else(|| {
                    HostError::Rewind(format!(
                        "no step of session `{session_id}` changed anything that is not \
                         rewound already"
                    ))
                })?,
        };
        let mut outcome = RewindOutcome {
            session_id: session_id.to_owned(),
            to_step,
            rewind_id: 0,
            restored: Vec::new(),
            conflicts: Vec::new(),
            lost: Vec::new(),
            messages: 0,
        };
        if options.code {
            let changes: Vec<PathChange> = standing
                .iter()
                .filter(|c| c.step >= to_step)
                .flat_map(|c| c.changes.iter().cloned())
                .collect();
            self.put_back(&changes, options.force, &mut outcome)?;
        }
        let before = store
            .messages(session_id)
            .await
            .map_err(|source| self.store_error(source))?
            .len();
        outcome.rewind_id = store
            .record_rewind(&NewRewind {
                session_id: session_id.to_owned(),
                to_step,
                code: options.code,
                conversation: options.conversation,
                changes: outcome.restored.clone(),
            })
            .await
            .map_err(|source| self.store_error(source))?;
        let after = store
            .messages(session_id)
            .await
            .map_err(|source| self.store_error(source))?
            .len();
        outcome.messages = before.saturating_sub(after);
        Ok(outcome)
    }

    /// Undoes the session's last standing rewind: the paths it put back
    /// return to their state before it (with the conflict check), and the
    /// messages it cut are put back.
    pub async fn undo_rewind(
        &self,
        session_id: &str,
        force: bool,
    ) -> Result<RewindOutcome, HostError> {
        let store = self.store()?;
        let rewind = store
            .last_rewind(session_id)
            .await
            .map_err(|source| self.store_error(source))?
            .ok_or_else(|| {
                HostError::Rewind(format!("session `{session_id}` has no rewind to undo"))
            })?;
        let _hold = self.hold_for_rewind(session_id)?;
        let mut outcome = RewindOutcome {
            session_id: session_id.to_owned(),
            to_step: rewind.to_step,
            rewind_id: rewind.id,
            restored: Vec::new(),
            conflicts: Vec::new(),
            lost: Vec::new(),
            messages: rewind.messages.len(),
        };
        self.put_back(&rewind.changes, force, &mut outcome)?;
        store
            .undo_rewind(rewind.id)
            .await
            .map_err(|source| self.store_error(source))?;
        Ok(outcome)
    }

    /// Undoes `changes` in the workspace (rules 2 and 3).
    fn put_back(
        &self,
        changes: &[PathChange],
        force: bool,
        outcome: &mut RewindOutcome,
    ) -> Result<(), HostError> {
        let root = self.workspace();
        let blobs = self.blob_store()?;
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| HostError::RewindIo { what, source }
        };
        let plan = restore::plan(root, changes).map_err(io("cannot read the workspace"))?;
        let mut restores = plan.restores;
        if force {
            restores.extend(plan.conflicts.iter().map(|c| restore::Restore {
                path: c.path.clone(),
                to: to_state(changes, &c.path),
                expect: c.found.clone(),
            }));
        } else {
            outcome.conflicts = plan.conflicts;
        }
        outcome.lost = plan.lost;
        keep_current(root, &blobs, &restores)?;
        outcome.restored =
            restore::apply(root, &blobs, &restores).map_err(io("cannot put the workspace back"))?;
        Ok(())
    }

    fn store_error(&self, source: toolgate_store::StoreError) -> HostError {
        HostError::Store {
            path: self.store_location().unwrap_or_default(),
            source,
        }
    }
}

/// The state `path` goes back to: before its first change.
fn to_state(changes: &[PathChange], path: &str) -> FileState {
    changes
        .iter()
        .find(|c| c.path == path)
        .map_or(FileState::Absent, |c| c.before.clone())
}

/// Keeps the current content of every file about to be replaced (rule 3).
fn keep_current(
    root: &Path,
    blobs: &BlobStore,
    restores: &[restore::Restore],
) -> Result<(), HostError> {
    for r in restores {
        let path = root.join(&r.path);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            blobs
                .put_file(&path)
                .map_err(|source| HostError::RewindIo {
                    what: format!("cannot keep the current content of {}", r.path),
                    source,
                })?;
        }
    }
    Ok(())
}

/// The caps of `store.checkpoints`, applied when a run ends: checkpoints
/// older than `max_age_days` or beyond the newest `max_steps` are dropped;
/// then, when the kept contents pass `max_total_mb`, the contents nothing
/// names any more are removed, and while that is not enough the oldest
/// half of the checkpoints go too. What was dropped is logged; failures
/// only warn (the run's work is done).
pub(crate) async fn apply_caps(
    store: &dyn toolgate_store::Store,
    capture: &toolgate_store::WorkspaceTracker,
    caps: &crate::config::CheckpointsSection,
) {
    let day_ms: i64 = 24 * 60 * 60 * 1000;
    let age = i64::try_from(caps.max_age_days).unwrap_or(i64::MAX / day_ms);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let older_than = now.saturating_sub(age.saturating_mul(day_ms));
    let mut keep = caps.max_steps;
    let limit = caps.max_total_mb.saturating_mul(1024 * 1024);
    let blobs = capture.blobs();
    for _ in 0..8 {
        match store.prune_checkpoints(older_than, keep).await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                "{n} checkpoint(s) dropped (store.checkpoints: max_age_days {}, max_steps {keep}); \
                 those steps can no longer be rewound",
                caps.max_age_days
            ),
            Err(e) => {
                tracing::warn!(
                    "checkpoints could not be pruned: {}",
                    toolgate_core::error_chain(&e)
                );
                return;
            }
        }
        let total = match blobs.total_bytes() {
            Ok(total) => total,
            Err(e) => {
                tracing::warn!("the kept contents could not be measured: {e}");
                return;
            }
        };
        if total <= limit {
            return;
        }
        let mut named = match store.referenced_hashes().await {
            Ok(named) => named,
            Err(e) => {
                tracing::warn!(
                    "checkpoints could not be read: {}",
                    toolgate_core::error_chain(&e)
                );
                return;
            }
        };
        named.extend(capture.hashes());
        match blobs.gc(&named, std::time::Duration::from_secs(3600)) {
            Ok(report) if report.kept_bytes <= limit => return,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("unused contents could not be removed: {e}");
                return;
            }
        }
        let Ok(stored) = store.checkpoint_count().await else {
            return;
        };
        if stored == 0 {
            tracing::warn!(
                "the workspace's contents alone pass store.checkpoints.max_total_mb ({}); \
                 raise it or leave large files out",
                caps.max_total_mb
            );
            return;
        }
        keep = stored / 2;
    }
}
