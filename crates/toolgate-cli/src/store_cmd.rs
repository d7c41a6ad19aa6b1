//! `toolgate store recover|migrate`: a damaged `SQLite` store set aside and
//! started afresh, and the `PostgreSQL` store's migrations.

use std::path::PathBuf;

use anyhow::anyhow;

use super::{Setup, json_text, show_data};
use crate::render;
use crate::render::{CliError, Exit};

/// `toolgate store recover`: a damaged store moved aside, at the person's
/// request, so that the next command starts a new one. A store that opens,
/// or fails for another reason, is left alone.
pub(super) fn store_recover(setup: &Setup) -> Result<Exit, CliError> {
    if let Some(url) = &setup.host.config().store.url {
        return Err(CliError::new(
            Exit::Usage,
            anyhow!("`toolgate store recover` moves a damaged SQLite file aside; this workspace's store is the PostgreSQL database {url}"),
        )
        .with_hint("repair a PostgreSQL database with its own tools (pg_dump, pg_restore)"));
    }
    let path = setup.host.store_path()?;
    let Err(error) = toolgate_store::SqliteStore::open(&path) else {
        render::note(&format!(
            "the store {} opens and is not damaged: nothing to recover",
            path.display()
        ));
        return Ok(Exit::Success);
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if error.fault(dir) != toolgate_store::Fault::Damaged {
        return Err(toolgate_host::HostError::Store {
            path,
            source: error,
        }
        .into());
    }
    let aside = toolgate_store::move_aside(&path).map_err(|source| {
        CliError::from(toolgate_host::HostError::Store {
            path: path.clone(),
            source,
        })
    })?;
    render::note(&format!(
        "moved the damaged store {} to {}; the next command starts a new, empty store",
        path.display(),
        aside.display()
    ));
    Ok(Exit::Success)
}

/// `toolgate store migrate`: the `PostgreSQL` store's schema created or
/// brought up to this toolgate's version (idempotent; several workers
/// migrating at once run each migration once).
pub(super) async fn store_migrate(setup: &Setup) -> Result<Exit, CliError> {
    let Some(options) = setup.host.postgres_options()? else {
        return Err(CliError::new(
            Exit::Usage,
            anyhow!(
                "`toolgate store migrate` upgrades a PostgreSQL store, and `store.url` is not set"
            ),
        )
        .with_hint(
            "the SQLite store upgrades itself when it opens; for PostgreSQL, set \
             `store.url: postgres://USER@HOST:PORT/DATABASE`",
        ));
    };
    let done = toolgate_store_postgres::PostgresStore::migrate(&options)
        .await
        .map_err(|source| toolgate_host::HostError::Store {
            path: PathBuf::from(options.display_url()),
            source,
        })?;
    let url = options.display_url();
    if setup.json {
        let value = serde_json::json!({
            "store": url,
            "from": done.from,
            "to": done.to,
        });
        return show_data(&json_text(&value)?);
    }
    if done.from == done.to {
        render::note(&format!(
            "the store {url} is at schema version {}: nothing to do",
            done.to
        ));
    } else {
        render::note(&format!(
            "migrated the store {url} from schema version {} to {}",
            done.from, done.to
        ));
    }
    Ok(Exit::Success)
}
