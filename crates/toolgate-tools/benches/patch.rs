//! Benchmarks of the patch and edit engines.
//!
//! - `apply`: a 500-hunk unified diff (made by `diff -u`, hunks spread over
//!   the file) applied to a 200,000-line file, in memory; then the same with
//!   reading the two inputs and writing the result, next to GNU `patch` doing
//!   that work on the same files (`patch -s -o OUT FILE DIFF`). The ratio
//!   ours/GNU is printed (target: at most 1.5).
//! - `replace_exact` on a 10 MB text, LF and CRLF (target: at most 50 ms).
//!
//! Run: `cargo bench -p toolgate-tools --bench patch -- --warm-up-time 1 --measurement-time 3`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark harness: it reports on stdout, and a failed setup aborts it"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate_tools::{edit, patch};

const LINES: usize = 200_000;
const HUNKS: usize = 500;

/// The original and changed texts: every 400 lines one line is replaced and
/// one inserted, and every other hunk also deletes a line.
fn texts() -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    let spacing = LINES / HUNKS;
    for i in 0..LINES {
        let line = format!("line {i:06}: {}", i.wrapping_mul(2_654_435_761) % 100_000);
        writeln!(old, "{line}").unwrap();
        match i % spacing {
            200 => {
                writeln!(new, "changed {line}").unwrap();
                writeln!(new, "inserted after {i}").unwrap();
            }
            201 if (i / spacing).is_multiple_of(2) => {}
            _ => writeln!(new, "{line}").unwrap(),
        }
    }
    (old, new)
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn gnu_patch(dir: &Path) {
    let status = Command::new("patch")
        .current_dir(dir)
        .args(["-s", "-o", "gnu.out", "orig.txt", "change.diff"])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// What GNU `patch` does, in process: read both inputs, parse, apply, write.
fn ours_with_io(dir: &Path) {
    let original = std::fs::read_to_string(dir.join("orig.txt")).unwrap();
    let diff = std::fs::read_to_string(dir.join("change.diff")).unwrap();
    let parsed = patch::parse(&diff).unwrap();
    let result = patch::apply(&original, &parsed.files()[0]).unwrap();
    std::fs::write(dir.join("ours.out"), result).unwrap();
}

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn bench_patch(c: &mut Criterion) {
    if !have("diff") {
        println!("skipping the patch benchmark: `diff` is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = texts();
    std::fs::write(dir.path().join("orig.txt"), &old).unwrap();
    std::fs::write(dir.path().join("new.txt"), &new).unwrap();
    let diff = Command::new("diff")
        .current_dir(dir.path())
        .args(["-u", "orig.txt", "new.txt"])
        .output()
        .unwrap()
        .stdout;
    let diff = String::from_utf8(diff).unwrap();
    std::fs::write(dir.path().join("change.diff"), &diff).unwrap();
    let parsed = patch::parse(&diff).unwrap();
    let file = &parsed.files()[0];
    assert_eq!(file.hunks().len(), HUNKS);
    assert_eq!(patch::apply(&old, file).unwrap(), new);

    let gnu = have("patch");
    if gnu {
        gnu_patch(dir.path());
        ours_with_io(dir.path());
        let theirs = std::fs::read(dir.path().join("gnu.out")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("ours.out")).unwrap(), theirs);
        let ours = median(|| ours_with_io(dir.path()), 31);
        let in_memory = median(|| drop(black_box(patch::apply(&old, file))), 31);
        let theirs = median(|| gnu_patch(dir.path()), 31);
        println!(
            "\n{HUNKS} hunks on {LINES} lines, median of 31 runs: toolgate {:.2} ms \
             (read+parse+apply+write; apply alone {:.2} ms), GNU patch {:.2} ms; \
             ratio ours/GNU = {:.3}\n",
            ours.as_secs_f64() * 1e3,
            in_memory.as_secs_f64() * 1e3,
            theirs.as_secs_f64() * 1e3,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    } else {
        println!("GNU patch is not installed: no comparison");
    }

    let mut group = c.benchmark_group("patch");
    group.sample_size(20);
    group.bench_function("apply 500 hunks to 200k lines", |b| {
        b.iter(|| patch::apply(black_box(&old), black_box(file)).unwrap());
    });
    group.bench_function("parse 500-hunk diff", |b| {
        b.iter(|| patch::parse(black_box(&diff)).unwrap());
    });
    group.bench_function("read+parse+apply+write", |b| {
        b.iter(|| ours_with_io(dir.path()));
    });
    if gnu {
        group.bench_function("GNU patch -s -o (process)", |b| {
            b.iter(|| gnu_patch(dir.path()));
        });
    }
    group.finish();
}

fn bench_replace(c: &mut Criterion) {
    // 10 MB of code-like lines, the target unique and near the end.
    let mut lf = String::with_capacity(10 << 20);
    let mut i = 0;
    while lf.len() < 10 << 20 {
        writeln!(
            lf,
            "    let value_{i} = compute({i}, \"text\") + {};",
            i % 97
        )
        .unwrap();
        i += 1;
    }
    lf.push_str("fn target() {\n    old_body();\n}\n");
    let crlf = lf.replace('\n', "\r\n");
    let old = "fn target() {\n    old_body();\n}";
    let new = "fn target() {\n    new_body();\n}";
    let mut group = c.benchmark_group("replace_exact");
    group.sample_size(20);
    for (name, text) in [("10 MB LF", &lf), ("10 MB CRLF", &crlf)] {
        let outcome = edit::replace_exact(text, old, new, false).unwrap();
        assert_eq!(outcome.replacements, 1);
        group.bench_function(name, |b| {
            b.iter(|| edit::replace_exact(black_box(text), old, new, false).unwrap());
        });
    }
    group.bench_function("10 MB LF, not found (hint)", |b| {
        b.iter(|| {
            edit::replace_exact(black_box(&lf), "fn missing() {\n  x\n}", "y", false).unwrap_err()
        });
    });
    group.finish();
}

criterion_group!(benches, bench_patch, bench_replace);
criterion_main!(benches);
