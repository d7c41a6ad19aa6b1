//! The throw-away `PostgreSQL` server of the tests (`.ci/pg.sh`), named by
//! `TOOLGATE_TEST_PG_URL`: its URL, clients, and databases of their own.

#![allow(dead_code, reason = "each test file uses a part")]

/// The test server's URL; without one the test fails saying how to start
/// it (never skips quietly).
pub(crate) fn server_url() -> String {
    std::env::var("TOOLGATE_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLGATE_TEST_PG_URL is not set: this test needs a PostgreSQL server. \
             Start a throw-away one with `export TOOLGATE_TEST_PG_URL=$(.ci/pg.sh start)` \
             (needs Debian's postgresql package) or run .ci/run"
        )
    })
}

/// A client of `url`, its connection driven in the background.
pub(crate) async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url} ({e}); `.ci/pg.sh start` starts one"));
    tokio::spawn(connection);
    client
}

/// Runs `sql` on the test server's own database.
pub(crate) async fn admin(sql: &str) {
    connect(&server_url())
        .await
        .batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// A new, empty database `name` on the test server (one left by an earlier
/// run is dropped first); its URL.
pub(crate) async fn new_database(name: &str) -> String {
    drop_database(name).await;
    admin(&format!("CREATE DATABASE {name}")).await;
    let server = server_url();
    let (base, _) = server.split_once('?').unwrap_or((server.as_str(), ""));
    let (root, _) = base.rsplit_once('/').unwrap_or((base, ""));
    format!("{root}/{name}")
}

/// Drops the database `name`, closing its connections.
pub(crate) async fn drop_database(name: &str) {
    admin(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
}
