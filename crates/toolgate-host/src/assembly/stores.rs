//! The store of a host: where it lives, and the gate's audit going to it.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_engine::{AuditRecord, AuditSink, SavedRules};
use toolgate_store::{AuditEntry, AuditWriter, RUNNING, SessionSummary, SqliteStore, Store};
use toolgate_store_postgres::{PostgresOptions, PostgresStore};

use crate::assembly::host::Host;
use crate::error::HostError;

/// A session's outcome for people: a `running` session whose process is
/// gone was killed (its last complete step is stored; resume continues
/// from there). `toolgate sessions` and the web UI show this.
pub fn session_outcome(summary: &SessionSummary) -> &str {
    if summary.outcome == RUNNING && summary.pid.is_some_and(|pid| !process_alive(pid)) {
        return "killed";
    }
    &summary.outcome
}

/// Whether a process with this id exists (signal 0 checks without sending).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    rustix::process::Pid::from_raw(pid)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

impl Host {
    /// The `SQLite` file of this workspace's store (rules on
    /// `StoreSection::path`): `store.path`, else
    /// `toolgate.db` under the user's data directory, keyed by workspace.
    pub fn store_path(&self) -> Result<PathBuf, HostError> {
        if let Some(path) = self.store_path.get() {
            return Ok(path.clone());
        }
        let path = if let Some(path) = &self.config().store.path {
            path.clone()
        } else {
            let data = toolgate_store::data_dir_from_env(self.env()).ok_or(HostError::NoDataDir)?;
            toolgate_store::default_path(&data, self.workspace())
        };
        Ok(self.store_path.get_or_init(|| path).clone())
    }

    /// The store: sessions, audit. Opened on first use; every later call
    /// shares it. The `SQLite` file, or the `PostgreSQL` database of
    /// `store.url` (connected on its first use, which checks its schema).
    pub fn store(&self) -> Result<Arc<dyn Store>, HostError> {
        if let Some(store) = self.store.get() {
            return Ok(Arc::clone(store));
        }
        let store = self.open_store()?;
        Ok(Arc::clone(self.store.get_or_init(|| store)))
    }

    /// Where the store is, for messages: the `SQLite` file, or the URL of
    /// `store.url`.
    pub fn store_location(&self) -> Result<PathBuf, HostError> {
        match &self.config().store.url {
            Some(url) => Ok(PathBuf::from(
                PostgresOptions::new(url.clone()).display_url(),
            )),
            None => self.store_path(),
        }
    }

    /// The `PostgreSQL` store's options (`store.url`, the password from the
    /// variable `store.password_env` names), or `None` for `SQLite`.
    pub fn postgres_options(&self) -> Result<Option<PostgresOptions>, HostError> {
        let store = &self.config().store;
        let Some(url) = &store.url else {
            return Ok(None);
        };
        let mut options = PostgresOptions::new(url.clone());
        if let Some(var) = &store.password_env {
            let password = self
                .env()
                .iter()
                .find(|(k, _)| k == var)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| HostError::Store {
                    path: PathBuf::from(options.display_url()),
                    source: toolgate_store::StoreError::Config(format!(
                        "`store.password_env` names the variable {var}, which is not set; \
                         export it with the database password"
                    )),
                })?;
            options = options.password(password);
        }
        Ok(Some(options))
    }

    /// A new connection to the store, opened (created, migrated) as
    /// [`store`](Self::store) opens it.
    fn open_store(&self) -> Result<Arc<dyn Store>, HostError> {
        if let Some(options) = self.postgres_options()? {
            return PostgresStore::connect(&options)
                .map(|store| Arc::new(store) as Arc<dyn Store>)
                .map_err(|source| HostError::Store {
                    path: PathBuf::from(options.display_url()),
                    source,
                });
        }
        if let Some(path) = &self.config().store.path {
            SqliteStore::open(path)
        } else {
            let data = toolgate_store::data_dir_from_env(self.env()).ok_or(HostError::NoDataDir)?;
            SqliteStore::open_for_workspace(&data, self.workspace())
        }
        .map(|store| Arc::new(store) as Arc<dyn Store>)
        .map_err(|source| HostError::Store {
            path: self.store_path().unwrap_or_default(),
            source,
        })
    }

    /// Where the contents checkpoints name are kept: `blobs/` beside the
    /// store's database.
    pub fn blob_store(&self) -> Result<toolgate_store::BlobStore, HostError> {
        let db = self.store_path()?;
        let dir = db
            .parent()
            .map_or_else(|| PathBuf::from("blobs"), |d| d.join("blobs"));
        Ok(toolgate_store::BlobStore::new(dir))
    }

    /// The capture of what calls change in the workspace
    /// (`store.checkpoints.enabled`), shared by every gate of this host;
    /// `None` when disabled or when there is no data directory to keep
    /// contents in. It leaves out `.git`, `.toolgate`, `toolgate.yaml`,
    /// sensitive files (no tool may change them) and toolgate's own state.
    pub fn change_capture(&self) -> Option<Arc<toolgate_store::WorkspaceTracker>> {
        self.capture
            .get_or_init(|| {
                let config = &self.config().store.checkpoints;
                if !config.enabled || self.dry_run() {
                    return None;
                }
                let blobs = match self.blob_store() {
                    Ok(blobs) => blobs,
                    Err(e) => {
                        tracing::warn!(
                            "changes are not captured and cannot be undone: {}",
                            toolgate_core::error_chain(&e)
                        );
                        return None;
                    }
                };
                let view = self.workspace_view().ok()?;
                let ignored = git_ignored(self.workspace());
                // The sandbox's placeholders for `.toolgate` and
                // `toolgate.yaml` come and go with processes; no tool may
                // change either. What git ignores (build outputs,
                // dependencies: `target/`, `node_modules/`) is not kept:
                // it is large, and rebuilt rather than undone. The walk
                // does not enter an excluded directory, so a path's
                // parents were all checked before it.
                let exclude: toolgate_store::Exclude =
                    Arc::new(move |rel: &std::path::Path, dir: bool| {
                        rel == std::path::Path::new(".toolgate")
                            || rel == std::path::Path::new("toolgate.yaml")
                            || view.sensitive_refusal(rel).is_some()
                            || view.is_private(rel)
                            || ignored
                                .as_ref()
                                .is_some_and(|g| g.matched(rel, dir).is_ignore())
                    });
                Some(Arc::new(
                    toolgate_store::WorkspaceTracker::new(self.workspace(), blobs)
                        .exclude(exclude)
                        .max_file(config.max_file_mb.saturating_mul(1024 * 1024)),
                ))
            })
            .clone()
    }

    /// The rules saved in the shared store (`store.url`), which every gate
    /// of this host applies beside `confirmation.rules`; `None` on
    /// `SQLite`, where the user's file holds saved rules. The store is not
    /// reached here: a gate that cannot read the rules asks about its calls.
    pub(crate) fn saved_rules(&self) -> Result<Option<Arc<dyn SavedRules>>, HostError> {
        if self.config().store.url.is_none() {
            return Ok(None);
        }
        if let Some(rules) = self.saved_rules.get() {
            return Ok(Some(Arc::clone(rules) as Arc<dyn SavedRules>));
        }
        let mut builder = crate::confirmation_rules_builder();
        if let Some(root) = self.workspace().to_str() {
            builder.root(root);
        }
        let rules = Arc::new(toolgate_gateway::StoreRules::new(self.store()?, builder));
        Ok(Some(
            Arc::clone(self.saved_rules.get_or_init(|| rules)) as Arc<dyn SavedRules>
        ))
    }

    /// The gate's audit into the store (`audit.store`), shared by every gate
    /// of this host; `None` when it is switched off. The writer has a
    /// connection of its own ([`Store::audit_writer`]); when nothing
    /// has opened the store yet (`toolgate call`), that connection is the
    /// only one this host opens unless something else needs the store.
    pub(crate) fn store_audit(&self) -> Result<Option<Arc<StoreAudit>>, HostError> {
        if !self.config().audit.store {
            return Ok(None);
        }
        if let Some(audit) = self.store_audit.get() {
            return Ok(Some(Arc::clone(audit)));
        }
        let writer = if let Some(store) = self.store.get() {
            store.audit_writer().map_err(|source| HostError::Store {
                path: store.location().to_owned(),
                source,
            })?
        } else {
            let store = self.open_store()?;
            let path = store.location().to_owned();
            if self.config().store.url.is_some() {
                // A server store: the writer's own pool, on its thread.
                store.audit_writer()
            } else {
                let audit: Arc<dyn toolgate_store::AuditStore> = store;
                AuditWriter::builder(audit).build()
            }
            .map_err(|source| HostError::Store { path, source })?
        };
        let audit = Arc::new(StoreAudit { writer });
        Ok(Some(Arc::clone(self.store_audit.get_or_init(|| audit))))
    }

    /// Waits until every audit record queued so far is in the store. Front
    /// ends call it before exiting; a failure is logged (the calls ran).
    pub async fn flush(&self) {
        if let Some(audit) = self.store_audit.get()
            && let Err(error) = audit.writer.flush().await
        {
            tracing::warn!(
                "the audit store lost records: {}",
                toolgate_core::error_chain(&error)
            );
        }
    }
}

/// The record's effects as the store keeps them; a connection's bytes (the
/// store has no column for them) go beside the effects, as `transfer`.
fn effects_value(record: &AuditRecord<'_>) -> serde_json::Value {
    let mut value = serde_json::to_value(&record.effects).unwrap_or_default();
    if let (Some(transfer), Some(object)) = (record.transfer, value.as_object_mut()) {
        object.insert(
            "transfer".to_owned(),
            serde_json::to_value(transfer).unwrap_or_default(),
        );
    }
    if let (false, Some(object)) = (record.files_changed.is_empty(), value.as_object_mut()) {
        object.insert(
            "files_changed".to_owned(),
            serde_json::to_value(&record.files_changed).unwrap_or_default(),
        );
    }
    value
}

/// The gate's audit records, queued for the store.
#[derive(Debug)]
pub(crate) struct StoreAudit {
    writer: AuditWriter,
}

impl AuditSink for StoreAudit {
    fn record(&self, record: &AuditRecord<'_>) {
        self.writer.record(AuditEntry {
            ts: record.ts.clone(),
            call_id: record.call_id.to_owned(),
            session_id: record.session_id.map(str::to_owned),
            client: record.client.map(str::to_owned),
            tool: record.tool.to_owned(),
            args_sha256: record.args_sha256.clone(),
            decision: record.decision.to_owned(),
            success: record.success,
            duration_us: record.duration_us,
            error: record.error.map(str::to_owned),
            effects: effects_value(record),
        });
    }

    fn settled(&self) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            if let Err(error) = self.writer.flush().await {
                tracing::error!(
                    "the audit could not be written to the store: {}",
                    toolgate_core::error_chain(&error)
                );
            }
        })
    }
}

/// toolgate's store as the [`PlanBook`](toolgate_core::PlanBook) of
/// `update_plan`, so that the coding tools keep session plans in the store
/// without compiling it. The store keeps toolgate-core's
/// [`Plan`](toolgate_core::Plan) as it is.
pub struct StorePlans {
    store: Arc<dyn toolgate_store::PlanStore>,
}

impl std::fmt::Debug for StorePlans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorePlans").finish_non_exhaustive()
    }
}

impl StorePlans {
    /// The plans of `store`.
    pub fn new(store: Arc<dyn toolgate_store::PlanStore>) -> Self {
        Self { store }
    }
}

#[async_trait::async_trait]
impl toolgate_core::PlanBook for StorePlans {
    async fn set_plan(
        &self,
        session_id: &str,
        plan: &toolgate_core::Plan,
    ) -> Result<(), toolgate_core::PlanBookError> {
        Ok(self.store.set_plan(session_id, plan).await?)
    }

    async fn plan(
        &self,
        session_id: &str,
    ) -> Result<Option<toolgate_core::Plan>, toolgate_core::PlanBookError> {
        Ok(self.store.plan(session_id).await?)
    }
}

/// The patterns of the workspace's top `.gitignore` and of
/// `.git/info/exclude`, as git reads them; `None` when there are none (or
/// they do not parse: then everything is captured). Nested `.gitignore`
/// files are not read: what they ignore is captured, which only costs
/// room.
fn git_ignored(workspace: &std::path::Path) -> Option<ignore::gitignore::Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(workspace);
    let mut any = false;
    for file in [
        workspace.join(".gitignore"),
        workspace.join(".git").join("info").join("exclude"),
    ] {
        if file.is_file() {
            if let Some(error) = builder.add(&file) {
                tracing::warn!(
                    "{}: {error}; what it ignores is captured for rewind",
                    file.display()
                );
            }
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}
