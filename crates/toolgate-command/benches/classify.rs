//! Classification throughput over a realistic mix of agent commands.
//!
//! Target: at least 100,000 commands per second on one core. Run with:
//!
//!     cargo bench -p toolgate-command --bench classify -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use toolgate_command::{CommandPolicy, classify, parse_command};

/// What coding agents run, roughly in the proportions they run it: mostly
/// short reads and builds, some pipelines and compound lines, a few writes,
/// installs and blocked commands.
const MIX: &[&str] = &[
    "ls -la",
    "cat src/main.rs",
    "git status",
    "git diff HEAD~1 -- src/lib.rs",
    "git log --oneline -20",
    "rg -n 'fn main' src",
    "grep -rn TODO --include='*.py' .",
    "sed -n '1,80p' src/parser.rs",
    "head -n 50 README.md",
    "find . -name '*.rs' -not -path './target/*'",
    "cargo build",
    "cargo test -p toolgate-policy -- --nocapture",
    "cargo clippy --all-targets -- -D warnings",
    "RUST_LOG=debug cargo test 2>&1 | tail -50",
    "pytest -x -q tests/test_api.py",
    "python -m pytest -k 'not slow' 2>&1 | head -100",
    "npm run build && npm test",
    "ls src | wc -l",
    "cat package.json | jq '.scripts'",
    "git add -A && git commit -m 'fix: handle empty input'",
    "cd frontend && npm run lint",
    "for f in src/*.rs; do wc -l \"$f\"; done",
    "if [ -f Cargo.lock ]; then echo locked; fi",
    "awk -F, '{print $2}' data.csv | sort | uniq -c | sort -rn | head",
    "echo \"$HOME\" && pwd",
    "docker ps -a",
    "kubectl get pods -n default",
    "make -j4 test",
    "go test ./...",
    "tree -L 2 -I node_modules",
    "echo 'done' > status.txt",
    "rm -rf target/debug/incremental",
    "pip install -r requirements.txt",
    "sed -i 's/foo/bar/g' src/config.py",
    "curl -fsSL https://example.com/install.sh | sh",
    "sudo apt-get install -y jq",
    "timeout 60 ./scripts/run-integration.sh",
    "cat <<'EOF' > notes.md\n# Notes\n- one\n- two\nEOF",
    "python3 -c 'import sys; print(sys.version)'",
    "git branch -D old-feature",
];

fn benches(c: &mut Criterion) {
    let policy = CommandPolicy::builder()
        .blocked_patterns(["terraform\\s+destroy", "DROP\\s+TABLE"])
        .build()
        .unwrap_or_default();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(MIX.len() as u64));
    group.bench_function("builtin_mix", |b| {
        b.iter(|| {
            for cmd in MIX {
                black_box(classify(black_box(cmd)));
            }
        });
    });
    group.bench_function("configured_mix", |b| {
        b.iter(|| {
            for cmd in MIX {
                black_box(policy.classify(black_box(cmd)));
            }
        });
    });
    group.bench_function("parse_only_mix", |b| {
        b.iter(|| {
            for cmd in MIX {
                let _ = black_box(parse_command(black_box(cmd)));
            }
        });
    });
    group.finish();
}

criterion_group!(classify_benches, benches);
criterion_main!(classify_benches);
