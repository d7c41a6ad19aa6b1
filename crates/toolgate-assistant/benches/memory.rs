//! The memory index and `memory_search` at 100,000 entries.
//!
//! The corpus is 100 daily logs of 1,000 facts each, written the way
//! `save_memory` writes them: sentences about a user from a few hundred
//! templates, with a Zipf-distributed vocabulary of everyday words, names
//! and places, and a long tail of rare words (so that, as in real text,
//! a few words are in most entries and most words in few).
//!
//! - `index/apply`: 10,000 entries into a fresh index in one
//!   `MemoryIndex::apply` (target: at least 10,000 entries/s);
//! - `index/sync`: the memory tools' incremental sync indexing 10 new
//!   daily logs (10,000 entries) from the files;
//! - `search/index` and `search/memory_search`: queries as a model writes
//!   them (filler words and one to three telling ones, rare to common),
//!   over the 100,000 entries, on the index alone and as a whole
//!   `memory_search` call (argument decoding, the no-op sync of the 100
//!   files, the search, the rendering); target: median at most 10 ms.
//!
//! Run: `cargo bench -p toolgate-tools --bench memory`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    missing_docs,
    reason = "benchmark harness: it reports on stdout, and a failed setup aborts it"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolgate_assistant::memory::{self, MemoryConfig};
use toolgate_core::ToolContext;
use toolgate_store::{MemoryChunk, MemoryIndex, MemoryQuery, MemoryUpdate, SourceId, SqliteStore};

const DAYS: usize = 100;
const PER_DAY: usize = 1_000;

/// A small deterministic generator (xorshift), so every run sees the same
/// corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// An index in `0..n`, Zipf-distributed (rank r drawn with weight 1/r).
    fn zipf(&mut self, n: usize) -> usize {
        // Inverse of the harmonic CDF, approximated by exp(u · ln n).
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (((n as f64).ln() * u).exp() as usize)
            .saturating_sub(1)
            .min(n - 1)
    }
}

const SUBJECTS: &[&str] = &[
    "The user",
    "The user's sister",
    "The user's brother",
    "The user's partner",
    "The user's mother",
    "The user's father",
    "The user's manager",
    "The user's friend {name}",
    "{name}",
    "The team",
];
const VERBS: &[&str] = &[
    "likes",
    "prefers",
    "dislikes",
    "wants to try",
    "is learning",
    "bought",
    "recommended",
    "is allergic to",
    "visited",
    "is planning",
    "finished",
    "works on",
    "talked about",
    "lost",
    "booked",
];
const NOUNS: &[&str] = &[
    "coffee",
    "tea",
    "running",
    "the piano",
    "Spanish",
    "a new bike",
    "sushi",
    "the marathon",
    "a trip",
    "the garden",
    "a book",
    "the project",
    "the meeting",
    "a concert",
    "yoga",
    "the dentist",
    "a flat",
    "the car",
    "a laptop",
    "jazz",
    "chess",
    "climbing",
    "a course",
    "the budget",
    "a gift",
    "the report",
    "a recipe",
    "the kids",
    "a dog",
    "a cat",
];
const NAMES: &[&str] = &[
    "Ana", "Lucía", "Marco", "Sofía", "Tomás", "Elena", "Pablo", "Irene", "Diego", "Clara", "Hugo",
    "Julia", "Mateo", "Valeria", "Bruno", "Carmen", "Nicolás", "Paula", "Andrés", "Laura",
];
const PLACES: &[&str] = &[
    "Valencia",
    "Madrid",
    "Buenos Aires",
    "Lisbon",
    "Berlin",
    "Kyoto",
    "Palermo",
    "Rosario",
    "Bilbao",
    "Porto",
    "Montevideo",
    "Sevilla",
    "Córdoba",
    "Granada",
    "Mendoza",
];
const TAILS: &[&str] = &[
    "in {place}",
    "with {name}",
    "every {day}",
    "since {year}",
    "for {name}'s birthday",
    "after work",
    "on weekends",
    "near {place}",
    "because of {rare}",
    "called {rare}",
];
const DAYS_OF_WEEK: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// A rare word from a long tail of 50,000 made-up ones.
fn rare(rng: &mut Rng) -> String {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ra", "te", "su", "no", "pe", "vi", "da", "ro", "ne", "li", "to", "ba",
        "ze", "fa", "qu", "xi", "wo",
    ];
    let mut id = rng.zipf(50_000);
    let mut word = String::new();
    for _ in 0..3 {
        word.push_str(SYLLABLES[id % SYLLABLES.len()]);
        id /= SYLLABLES.len();
    }
    word.push_str(SYLLABLES[id % SYLLABLES.len()]);
    word
}

fn fill(template: &str, rng: &mut Rng) -> String {
    let mut out = template.to_owned();
    while let Some(at) = out.find('{') {
        let end = out[at..].find('}').unwrap() + at;
        let value = match &out[at + 1..end] {
            "name" => NAMES[rng.zipf(NAMES.len())].to_owned(),
            "place" => PLACES[rng.zipf(PLACES.len())].to_owned(),
            "day" => DAYS_OF_WEEK[rng.below(DAYS_OF_WEEK.len())].to_owned(),
            "year" => (2000 + rng.below(26)).to_string(),
            _ => rare(rng),
        };
        out.replace_range(at..=end, &value);
    }
    out
}

/// One fact.
fn fact(rng: &mut Rng) -> String {
    let mut text = format!(
        "{} {} {}",
        fill(SUBJECTS[rng.zipf(SUBJECTS.len())], rng),
        VERBS[rng.zipf(VERBS.len())],
        NOUNS[rng.zipf(NOUNS.len())],
    );
    for _ in 0..=rng.below(2) {
        text.push(' ');
        text.push_str(&fill(TAILS[rng.below(TAILS.len())], rng));
    }
    text.push('.');
    text
}

/// The daily logs: `(file name, facts)`.
fn corpus(days: usize) -> Vec<(String, Vec<String>)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..days)
        .map(|d| {
            let name = format!("2024-{:02}-{:02}.md", 1 + d / 28, 1 + d % 28);
            (name, (0..PER_DAY).map(|_| fact(&mut rng)).collect())
        })
        .collect()
}

fn write_logs(dir: &Path, logs: &[(String, Vec<String>)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, facts) in logs {
        let mut text = format!("# {}\n\n", name.trim_end_matches(".md"));
        for (i, fact) in facts.iter().enumerate() {
            writeln!(text, "- {:02}:{:02} {fact}", 8 + i / 60 % 12, i % 60).unwrap();
        }
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn updates(logs: &[(String, Vec<String>)]) -> Vec<MemoryUpdate> {
    logs.iter()
        .map(|(name, facts)| MemoryUpdate::Replace {
            source: SourceId::new("file", name.clone()),
            fingerprint: "bench".into(),
            chunks: facts
                .iter()
                .enumerate()
                .map(|(i, f)| MemoryChunk::new(i as u64 + 3, f.clone()))
                .collect(),
        })
        .collect()
}

/// Queries as a small model writes them.
const QUERIES: &[&str] = &[
    "what does the user's sister like",
    "is the user allergic to anything",
    "trip to Kyoto",
    "who is Bruno",
    "what did the user book in Mendoza",
    "kalomira",
    "the user's friend Carmen birthday",
    "when does the user go running",
    "what instrument is the user learning, the piano?",
    "did the user buy a laptop or a new bike",
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn index(c: &mut Criterion) {
    let rt = runtime();
    let logs = corpus(10);
    let entries = (logs.len() * PER_DAY) as u64;

    let mut group = c.benchmark_group("index");
    group.sample_size(10);
    group.throughput(Throughput::Elements(entries));
    group.bench_function("apply", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
                (dir, store, updates(&logs))
            },
            |(dir, store, updates)| {
                rt.block_on(store.apply(updates)).unwrap();
                (dir, store)
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("sync", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                write_logs(&dir.path().join("memory"), &logs);
                let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
                (dir, store)
            },
            |(dir, store)| {
                let tools = memory::tools(
                    &MemoryConfig::default(),
                    dir.path().join("memory"),
                    store.clone(),
                    None,
                );
                let search = tools.iter().find(|t| t.name() == "memory_search").unwrap();
                let result = rt.block_on(
                    search.execute(json!({"query": "warm up"}), &ToolContext::new("bench")),
                );
                assert!(result.success, "{result:?}");
                (dir, store)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let logs = corpus(DAYS);
    write_logs(&dir.path().join("memory"), &logs);
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    let tools = memory::tools(
        &MemoryConfig::default(),
        dir.path().join("memory"),
        store.clone(),
        None,
    );
    let tool = tools
        .iter()
        .find(|t| t.name() == "memory_search")
        .unwrap()
        .clone();
    let started = Instant::now();
    let first = rt.block_on(tool.execute(json!({"query": "warm up"}), &ToolContext::new("b")));
    assert!(first.success, "{first:?}");
    println!(
        "first memory_search indexed {} entries in {:.2?}",
        DAYS * PER_DAY,
        started.elapsed()
    );
    // The cost of any store call (a hand-off to the blocking pool and back),
    // then each query's median over 21 runs, and its best result.
    let mut times: Vec<Duration> = (0..21)
        .map(|_| {
            let started = Instant::now();
            let source = SourceId::new("file", "2024-01-01.md");
            black_box(rt.block_on(store.fingerprint(&source)).unwrap());
            started.elapsed()
        })
        .collect();
    times.sort();
    println!("{:>9.2?}  (one trivial store call)", times[10]);
    for query in QUERIES {
        let mut times: Vec<Duration> = (0..21)
            .map(|_| {
                let started = Instant::now();
                black_box(
                    rt.block_on(store.search(&MemoryQuery::new(*query)))
                        .unwrap(),
                );
                started.elapsed()
            })
            .collect();
        times.sort();
        let result = rt.block_on(tool.execute(json!({"query": query}), &ToolContext::new("b")));
        let first_line = result.output.lines().nth(1).unwrap_or("(no results)");
        println!("{:>9.2?}  {query:?} -> {first_line}", times[10]);
    }

    let mut group = c.benchmark_group("search");
    group.measurement_time(Duration::from_secs(5));
    let mut i = 0;
    group.bench_function("index", |b| {
        b.iter(|| {
            i += 1;
            let query = MemoryQuery::new(QUERIES[i % QUERIES.len()]);
            black_box(rt.block_on(store.search(&query)).unwrap())
        });
    });
    group.bench_function("memory_search", |b| {
        b.iter(|| {
            i += 1;
            let args = json!({"query": QUERIES[i % QUERIES.len()]});
            let result = rt.block_on(tool.execute(args, &ToolContext::new("b")));
            black_box(result)
        });
    });
    group.finish();
}

criterion_group!(benches, index, search);
criterion_main!(benches);
