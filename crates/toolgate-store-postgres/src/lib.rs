//! The `PostgreSQL` backend: every store trait in one database that any
//! number of toolgate processes, on any number of machines, share.

use std::str::FromStr as _;
use std::time::{SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::{GenericClient, NoTls};

use toolgate_store::{AuditWriter, StoreError};

mod approvals;
mod audit;
mod checkpoints;
mod dynamic_tools;
mod limits;
mod listener;
mod memory;
mod notes;
mod rules;
mod schedules;
mod sessions;
mod tasks;
mod workers;

/// The migrations, in order: migration `i` (from 1) brings the schema to
/// version `i`. A migration is never edited once released; a change is a
/// new file.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_initial.sql"),
    include_str!("migrations/0002_approvals.sql"),
    include_str!("migrations/0003_audit_client.sql"),
    include_str!("migrations/0004_approval_session.sql"),
    include_str!("migrations/0005_rules.sql"),
    include_str!("migrations/0006_session_allows.sql"),
    include_str!("migrations/0007_client_buckets.sql"),
    include_str!("migrations/0008_run_call_id.sql"),
];

/// The schema version this build of toolgate needs in a `PostgreSQL` store
/// (the highest `version` of its `schema_migrations` table).
#[expect(
    clippy::cast_possible_wrap,
    reason = "a handful of migrations, far from i64::MAX"
)]
pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The connections a store opens at most, by default.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// An advisory lock key (`pg_advisory_xact_lock`) that serialises
/// migrations, so that two processes migrating at once do not both run a
/// migration: the second waits, then finds the work done.
const MIGRATION_LOCK: i64 = 0x746f_6f6c_6761_7465; // "toolgate"

/// Where a `PostgreSQL` store is and how to log in.
#[derive(Clone)]
pub struct PostgresOptions {
    /// `postgres://user@host:port/database` (also `?options`); a URL that
    /// holds a password is refused: give it in [`password`](Self::password).
    pub url: String,
    /// The password, from wherever the caller keeps secrets (an
    /// environment variable).
    pub password: Option<String>,
    /// The most connections the store opens.
    pub pool_size: usize,
}

impl std::fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresOptions")
            .field("url", &self.url)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("pool_size", &self.pool_size)
            .finish()
    }
}

impl PostgresOptions {
    /// The store at `url`, without a password, with the default pool.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            password: None,
            pool_size: DEFAULT_POOL_SIZE,
        }
    }

    /// The same, logging in with `password`.
    #[must_use]
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// The driver's configuration: the URL parsed, the password added.
    fn config(&self) -> Result<tokio_postgres::Config, StoreError> {
        let mut config = tokio_postgres::Config::from_str(&self.url).map_err(|e| {
            StoreError::Config(format!(
                "`{}` is not a PostgreSQL URL ({e}); write it as postgres://USER@HOST:PORT/DATABASE",
                self.url
            ))
        })?;
        if config.get_password().is_some() {
            return Err(StoreError::Config(
                "the PostgreSQL store URL holds a password; remove it from the URL and put it in an \
                 environment variable named by `store.password_env`"
                    .to_owned(),
            ));
        }
        if let Some(password) = &self.password {
            config.password(password);
        }
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        Ok(config)
    }

    /// The store as errors name it: the URL (which holds no password).
    fn name(&self) -> String {
        self.display_url()
    }

    /// The URL as messages show it: a password written in it anyway
    /// (refused when the store opens) is left out.
    pub fn display_url(&self) -> String {
        redact(&self.url)
    }
}

/// `url` without a password: `user:secret@` becomes `user@`, and a
/// `password=…` setting (in the query or a key-value string) is dropped.
fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme) = out.find("://") {
        let start = scheme + 3;
        let end = out[start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| start + i);
        if let Some(at) = out[start..end].rfind('@')
            && let Some(colon) = out[start..start + at].find(':')
        {
            out.replace_range(start + colon..start + at, "");
        }
    }
    let mut words: Vec<String> = Vec::new();
    for part in out.split_inclusive(['&', '?', ' ']) {
        let key = part.trim_start();
        if key.to_ascii_lowercase().starts_with("password=") {
            continue;
        }
        words.push(part.to_owned());
    }
    words.concat()
}

/// What [`PostgresStore::migrate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The schema version found.
    pub from: i64,
    /// The schema version now ([`PG_SCHEMA_VERSION`]).
    pub to: i64,
}

/// A store in a `PostgreSQL` database; implements every store trait, like
/// [`SqliteStore`](toolgate_store::SqliteStore), for processes on several machines
/// sharing one database.
///
/// Cloning is cheap: clones share one pool of connections (deadpool, at
/// most [`PostgresOptions::pool_size`]).
///
/// # Rules
///
/// 1. The schema is versioned: numbered migrations, recorded in a
///    `schema_migrations` table, are run by [`migrate`](Self::migrate)
///    (`toolgate store migrate`) and only by it. [`open`](Self::open)
///    checks the version and refuses an older schema
///    ([`StoreError::MigrationNeeded`], which says to run the migration)
///    and a newer one ([`StoreError::NewerDatabase`]) before anything is
///    written.
/// 2. Every write that the traits call one step is one transaction; where
///    `SQLite`'s write lock made a check-then-write safe, the `PostgreSQL`
///    store takes a row lock or an advisory transaction lock, so that two
///    workers cannot both pass the check (a dynamic tool's name, a
///    session's `updated` stamp).
/// 3. Schedules' leases are claimed by one `UPDATE … WHERE` the lease
///    expired, over rows locked `FOR UPDATE SKIP LOCKED`: two schedulers
///    claiming at once never take the same job, and neither waits for the
///    other's rows.
/// 4. Full-text search uses `tsvector` columns under GIN indexes, with the
///    `unaccent` extension (created by the first migration). Notes use
///    words as written (`simple` + `unaccent`, prefix matching); memory
///    uses English stems (`english` + `unaccent`, stop words dropped) and
///    ranks by BM25 computed in SQL with exact document frequencies —
///    `SQLite`'s index stems with Porter without stop words and estimates
///    the frequency of very common words, so the two backends give the
///    same order for ordinary queries but not the same scores to the
///    digit.
/// 5. Connections are not encrypted (no TLS): reach the database on a
///    trusted network or through a local socket.
/// 6. Every change of an approval notifies the channel
///    [`APPROVALS_CHANNEL`](toolgate_store::APPROVALS_CHANNEL) in its transaction.
///    A store that waits for approvals keeps one connection of its own
///    (outside the pool, from its first wait) listening there, and opens
///    it again when it is lost; waits also read the approval every 2
///    seconds, for the notifications lost while it was down.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    name: String,
    /// Set once the schema version was found right (rule 1).
    checked: std::sync::Arc<tokio::sync::OnceCell<()>>,
    /// What it was opened with, for the audit writer's own pool.
    options: std::sync::Arc<PostgresOptions>,
    /// The `LISTEN` connection approvals' waits are woken by (rule 6).
    listener: std::sync::Arc<listener::Listener>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.name)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the store and checks its schema version (rule 1).
    pub async fn open(options: &PostgresOptions) -> Result<Self, StoreError> {
        let store = Self::connect(options)?;
        drop(store.client().await?);
        Ok(store)
    }

    /// The store, without connecting yet: the first operation connects and
    /// checks the schema version (rule 1), and fails as
    /// [`open`](Self::open) would. For callers that cannot wait at start-up.
    pub fn connect(options: &PostgresOptions) -> Result<Self, StoreError> {
        let config = options.config()?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .build()
            .map_err(|e| StoreError::Config(format!("cannot make a connection pool: {e}")))?;
        Ok(Self {
            pool,
            name: options.name(),
            checked: std::sync::Arc::default(),
            options: std::sync::Arc::new(options.clone()),
            listener: std::sync::Arc::new(listener::Listener::new(config)),
        })
    }

    /// Refuses a schema other than this build's (rule 1).
    async fn check_version(&self, client: &Object) -> Result<(), StoreError> {
        let found = version(&***client).await?;
        match found.cmp(&PG_SCHEMA_VERSION) {
            std::cmp::Ordering::Equal => Ok(()),
            std::cmp::Ordering::Less => Err(StoreError::MigrationNeeded {
                database: self.name.clone(),
                found,
                required: PG_SCHEMA_VERSION,
            }),
            std::cmp::Ordering::Greater => Err(StoreError::NewerDatabase {
                database: self.name.clone(),
                found,
                supported: PG_SCHEMA_VERSION,
            }),
        }
    }

    /// Brings the store's schema up to [`PG_SCHEMA_VERSION`], running the
    /// migrations it lacks in one transaction (all or none), or refuses a
    /// newer schema. Two processes migrating at once run each migration
    /// once.
    pub async fn migrate(options: &PostgresOptions) -> Result<Migrated, StoreError> {
        let name = options.name();
        let config = options.config()?;
        let (mut client, connection) =
            config
                .connect(NoTls)
                .await
                .map_err(|e| StoreError::Connect {
                    database: name.clone(),
                    source: Box::new(e),
                })?;
        let driver = tokio::spawn(connection);
        let result = async {
            let tx = client.transaction().await.db()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await
                .db()?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (
                    version BIGINT PRIMARY KEY,
                    applied BIGINT NOT NULL
                 )",
            )
            .await
            .db()?;
            let from = version(&tx).await?;
            if from > PG_SCHEMA_VERSION {
                return Err(StoreError::NewerDatabase {
                    database: name.clone(),
                    found: from,
                    supported: PG_SCHEMA_VERSION,
                });
            }
            let start = usize::try_from(from).unwrap_or(0);
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(start) {
                tx.batch_execute(sql).await.db()?;
                tx.execute(
                    "INSERT INTO schema_migrations (version, applied) VALUES ($1, $2)",
                    &[&to_i64(i + 1), &now_ms()],
                )
                .await
                .db()?;
                tracing::debug!(version = i + 1, "PostgreSQL store schema migrated");
            }
            tx.commit().await.db()?;
            Ok(Migrated {
                from,
                to: PG_SCHEMA_VERSION,
            })
        }
        .await;
        drop(client);
        driver.abort();
        result
    }

    /// The store's URL.
    pub fn url(&self) -> &str {
        &self.name
    }

    /// An [`AuditWriter`] with default settings over a pool of its own to
    /// this database (its connections live on the writer's thread), so
    /// that its batches do not wait behind this store's queries.
    pub fn audit_writer(&self) -> Result<AuditWriter, StoreError> {
        let own = Self::connect(&PostgresOptions {
            pool_size: 1,
            ..(*self.options).clone()
        })?;
        AuditWriter::builder(std::sync::Arc::new(own))
            .network()
            .build()
    }

    /// A connection of the pool; the first one checks the schema version.
    async fn client(&self) -> Result<Object, StoreError> {
        let client = self.pool.get().await.map_err(|e| match e {
            deadpool_postgres::PoolError::Backend(e) => StoreError::Connect {
                database: self.name.clone(),
                source: Box::new(e),
            },
            e => StoreError::Worker(Box::new(e)),
        })?;
        self.checked
            .get_or_try_init(|| self.check_version(&client))
            .await?;
        Ok(client)
    }
}

/// Starts a transaction on a connection of the pool.
async fn begin(client: &mut Object) -> Result<tokio_postgres::Transaction<'_>, StoreError> {
    let client: &mut tokio_postgres::Client = client;
    client.transaction().await.db()
}

/// The schema version of the database `client` is connected to (0: none).
async fn version(client: &impl GenericClient) -> Result<i64, StoreError> {
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .db()?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .db()?;
    Ok(row.get(0))
}

/// A unique, increasing stamp for a write to `table` (`sessions`, `notes`,
/// `projects`): now in milliseconds, but always after the last one given,
/// so that sorting by `updated` gives the exact order of the last writes,
/// also when two writes fall in the same millisecond or two workers'
/// clocks disagree. The clock row stays locked until the transaction
/// ends, which orders the writers.
async fn stamp(client: &impl GenericClient, table: &str) -> Result<i64, StoreError> {
    let row = client
        .query_one(
            "UPDATE store_clock SET last = GREATEST(last + 1, $2) WHERE name = $1 RETURNING last",
            &[&table, &now_ms()],
        )
        .await
        .db()?;
    Ok(row.get(0))
}

/// Converts the driver's errors into [`StoreError::Database`].
trait Db<T> {
    fn db(self) -> Result<T, StoreError>;
}

impl<T> Db<T> for Result<T, tokio_postgres::Error> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(StoreError::db)
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An unsigned count as the database stores it (saturating).
fn to_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// A stored count back (negative values, never written, read as 0).
fn from_i64<T: TryFrom<i64> + Default>(n: i64) -> T {
    T::try_from(n).unwrap_or_default()
}

/// A JSON value as stored.
fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(StoreError::Json)
}

/// A stored JSON value back.
fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(StoreError::Json)
}

/// The store a host holds, whichever the backend.
impl toolgate_store::Store for PostgresStore {
    fn location(&self) -> &std::path::Path {
        std::path::Path::new(self.url())
    }

    fn audit_writer(&self) -> Result<AuditWriter, StoreError> {
        PostgresStore::audit_writer(self)
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn urls_are_shown_without_their_password() {
        for (url, shown) in [
            ("postgres://me@db:5432/x", "postgres://me@db:5432/x"),
            ("postgres://me:s3cret@db:5432/x", "postgres://me@db:5432/x"),
            (
                "postgres://me:s3cret@db/x?sslmode=disable",
                "postgres://me@db/x?sslmode=disable",
            ),
            (
                "postgres://me@db/x?password=s3cret&a=b",
                "postgres://me@db/x?a=b",
            ),
            (
                "host=db user=me password=s3cret dbname=x",
                "host=db user=me dbname=x",
            ),
        ] {
            assert_eq!(redact(url), shown, "{url}");
        }
    }
}
