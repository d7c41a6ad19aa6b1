//! How many audit entries a second the `AuditWriter` sustains into `SQLite`.
//!
//! ```text
//! cargo run --release -p toolgate-store --example audit_throughput [ENTRIES]
//! ```
//!
//! Records ENTRIES (default 200 000) entries as fast as one thread can, then
//! flushes, and prints the caller's cost per `record` and the rate from the
//! first `record` until everything is committed. The queue is made large
//! enough to hold them all, so nothing is dropped and the rate is the
//! writer's.

#![allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "an example program that reports rates on stdout"
)]

use std::time::Instant;

use serde_json::json;
use toolgate_store::{AuditEntry, AuditWriter, SqliteStore};

fn entry(i: usize) -> AuditEntry {
    AuditEntry {
        ts: format!("2026-01-01T00:00:00.{i:06}Z"),
        call_id: format!("call-{i}"),
        session_id: Some("s1".to_owned()),
        client: None,
        tool: ["read_file", "search", "list_dir"][i % 3].to_owned(),
        args_sha256: format!("{i:064x}"),
        decision: "allowed".to_owned(),
        success: true,
        duration_us: 42,
        error: None,
        effects: json!({"reads": [format!("src/file{}.rs", i % 100)]}),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = std::env::args().nth(1).map_or(Ok(200_000), |n| n.parse())?;
    let dir = tempfile::tempdir()?;
    let store = SqliteStore::open(dir.path().join("toolgate.db"))?;
    let writer = AuditWriter::builder(std::sync::Arc::new(SqliteStore::open(store.path())?))
        .capacity(count + 1)
        .build()?;
    let entries: Vec<AuditEntry> = (0..count).map(entry).collect();

    let start = Instant::now();
    for e in entries {
        writer.record(e);
    }
    let queued = start.elapsed();
    writer.flush().await?;
    let done = start.elapsed();

    println!(
        "{count} entries: record() {:.0} ns each on the caller; all committed after {:.2?}: {:.0} entries/s",
        queued.as_secs_f64() * 1e9 / count as f64,
        done,
        count as f64 / done.as_secs_f64()
    );
    Ok(())
}
