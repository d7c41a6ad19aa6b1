//! The memory and persona tools through the gate (schema validation,
//! effects, execution) over real directories and a real `SQLite` store.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolgate_assistant::memory::persona::{self, PersonaConfig, persona_prompt};
use toolgate_assistant::memory::{self, MemoryConfig, NOTE_KIND, index_document};
use toolgate_core::{Effect, Registry, SchemaFormat, ToolCall, check_tool_name};
use toolgate_engine::{Execution, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_store::{NewSession, SessionStore, SqliteStore, StepRecord};

/// The session the calls are made from.
const CURRENT: &str = "s-current";

struct Fixture {
    dir: tempfile::TempDir,
    store: Arc<SqliteStore>,
    engine: ExecutionEngine,
}

impl Fixture {
    fn new() -> Self {
        Self::with(&MemoryConfig::default())
    }

    fn with(config: &MemoryConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
        let registry = Registry::new();
        let memory = memory::tools(
            config,
            dir.path().join("memory"),
            store.clone(),
            Some(store.clone()),
        );
        for tool in memory
            .into_iter()
            .chain(persona::tools(&PersonaConfig::default(), dir.path()))
        {
            registry.register_arc(tool).unwrap();
        }
        let engine = ExecutionEngine::builder(Arc::new(registry))
            .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
            .session_id(CURRENT)
            .build();
        Self { dir, store, engine }
    }

    fn memory(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    fn put(&self, name: &str, text: &str) {
        let path = self.memory().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("t", tool, args)).await
    }

    async fn ok(&self, tool: &str, args: Value) -> Execution {
        let done = self.call(tool, args.clone()).await;
        assert!(done.result.success, "{tool} {args}: {:?}", done.result);
        done
    }

    async fn fail(&self, tool: &str, args: Value) -> String {
        let done = self.call(tool, args.clone()).await;
        assert!(!done.result.success, "{tool} {args}: {:?}", done.result);
        done.result.error.unwrap_or_default()
    }

    async fn search(&self, query: &str) -> Execution {
        self.ok("memory_search", json!({"query": query, "maxResults": 3}))
            .await
    }

    /// The daily logs, by name.
    fn logs(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.memory())
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    async fn session(&self, id: &str, messages: &[(&str, &str)]) -> u32 {
        let start = self
            .store
            .begin(&NewSession {
                id: id.into(),
                agent: "build".into(),
                task: "t".into(),
            })
            .await
            .unwrap();
        self.step(id, start.run, start.stored_messages, messages)
            .await;
        start.run
    }

    async fn step(&self, id: &str, run: u32, from: usize, messages: &[(&str, &str)]) {
        self.store
            .record_step(&StepRecord {
                session_id: id.into(),
                run,
                step: 1,
                messages_from: from,
                messages: messages
                    .iter()
                    .map(|(role, text)| json!({"role": role, "content": text}))
                    .collect(),
                tool_calls: vec![],
                usage: None,
                events: Vec::new(),
            })
            .await
            .unwrap();
    }
}

/// The first result line of a search: `1. [score] place — text`.
fn first(done: &Execution) -> String {
    done.result
        .output
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

fn indexed(done: &Execution) -> (u64, u64, u64) {
    let i = &done.result.metadata["indexed"];
    (
        i["files"].as_u64().unwrap(),
        i["files_removed"].as_u64().unwrap(),
        i["sessions"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn every_tool_is_well_formed() {
    let fixture = Fixture::new();
    let registry = fixture.engine.registry();
    let names: Vec<String> = registry
        .list()
        .iter()
        .map(|e| e.spec().name.clone())
        .collect();
    assert_eq!(
        names,
        [
            "manage_goals",
            "memory_get",
            "memory_search",
            "save_memory",
            "update_identity",
            "update_soul"
        ]
    );
    for entry in registry.list() {
        let spec = entry.spec();
        assert!(check_tool_name(&spec.name).is_ok());
        assert!(spec.description.len() >= 40, "{}", spec.name);
        assert!(
            jsonschema::meta::is_valid(&spec.parameters),
            "{}",
            spec.name
        );
        assert_eq!(
            spec.parameters["additionalProperties"], false,
            "{}",
            spec.name
        );
        assert_eq!(
            spec.export(SchemaFormat::OpenAi)["function"]["name"],
            spec.name.as_str()
        );
    }
    // The seed's argument names.
    let search = registry
        .get("memory_search")
        .unwrap()
        .spec()
        .parameters
        .clone();
    assert!(search["properties"]["maxResults"].is_object(), "{search}");
    assert!(search["properties"]["minScore"].is_object(), "{search}");
    // Out-of-range arguments are refused before the tool runs.
    let error = fixture
        .fail("memory_search", json!({"query": "x", "maxResults": 0}))
        .await;
    assert!(error.contains("invalid arguments"), "{error}");
    let error = fixture
        .fail("manage_goals", json!({"action": "delete"}))
        .await;
    assert!(error.contains("invalid arguments"), "{error}");
}

#[tokio::test]
async fn save_memory_appends_to_the_daily_log_and_declares_the_write() {
    let fixture = Fixture::new();
    let first = fixture
        .ok(
            "save_memory",
            json!({"fact": "The user's dog is called Rocky."}),
        )
        .await;
    let logs = fixture.logs();
    assert_eq!(logs.len(), 1);
    let log = &logs[0];
    assert!(
        log.len() == "YYYY-MM-DD.md".len() && Path::new(log).extension().is_some_and(|e| e == "md"),
        "{log}"
    );
    assert_eq!(
        first.result.output,
        format!("Saved to memory: {log} line 3.")
    );
    let [Effect::Write { path, change }] = first.effects.list() else {
        panic!("{:?}", first.effects);
    };
    // Named by its absolute path: the memory directory is not the workspace.
    assert_eq!(Path::new(path), fixture.memory().join(log));
    assert!(change.creates);
    let second = fixture
        .ok(
            "save_memory",
            json!({"fact": "  The user prefers\nshort answers.  "}),
        )
        .await;
    assert_eq!(
        second.result.output,
        format!("Saved to memory: {log} line 4.")
    );
    let text = std::fs::read_to_string(fixture.memory().join(log)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("# {}", log.trim_end_matches(".md")));
    assert_eq!(lines[1], "");
    let is_entry = |line: &str, fact: &str| {
        let b = line.as_bytes();
        line.starts_with("- ")
            && b[2..4].iter().all(u8::is_ascii_digit)
            && b[4] == b':'
            && line[8..] == *fact
    };
    assert!(
        is_entry(lines[2], "The user's dog is called Rocky."),
        "{text}"
    );
    assert!(
        is_entry(lines[3], "The user prefers short answers."),
        "{text}"
    );
    // The declared content is what the file then held.
    let [Effect::Write { change, .. }] = second.effects.list() else {
        panic!();
    };
    assert_eq!(
        change
            .content
            .as_deref()
            .map(str::lines)
            .map(Iterator::count),
        Some(4)
    );
    assert!(!change.creates);

    // A line added by hand without a final newline stays a line of its own.
    let path = fixture.memory().join(log);
    std::fs::write(&path, format!("{text}- 23:59 Written by hand.")).unwrap();
    let third = fixture
        .ok("save_memory", json!({"fact": "The user likes jazz."}))
        .await;
    assert_eq!(
        third.result.output,
        format!("Saved to memory: {log} line 6.")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[4], "- 23:59 Written by hand.");
    assert!(is_entry(lines[5], "The user likes jazz."), "{text}");
}

#[tokio::test]
async fn secrets_and_duplicates_are_refused() {
    let fixture = Fixture::new();
    // (fact, what the refusal names, the secret part that must not echo)
    let secrets: &[(&str, &str, &str)] = &[
        (
            "The OpenAI key is sk-proj-Xa9bC3dE5fG7hJ2kL4mN6pQ8rS0tU1vW",
            "API key (sk-…)",
            "Xa9bC3dE5f",
        ),
        (
            "GitHub token ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU",
            "GitHub token",
            "1A2b3C4d5E6f",
        ),
        (
            "staging uses AKIAIOSFODNN7EXAMPLE",
            "AWS access key",
            "IOSFODNN7",
        ),
        (
            "login jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "JSON Web Token",
            "dozjgNryP4J3",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA",
            "private key",
            "b3BlbnNzaC1",
        ),
        ("wifi password: sunflower42", "a password", "sunflower42"),
        (
            "Mom's number is +54 9 11 1234-5678",
            "phone number",
            "1234-5678",
        ),
        (
            "call the plumber at (555) 123-4567",
            "phone number",
            "123-4567",
        ),
        ("the Visa is 4111 1111 1111 1111", "payment card", "4111"),
    ];
    for (fact, what, secret) in secrets {
        let error = fixture.fail("save_memory", json!({"fact": fact})).await;
        assert!(error.contains(what), "{fact}: {error}");
        assert!(
            !error.contains(secret),
            "{fact}: the refusal echoes it: {error}"
        );
    }
    assert!(fixture.logs().is_empty(), "nothing was written");

    // An earlier day's log, as the host or the user left it.
    fixture.put(
        "2024-12-31.md",
        "# 2024-12-31\n\n- 09:00 The user's sister Ana lives in Valencia.\n",
    );
    fixture
        .ok(
            "save_memory",
            json!({"fact": "The user's dog is called Rocky."}),
        )
        .await;
    // (fact, refused as a duplicate of …, or accepted)
    let cases: &[(&str, Option<&str>)] = &[
        ("The user's dog is called Rocky.", Some("already saved")),
        ("the user's dog is called ROCKY!!", Some("already saved")),
        ("The users dog is called Rocky", Some("already saved")),
        ("User's dog is called Rocky", Some("very similar")),
        (
            "The user's sister Ana lives in Valencia",
            Some("2024-12-31.md:3"),
        ),
        ("The user's dog is now called Max.", None),
        ("The user's cat is called Miso.", None),
        ("Ana, the user's sister, works as a nurse.", None),
    ];
    for (fact, refused) in cases {
        let done = fixture.call("save_memory", json!({"fact": fact})).await;
        match refused {
            Some(expected) => {
                let error = done.result.error.clone().unwrap_or_default();
                assert!(
                    !done.result.success && error.contains(expected),
                    "{fact}: {error}"
                );
            }
            None => assert!(done.result.success, "{fact}: {:?}", done.result),
        }
    }
    let error = fixture.fail("save_memory", json!({"fact": " \n "})).await;
    assert!(error.contains("empty"), "{error}");
    let error = fixture
        .fail("save_memory", json!({"fact": "x".repeat(501)}))
        .await;
    assert!(error.contains("the limit is 500"), "{error}");
}

/// Facts of a user, over three days, as `save_memory` writes them.
const DAYS: &[(&str, &[&str])] = &[
    (
        "2025-01-13.md",
        &[
            "The user's dog is a border collie called Rocky.",
            "The user is allergic to peanuts and shellfish.",
            "The user prefers answers in Spanish, short and direct.",
            "The user's sister Ana lives in Valencia and works as a nurse.",
        ],
    ),
    (
        "2025-01-14.md",
        &[
            "The user drinks green tea in the morning, never coffee after 5pm.",
            "The user's birthday is on 14 March.",
            "The user is training for the Buenos Aires marathon in October.",
            "The user works as a backend engineer at a logistics company.",
        ],
    ),
    (
        "2025-01-15.md",
        &[
            "The user's favourite band is Radiohead.",
            "The user drives a blue Toyota Corolla from 2015.",
            "The user wants to learn to play the piano this year.",
            "The user's cat Miso is twelve years old and diabetic.",
        ],
    ),
];

fn log_text(day: &str, facts: &[&str]) -> String {
    let mut text = format!("# {}\n\n", day.trim_end_matches(".md"));
    for (i, fact) in facts.iter().enumerate() {
        writeln!(text, "- 1{i}:00 {fact}").unwrap();
    }
    text
}

#[tokio::test]
async fn search_ranks_the_right_entry_first_across_logs_notes_and_sessions() {
    let fixture = Fixture::new();
    for (day, facts) in DAYS {
        fixture.put(day, &log_text(day, facts));
    }
    index_document(
        fixture.store.as_ref(),
        NOTE_KIND,
        "7",
        "v1",
        "# Trip to Japan\n\nFlights booked for April; the ryokan in Kyoto is paid.",
    )
    .await
    .unwrap();
    fixture
        .session(
            "s-old",
            &[
                ("system", "You are a helpful agent."),
                ("user", "Remind me: the quarterly report is due on Friday."),
                ("assistant", "Noted: the quarterly report is due Friday."),
            ],
        )
        .await;
    // (query, the place the first result must name)
    let cases: &[(&str, &str)] = &[
        ("what is the name of the user's dog", "2025-01-13.md:3"),
        ("is the user allergic to anything", "2025-01-13.md:4"),
        ("which language should I answer in", "2025-01-13.md:5"),
        ("where does Ana live", "2025-01-13.md:6"),
        ("coffee or tea", "2025-01-14.md:3"),
        ("when is the user's birthday", "2025-01-14.md:4"),
        ("marathon", "2025-01-14.md:5"),
        ("backend engineer", "2025-01-14.md:6"),
        ("favourite music band", "2025-01-15.md:3"),
        ("what car does the user drive", "2025-01-15.md:4"),
        ("piano", "2025-01-15.md:5"),
        ("cat health diabetic", "2025-01-15.md:6"),
        ("ryokan in Kyoto", "note 7, line 3"),
        ("japan", "note 7, line 1"),
        (
            "remind me about the quarterly report",
            "session s-old, message 1",
        ),
    ];
    for (query, place) in cases {
        let done = fixture.search(query).await;
        let line = first(&done);
        assert!(
            line.starts_with("1. [") && line.contains(&format!("] {place} — ")),
            "{query:?} -> {}",
            done.result.output
        );
    }
    // Nothing relevant: nothing shown, and the model is told what to try.
    let none = fixture.search("quantum chromodynamics").await;
    assert!(
        none.result.output.starts_with("No memories match"),
        "{}",
        none.result.output
    );
    // A file result comes with a memory_get call to read around it.
    let done = fixture.search("Rocky").await;
    assert!(
        done.result
            .output
            .ends_with(r#"memory_get, e.g. {"path": "2025-01-13.md", "from": 3}."#),
        "{}",
        done.result.output
    );
    // The system prompt of the session is not indexed.
    let done = fixture
        .ok(
            "memory_search",
            json!({"query": "helpful agent", "minScore": 0.0}),
        )
        .await;
    assert!(
        !done.result.output.contains("session"),
        "{}",
        done.result.output
    );
}

#[tokio::test]
async fn the_index_is_updated_incrementally() {
    let fixture = Fixture::new();
    for (day, facts) in DAYS {
        fixture.put(day, &log_text(day, facts));
    }
    let done = fixture.search("Rocky").await;
    assert_eq!(indexed(&done), (3, 0, 0));
    // Nothing changed: nothing read again.
    assert_eq!(indexed(&fixture.search("Rocky").await), (0, 0, 0));

    // One file changed: only it is re-indexed.
    let (day, facts) = DAYS[1];
    let mut changed: Vec<&str> = facts.to_vec();
    changed.push("The user started learning Portuguese.");
    fixture.put(day, &log_text(day, &changed));
    let done = fixture.search("Portuguese").await;
    assert_eq!(indexed(&done), (1, 0, 0));
    assert!(
        first(&done).contains("] 2025-01-14.md:7 — "),
        "{}",
        done.result.output
    );

    // Touched but unchanged: its time is remembered, its content not re-read
    // into the index.
    let file = std::fs::File::options()
        .write(true)
        .open(fixture.memory().join(DAYS[0].0))
        .unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(60))
        .unwrap();
    assert_eq!(indexed(&fixture.search("Rocky").await), (0, 0, 0));
    assert_eq!(indexed(&fixture.search("Rocky").await), (0, 0, 0));

    // A file deleted: its facts are gone from the results.
    std::fs::remove_file(fixture.memory().join(DAYS[2].0)).unwrap();
    let done = fixture.search("Radiohead").await;
    assert_eq!(indexed(&done), (0, 1, 0));
    assert!(
        done.result.output.starts_with("No memories match"),
        "{}",
        done.result.output
    );

    // Sessions: new messages are indexed once, a rewritten conversation
    // from the start.
    let run = fixture
        .session("s-a", &[("user", "The wifi router is in the hallway.")])
        .await;
    let done = fixture.search("router").await;
    assert_eq!(indexed(&done), (0, 0, 1));
    assert!(
        first(&done).contains("] session s-a, message 0 — "),
        "{}",
        done.result.output
    );
    assert_eq!(indexed(&fixture.search("router").await), (0, 0, 0));
    fixture
        .step(
            "s-a",
            run,
            1,
            &[("assistant", "The printer is in the attic.")],
        )
        .await;
    let done = fixture.search("printer attic").await;
    assert_eq!(indexed(&done), (0, 0, 1));
    assert!(
        first(&done).contains("] session s-a, message 1 — "),
        "{}",
        done.result.output
    );
    // Context compression: the conversation replaced from index 0.
    fixture
        .step(
            "s-a",
            run,
            0,
            &[("user", "Summary: the modem sits in the kitchen.")],
        )
        .await;
    let done = fixture.search("modem kitchen").await;
    assert_eq!(indexed(&done), (0, 0, 1));
    assert!(
        first(&done).contains("] session s-a, message 0 — "),
        "{}",
        done.result.output
    );
    let gone = fixture.search("printer attic").await;
    assert!(
        gone.result.output.starts_with("No memories match"),
        "{}",
        gone.result.output
    );
}

#[tokio::test]
async fn the_current_session_is_not_searched() {
    let fixture = Fixture::new();
    fixture
        .session(CURRENT, &[("user", "What is the capital of Mongolia?")])
        .await;
    fixture
        .session(
            "s-other",
            &[("user", "Ulaanbaatar is the capital of Mongolia.")],
        )
        .await;
    let done = fixture.search("capital of Mongolia").await;
    assert!(
        done.result.output.contains("session s-other"),
        "{}",
        done.result.output
    );
    assert!(
        !done.result.output.contains(CURRENT),
        "{}",
        done.result.output
    );

    // With session search switched off, no session is searched.
    let fixture = Fixture::with(&MemoryConfig {
        search_sessions: false,
        ..MemoryConfig::default()
    });
    fixture
        .session(
            "s-other",
            &[("user", "Ulaanbaatar is the capital of Mongolia.")],
        )
        .await;
    let done = fixture.search("capital of Mongolia").await;
    assert!(
        done.result.output.starts_with("No memories match"),
        "{}",
        done.result.output
    );
}

#[tokio::test]
async fn memory_get_reads_numbered_lines_inside_the_memory_directory_only() {
    let fixture = Fixture::new();
    let error = fixture
        .fail("memory_get", json!({"path": "2025-01-13.md"}))
        .await;
    assert!(error.contains("nothing has been saved"), "{error}");

    let (day, facts) = DAYS[0];
    fixture.put(day, &log_text(day, facts));
    std::fs::write(fixture.dir.path().join("outside.md"), "secret outside\n").unwrap();
    let outside_dir = fixture.dir.path().join("elsewhere");
    std::fs::create_dir(&outside_dir).unwrap();
    std::fs::write(outside_dir.join("x.md"), "secret elsewhere\n").unwrap();
    symlink(
        Path::new("../outside.md"),
        &fixture.memory().join("escape.md"),
    );
    symlink(&outside_dir, &fixture.memory().join("dir"));
    symlink(Path::new(day), &fixture.memory().join("inside.md"));

    let done = fixture
        .ok("memory_get", json!({"path": day, "from": 3, "lines": 2}))
        .await;
    assert_eq!(
        done.result.output,
        "     3\t- 10:00 The user's dog is a border collie called Rocky.\n     4\t- 11:00 The user is allergic to peanuts and shellfish.\n… 2025-01-13.md, lines 3–4 of 6; continue with from=5"
    );
    let [Effect::Read { path, .. }] = done.effects.list() else {
        panic!("{:?}", done.effects);
    };
    assert_eq!(Path::new(path), fixture.memory().join(day));
    // The `memory/` form of the docs, and a symlink that stays inside.
    for path in ["memory/2025-01-13.md", "./2025-01-13.md", "inside.md"] {
        let done = fixture.ok("memory_get", json!({"path": path})).await;
        assert!(
            done.result.output.ends_with("lines 1–6 of 6"),
            "{path}: {}",
            done.result.output
        );
    }
    // (path, what the refusal says)
    let outside = fixture.dir.path().join("outside.md");
    let cases: &[(&str, &str)] = &[
        ("../outside.md", "contains `..`"),
        ("memory/../outside.md", "contains `..`"),
        ("a/../2025-01-13.md", "contains `..`"),
        ("/etc/passwd", "absolute path"),
        (outside.to_str().unwrap(), "absolute path"),
        ("~/notes.md", "absolute path"),
        (
            "escape.md",
            "leads out of the memory directory through a symlink",
        ),
        (
            "dir/x.md",
            "leads out of the memory directory through a symlink",
        ),
        ("missing.md", "does not exist"),
    ];
    for (path, expected) in cases {
        let done = fixture.call("memory_get", json!({"path": path})).await;
        let error = done.result.error.clone().unwrap_or_default();
        assert!(
            !done.result.success && error.contains(expected),
            "{path}: {error}"
        );
        assert!(!done.result.output.contains("secret"), "{path}");
    }
    let error = fixture
        .fail("memory_get", json!({"path": day, "from": 7}))
        .await;
    assert_eq!(error, "`2025-01-13.md` has 6 lines; from=7 is past the end");
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[tokio::test]
async fn persona_files_are_written_and_feed_the_prompt() {
    let fixture = Fixture::new();
    let dir = fixture.dir.path();
    assert_eq!(persona_prompt(dir), None);

    let soul = "You are calm and precise.\nAnswer in the user's language.";
    let done = fixture.ok("update_soul", json!({"content": soul})).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("SOUL.md")).unwrap(),
        format!("{soul}\n")
    );
    let [Effect::Write { path, change }] = done.effects.list() else {
        panic!("{:?}", done.effects);
    };
    assert_eq!(
        (Path::new(path), change.creates),
        (dir.join("SOUL.md").as_path(), true)
    );

    let error = fixture.fail("update_identity", json!({})).await;
    assert!(
        error.contains("at least one of name, emoji or vibe"),
        "{error}"
    );
    fixture
        .ok("update_identity", json!({"name": "Nova", "emoji": "🦊"}))
        .await;
    fixture
        .ok("update_identity", json!({"vibe": "warm,   curious"}))
        .await;
    assert_eq!(
        std::fs::read_to_string(dir.join("IDENTITY.md")).unwrap(),
        "# Identity\n\n- **Name:** Nova\n- **Emoji:** 🦊\n- **Vibe:** warm, curious\n"
    );

    for goal in ["Learn to play the piano", "Read 12 books", "Read Dune"] {
        fixture
            .ok("manage_goals", json!({"action": "add", "goal": goal}))
            .await;
    }
    let error = fixture
        .fail(
            "manage_goals",
            json!({"action": "update", "goal": "read", "status": "x"}),
        )
        .await;
    assert!(error.contains("matches 2 open goals"), "{error}");
    fixture
        .ok(
            "manage_goals",
            json!({"action": "update", "goal": "PIANO", "status": "in progress", "priority": "high"}),
        )
        .await;
    fixture
        .ok(
            "manage_goals",
            json!({"action": "complete", "goal": "dune", "outcome": "loved it"}),
        )
        .await;
    let listed = fixture.ok("manage_goals", json!({"action": "list"})).await;
    assert!(listed.effects.is_read_only());
    assert!(
        listed.result.output.starts_with(
            "Open goals (2):\n1. [high] Learn to play the piano — status: in progress\n2. [medium] Read 12 books — status: not started\nRecently completed (1):\n- Read Dune — outcome: loved it ("
        ),
        "{}",
        listed.result.output
    );

    let prompt = persona_prompt(dir).unwrap();
    assert!(
        prompt.starts_with(
            "## Persona\n### Identity\n- Name: Nova\n- Emoji: 🦊\n- Vibe: warm, curious\n"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("### Soul\nYou are calm and precise.\nAnswer in the user's language.\n"),
        "{prompt}"
    );
    assert!(prompt.contains("### Open goals\n- [high] Learn to play the piano — status: in progress\n- [medium] Read 12 books"), "{prompt}");
    assert!(
        !prompt.contains("Dune"),
        "completed goals are left out: {prompt}"
    );

    // Writes are atomic: no temporary file is left beside the persona files.
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "md") || n.starts_with('.'))
        .collect();
    names.sort();
    assert_eq!(names, ["GOALS.md", "IDENTITY.md", "SOUL.md"]);

    // Refusals.
    let error = fixture.fail("update_soul", json!({"content": "  "})).await;
    assert!(error.contains("empty"), "{error}");
    let error = fixture
        .fail(
            "update_soul",
            json!({"content": "Use token ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU"}),
        )
        .await;
    assert!(error.contains("credential"), "{error}");
    let error = fixture
        .fail("update_soul", json!({"content": "x".repeat(8001)}))
        .await;
    assert!(error.contains("at most 8000"), "{error}");
    let error = fixture
        .fail("update_identity", json!({"emoji": "🦊".repeat(17)}))
        .await;
    assert!(error.contains("too long"), "{error}");
}

#[tokio::test]
async fn the_persona_prompt_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = String::new();
    for i in 0..2000 {
        writeln!(long, "Rule {i}: be kind.").unwrap();
    }
    std::fs::write(dir.path().join("SOUL.md"), &long).unwrap();
    let mut goals = String::from("# Goals\n\n## Active\n");
    for i in 0..200 {
        writeln!(
            goals,
            "- [ ] Goal number {i} with a long description\n  - Priority: low"
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("GOALS.md"), goals).unwrap();
    let prompt = persona_prompt(dir.path()).unwrap();
    assert!(prompt.chars().count() <= 6000, "{}", prompt.len());
    assert!(prompt.contains("Rule 0: be kind.") && prompt.contains("[…]"));
    assert!(
        prompt.contains("### Open goals\n- [low] Goal number 0"),
        "{prompt}"
    );
    assert!(!prompt.contains("Rule 1999"));

    // A symlink out of the directory is not followed.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("SOUL.md"), "stolen").unwrap();
    let dir = tempfile::tempdir().unwrap();
    symlink(&outside.path().join("SOUL.md"), &dir.path().join("SOUL.md"));
    assert_eq!(persona_prompt(dir.path()), None);
}

#[tokio::test]
async fn goals_sensitivity_follows_the_action() {
    let fixture = Fixture::new();
    let tool = fixture.engine.registry().get("manage_goals").unwrap();
    let list = tool.tool().sensitivity(&json!({"action": "list"}));
    let add = tool
        .tool()
        .sensitivity(&json!({"action": "add", "goal": "x"}));
    assert_eq!(format!("{list:?} {add:?}"), "ReadOnly Sensitive");
    let save = fixture.engine.registry().get("save_memory").unwrap();
    assert_eq!(
        format!("{:?}", save.tool().sensitivity(&json!({"fact": "x"}))),
        "Sensitive"
    );
    let search = fixture.engine.registry().get("memory_search").unwrap();
    let effects = search.tool().effects(&json!({"query": "x"})).unwrap();
    assert!(effects.list().is_empty() && !effects.is_opaque());
}

#[tokio::test]
async fn notes_written_with_the_notes_tools_are_searched_and_kept_current() {
    use toolgate_store::{NewNote, NoteStore, NoteUpdate};

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    let registry = Registry::new();
    for tool in memory::tools_with_notes(
        &MemoryConfig::default(),
        dir.path().join("memory"),
        store.clone(),
        None,
        Some(store.clone()),
    ) {
        registry.register_arc(tool).unwrap();
    }
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    let search = |query: &str| {
        let call = ToolCall::new("t", "memory_search", json!({"query": query}));
        let engine = &engine;
        async move {
            let done = engine.execute(call).await;
            assert!(done.result.success, "{:?}", done.result);
            done.result.to_model_text()
        }
    };

    let note = store
        .create_note(&NewNote {
            title: "Boat trip".into(),
            body: "The catamaran leaves Palma at nine.".into(),
        })
        .await
        .unwrap();
    let found = search("catamaran Palma").await;
    assert!(found.contains(&format!("note {}", note.id)), "{found}");

    // Changed: the new text is found, the old is not. A note's fingerprint
    // is its update time in milliseconds, so the update must land in a later
    // millisecond than the creation: wait for the clock to pass it rather
    // than sleeping a guessed amount.
    while now_millis() <= note.updated {
        std::thread::sleep(Duration::from_millis(1));
    }
    store
        .update_note(
            note.id,
            &NoteUpdate {
                body: Some("The ferry leaves Alcudia at ten.".into()),
                ..NoteUpdate::default()
            },
        )
        .await
        .unwrap();
    let found = search("ferry Alcudia").await;
    assert!(found.contains(&format!("note {}", note.id)), "{found}");
    let found = search("catamaran").await;
    assert!(!found.contains(&format!("note {}", note.id)), "{found}");

    // Deleted: gone from the index.
    store.delete_note(note.id).await.unwrap();
    let found = search("ferry Alcudia").await;
    assert!(!found.contains(&format!("note {}", note.id)), "{found}");
}

/// The wall clock in milliseconds since the Unix epoch, as the store stamps
/// notes.
fn now_millis() -> i64 {
    let since = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}
