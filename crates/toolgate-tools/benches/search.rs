//! In-process search against ripgrep, on the same corpus, in the same run.
//!
//! Each query is run as a tool call (`tool.execute`, as the gate calls it:
//! argument decoding, the walk, the search, sorting, rendering) and as an
//! `rg` process with the same ignore rules and the same matches printed
//! (its stdout read through a pipe: ripgrep stops at the first match when
//! it sees stdout is `/dev/null`). The two alternate, so that a machine
//! busy with something else slows both alike; the medians and their ratio
//! are printed.
//!
//! Not a criterion benchmark: it needs a corpus of hundreds of megabytes,
//! which `bench/search.sh` builds, and its point is the ratio to `rg`.
//!
//! ```text
//! cargo bench -p toolgate-tools --bench search -- CORPUS [RUNS]
//! ```
//!
//! Without a corpus (also `TOOLGATE_BENCH_CORPUS`) it says so and exits.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "benchmark harness"
)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_core::{Registry, ToolContext, Workspace};
use toolgate_tools::{BuiltinOptions, builtin_tools};

/// The ripgrep flags that give toolgate's ignore rules: hidden files
/// searched, `.git` never, ignore files from the root down only, applied
/// outside git repositories too.
const RG_RULES: &[&str] = &[
    "--no-config",
    "--hidden",
    "--glob",
    "!.git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-require-git",
    "--line-number",
];

struct Query {
    name: &'static str,
    tool: &'static str,
    args: Value,
    rg: &'static [&'static str],
}

fn queries() -> Vec<Query> {
    vec![
        Query {
            name: "regex, context 2",
            tool: "search_code",
            args: json!({"pattern": r"impl\s+Drop\s+for\s+\w+Guard", "context_lines": 2, "max_results": 1000}),
            rg: &["--context", "2", "-e", r"impl\s+Drop\s+for\s+\w+Guard"],
        },
        Query {
            name: "regex, no context",
            tool: "search_code",
            args: json!({"pattern": r"#\[derive\([^)]*Hash[^)]*Ord", "context_lines": 0, "max_results": 1000}),
            rg: &["-e", r"#\[derive\([^)]*Hash[^)]*Ord"],
        },
        Query {
            name: "literal",
            tool: "grep",
            args: json!({"pattern": "unwrap_or_default()", "max_results": 1000}),
            rg: &["--fixed-strings", "-e", "unwrap_or_default()"],
        },
        Query {
            name: "literal, ignore case",
            tool: "grep",
            args: json!({"pattern": "deprecated since", "case_sensitive": false, "max_results": 1000}),
            rg: &["--fixed-strings", "--ignore-case", "-e", "deprecated since"],
        },
    ]
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn run_rg(corpus: &Path, args: &[&str]) -> (Duration, usize) {
    let start = Instant::now();
    let mut child = Command::new("rg")
        .args(RG_RULES)
        .args(args)
        .arg(corpus)
        .stdout(Stdio::piped())
        .spawn()
        .expect("rg runs (install ripgrep)");
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    child.wait().unwrap();
    (start.elapsed(), out.len())
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let corpus = args
        .next()
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("TOOLGATE_BENCH_CORPUS").map(PathBuf::from));
    let Some(corpus) = corpus else {
        eprintln!(
            "search bench: no corpus given; run bench/search.sh, or pass a directory after `--`"
        );
        return;
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(15);

    let workspace = Workspace::builder(&corpus).build().unwrap();
    let registry = Registry::new();
    for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
        registry.register_arc(tool).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let context = ToolContext::new("bench");

    println!(
        "in-process search vs rg on {} ({runs} runs each, interleaved, medians)",
        corpus.display()
    );
    println!(
        "{:<22} {:>9} {:>9} {:>7} {:>8}",
        "query", "toolgate", "rg", "ratio", "matches"
    );
    for query in queries() {
        let entry = registry.get(query.tool).unwrap();
        let call = || {
            let start = Instant::now();
            let result = runtime.block_on(entry.tool().execute(query.args.clone(), &context));
            assert!(result.success, "{}: {:?}", query.name, result.error);
            (start.elapsed(), result)
        };
        // Warm up (page cache, allocator) and check both agree.
        let (_, result) = call();
        let matches = result.metadata["total_matches"]
            .as_u64()
            .unwrap_or_default();
        assert_eq!(
            result.metadata["truncated"], false,
            "{}: choose a query with fewer matches",
            query.name
        );
        let _ = run_rg(&corpus, query.rg);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            ours.push(call().0);
            theirs.push(run_rg(&corpus, query.rg).0);
        }
        let (ours, theirs) = (median(ours), median(theirs));
        println!(
            "{:<22} {:>7.1}ms {:>7.1}ms {:>6.2}x {:>8}",
            query.name,
            ours.as_secs_f64() * 1e3,
            theirs.as_secs_f64() * 1e3,
            ours.as_secs_f64() / theirs.as_secs_f64(),
            matches
        );
    }
}
