//! `save_memory`, `memory_search` and `memory_get`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult,
    TypedTool, Workspace, WorkspaceError,
};
use toolgate_store::{MemoryHit, MemoryIndex, MemoryQuery, SessionHistory, SourceId};

use super::dir::{FileDir, describe};
use super::sync::{Indexer, MAX_INDEXED_FILE, chain};
use super::text::{fact_of_line, normalize, similarity};
use super::{FILE_KIND, MemoryConfig, NOTE_KIND, SESSION_KIND, secrets};

/// The largest file whose whole new content a `save_memory` effect carries.
const EFFECT_CONTENT_MAX: u64 = 1024 * 1024;

/// Saved facts compared with a new one for near-duplicates.
const DUPLICATE_CANDIDATES: usize = 10;

/// Characters of a result's text shown by `memory_search`.
const SHOWN_CHARS: usize = 400;

/// What the three memory tools share.
pub(crate) struct Memory {
    dir: Arc<FileDir>,
    index: Arc<dyn MemoryIndex>,
    indexer: Indexer,
    config: MemoryConfig,
    search_sessions: bool,
    /// The daily logs' zone, or why the configured one is unusable.
    zone: Result<TimeZone, String>,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("dir", &self.dir.root())
            .field("indexer", &self.indexer)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Memory {
    pub(crate) fn new(
        config: &MemoryConfig,
        dir: PathBuf,
        index: Arc<dyn MemoryIndex>,
        sessions: Option<Arc<dyn SessionHistory>>,
        notes: Option<Arc<dyn toolgate_store::NoteStore>>,
    ) -> Self {
        let dir = Arc::new(FileDir::new(dir));
        let search_sessions = config.search_sessions && sessions.is_some();
        let sessions = sessions.filter(|_| config.search_sessions);
        let zone = match &config.timezone {
            None => Ok(TimeZone::system()),
            Some(name) => TimeZone::get(name).map_err(|_| {
                format!(
                    "the configured memory time zone `{name}` is unknown; fix tools.memory.timezone"
                )
            }),
        };
        Self {
            indexer: Indexer::new(Arc::clone(&dir), Arc::clone(&index), sessions, notes),
            dir,
            index,
            config: config.clone(),
            search_sessions,
            zone,
        }
    }

    /// Today's log file name and the line for `fact`, at the current time.
    fn entry(&self, fact: &str) -> Result<(String, String), String> {
        let zone = self.zone.clone()?;
        let now = Timestamp::now().to_zoned(zone);
        Ok((
            format!("{}.md", now.strftime("%Y-%m-%d")),
            format!("- {} {fact}\n", now.strftime("%H:%M")),
        ))
    }

    /// The current text of a memory file, if it exists (and is not over
    /// `max` bytes).
    fn current(workspace: Option<&Workspace>, name: &str, max: u64) -> Option<String> {
        let workspace = workspace?;
        let path = workspace.resolve(name).ok()?;
        let bytes = workspace.read_limited(&path, max).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The saved fact that `fact` repeats, if any: `(where, text, exact)`.
    async fn duplicate(&self, fact: &str, today: &str) -> Option<(String, String, bool)> {
        let normal = normalize(fact);
        let candidates: Vec<(String, String)> = match self.indexer.sync().await {
            Ok(_) => {
                let query = MemoryQuery {
                    text: fact.to_owned(),
                    limit: DUPLICATE_CANDIDATES,
                    min_score: 0.0,
                    kinds: vec![FILE_KIND.to_owned()],
                    exclude: Vec::new(),
                };
                match self.index.search(&query).await {
                    Ok(hits) => hits
                        .into_iter()
                        .map(|h| (format!("{}:{}", h.source.name, h.position), h.text))
                        .collect(),
                    Err(error) => {
                        tracing::warn!(error = %chain(&error), "memory search failed");
                        self.today_lines(today)
                    }
                }
            }
            Err(error) => {
                // Without the index, today's log at least is checked.
                tracing::warn!(%error, "memory index not updated");
                self.today_lines(today)
            }
        };
        candidates.into_iter().find_map(|(place, text)| {
            let saved = fact_of_line(&text).to_owned();
            let other = normalize(&saved);
            if other == normal {
                Some((place, saved, true))
            } else if similarity(&other, &normal) >= self.config.duplicate_similarity {
                Some((place, saved, false))
            } else {
                None
            }
        })
    }

    fn today_lines(&self, today: &str) -> Vec<(String, String)> {
        let workspace = self.dir.workspace(false).ok().flatten();
        let text = Self::current(workspace.as_ref(), today, MAX_INDEXED_FILE).unwrap_or_default();
        text.lines()
            .enumerate()
            .map(|(i, line)| (format!("{today}:{}", i + 1), line.to_owned()))
            .collect()
    }
}

/// A fact as it is stored: one line, whitespace collapsed, without a list
/// marker of its own.
fn one_line(fact: &str) -> String {
    let joined = fact.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = joined
        .strip_prefix("- ")
        .or_else(|| joined.strip_prefix("* "))
        .unwrap_or(&joined);
    trimmed.to_owned()
}

/// What a new log holds before its first fact.
fn log_header(name: &str) -> String {
    format!("# {}\n\n", name.trim_end_matches(".md"))
}

// ---------------------------------------------------------------- save_memory

/// Arguments of `save_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveMemoryArgs {
    /// One short sentence to remember, e.g. "The user's sister Ana lives in Valencia."
    pub fact: String,
}

/// `save_memory`: appends a fact to today's daily log.
///
/// # Rules
///
/// 1. The fact is stored on one line (whitespace collapsed) as
///    `- HH:MM fact` in `YYYY-MM-DD.md` of the memory directory (date and
///    time in the configured zone); a new log starts with `# YYYY-MM-DD`.
/// 2. Refused: an empty fact, one over `max_fact_chars`, and one holding a
///    credential, a payment card number or a phone number (the rules of
///    the `secrets` module) — the message says which kind, never the
///    value.
/// 3. Refused as already saved: a fact equal to a saved one once both are
///    normalised (case, accents, punctuation and spacing ignored), or
///    sharing at least `duplicate_similarity` of its words with one (the
///    saved facts compared are the index's best matches for the new one,
///    so the check costs one search, not a scan of every log).
/// 4. The line is appended with a single `O_APPEND` write, so two processes
///    saving at once both keep their line (a rewrite of the file by
///    rename would lose one of them).
#[derive(Debug, Clone)]
pub struct SaveMemory {
    memory: Arc<Memory>,
}

impl SaveMemory {
    pub(crate) fn new(memory: Arc<Memory>) -> Self {
        Self { memory }
    }
}

#[async_trait]
impl TypedTool for SaveMemory {
    type Args = SaveMemoryArgs;
    const NAME: &'static str = "save_memory";
    const DESCRIPTION: &'static str = "Save one lasting fact, preference or decision to long-term memory \
        (today's daily log). One short sentence, e.g. {\"fact\": \"The user prefers short answers in Spanish.\"}. \
        Refused: passwords, API keys, tokens, card or phone numbers, and facts already saved.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// A write of today's log, by its absolute path, with the
    /// text it will hold.
    fn effects(&self, args: &SaveMemoryArgs) -> Result<Effects, EffectsError> {
        let (name, line) = self.memory.entry(&one_line(&args.fact))?;
        let workspace = self.memory.dir.workspace(false).ok().flatten();
        let exists = workspace
            .as_ref()
            .and_then(|w| w.resolve(&name).ok().map(|p| (w, p)))
            .and_then(|(w, p)| w.metadata(&p).ok());
        let change = match exists {
            Some(meta) if meta.len() > EFFECT_CONTENT_MAX => Change::counted(1, 0, false),
            Some(_) => {
                let before = Memory::current(workspace.as_ref(), &name, EFFECT_CONTENT_MAX)
                    .unwrap_or_default();
                Change::from_texts(Some(&before), format!("{before}{line}"))
            }
            None => Change::from_texts(None, format!("{}{line}", log_header(&name))),
        };
        Ok(Effects::known([Effect::write(
            self.memory.dir.effect_path(&name),
            change,
        )]))
    }

    async fn run(&self, args: SaveMemoryArgs, _ctx: &ToolContext) -> ToolResult {
        let memory = &self.memory;
        let fact = one_line(&args.fact);
        if fact.is_empty() {
            return ToolResult::failure("the fact is empty; give one short sentence to remember");
        }
        let chars = fact.chars().count();
        if chars > memory.config.max_fact_chars {
            return ToolResult::failure(format!(
                "the fact is {chars} characters long; the limit is {}. Save one short sentence per fact",
                memory.config.max_fact_chars
            ));
        }
        if let Some(found) = secrets::find(&fact) {
            return ToolResult::failure(format!(
                "not saved: the fact contains {}. Never save passwords, API keys, tokens, card or \
                 phone numbers; save the fact without them (e.g. \"the user has a GitHub token\")",
                found.describe()
            ));
        }
        let (name, line) = match memory.entry(&fact) {
            Ok(entry) => entry,
            Err(message) => return ToolResult::failure(message),
        };
        if let Some((place, saved, exact)) = memory.duplicate(&fact, &name).await {
            let what = if exact {
                "already saved"
            } else {
                "a very similar fact is already saved"
            };
            return ToolResult::failure(format!(
                "not saved: {what} ({place}: \"{saved}\"). Save only new information; \
                 if something changed, save the new fact with its new details"
            ))
            .with_metadata("duplicate_of", place);
        }
        let dir = Arc::clone(&memory.dir);
        let written = tokio::task::spawn_blocking(move || {
            let workspace = dir.workspace(true)?.ok_or("no memory directory")?;
            let path = workspace.resolve(&name).map_err(|e| describe(&e))?;
            // What goes before the line, and the line's number when known.
            let (mut bytes, number) = match workspace.read_limited(&path, MAX_INDEXED_FILE) {
                Ok(old) if !old.is_empty() => {
                    let lines = memchr::memchr_iter(b'\n', &old).count();
                    if old.ends_with(b"\n") {
                        (Vec::new(), Some(lines + 1))
                    } else {
                        (b"\n".to_vec(), Some(lines + 2))
                    }
                }
                Ok(_) | Err(WorkspaceError::NotFound { .. }) => {
                    let header = log_header(&name);
                    let number = header.matches('\n').count() + 1;
                    (header.into_bytes(), Some(number))
                }
                // Too large to count its lines (and to index): appended to
                // all the same, since the fact was checked.
                Err(WorkspaceError::TooLarge { .. }) => (Vec::new(), None),
                Err(error) => return Err(describe(&error)),
            };
            bytes.extend_from_slice(line.as_bytes());
            workspace.append(&path, &bytes).map_err(|e| describe(&e))?;
            Ok::<_, String>((name, number))
        })
        .await;
        match written {
            Ok(Ok((name, Some(line)))) => {
                ToolResult::success(format!("Saved to memory: {name} line {line}."))
                    .with_metadata("path", name)
                    .with_metadata("line", line)
            }
            Ok(Ok((name, None))) => {
                ToolResult::success(format!("Saved to memory: {name}.")).with_metadata("path", name)
            }
            Ok(Err(message)) => ToolResult::failure(format!("not saved: {message}")),
            Err(error) => {
                ToolResult::failure(format!("not saved: the write did not finish ({error})"))
            }
        }
    }
}

// -------------------------------------------------------------- memory_search

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchArgs {
    /// What to look for: a few telling words, e.g. "sister Valencia" or "dog name".
    pub query: String,
    /// How many results at most (default 5).
    #[serde(rename = "maxResults", default)]
    #[schemars(range(min = 1, max = 50))]
    pub max_results: Option<usize>,
    /// The lowest score to show, from 0 to 1 (default 0.1).
    #[serde(rename = "minScore", default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_score: Option<f64>,
}

/// `memory_search`: the saved facts, memory files, notes and past sessions
/// that best match a query.
///
/// # Rules
///
/// 1. The index is brought up to date first (incrementally: only changed
///    files and new messages are read); if that fails, what is indexed is
///    searched and the output says so.
/// 2. Ranking is BM25 over the query's words (any of them), scores from 0
///    to 1 as [`MemoryIndex::search`] defines them; results under
///    `minScore` are left out.
/// 3. The session the call is made from is not searched (it is in the
///    model's context already, and would match its own question).
/// 4. Each result says where it is from (`file:line`, `session ID,
///    message N`, `note ID`), so `memory_get` can read around a file
///    result.
#[derive(Debug, Clone)]
pub struct MemorySearch {
    memory: Arc<Memory>,
}

impl MemorySearch {
    pub(crate) fn new(memory: Arc<Memory>) -> Self {
        Self { memory }
    }
}

/// Where a hit is, as the model reads it.
fn place(hit: &MemoryHit) -> String {
    let SourceId { kind, name } = &hit.source;
    match kind.as_str() {
        FILE_KIND => format!("{name}:{}", hit.position),
        SESSION_KIND => format!("session {name}, message {}", hit.position),
        NOTE_KIND => format!("note {name}, line {}", hit.position),
        other => format!("{other} {name}:{}", hit.position),
    }
}

fn shorten(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[async_trait]
impl TypedTool for MemorySearch {
    type Args = MemorySearchArgs;
    const NAME: &'static str = "memory_search";
    const DESCRIPTION: &'static str = "Search long-term memory: saved facts, memory files, notes and past sessions. \
        Call it before answering about the user, past work or earlier decisions. \
        Give a few telling words, e.g. {\"query\": \"sister Valencia\"}. \
        Results are best first, with a score from 0 to 1 and where they came from; \
        read around a file result with memory_get.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// None: it queries toolgate's own index (refreshing it from
    /// toolgate's own memory files and store first).
    fn effects(&self, _args: &MemorySearchArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: MemorySearchArgs, ctx: &ToolContext) -> ToolResult {
        let memory = &self.memory;
        let query_text = args.query.trim();
        if query_text.is_empty() {
            return ToolResult::failure("the query is empty; give a few words to look for");
        }
        let limit = args
            .max_results
            .unwrap_or(memory.config.max_results)
            .clamp(1, 50);
        let min_score = args
            .min_score
            .unwrap_or(memory.config.min_score)
            .clamp(0.0, 1.0);
        let sync = memory.indexer.sync().await;
        let mut query = MemoryQuery {
            text: query_text.to_owned(),
            limit,
            min_score,
            kinds: Vec::new(),
            exclude: Vec::new(),
        };
        if memory.search_sessions {
            if let Some(session) = &ctx.session_id {
                query
                    .exclude
                    .push(SourceId::new(SESSION_KIND, session.clone()));
            }
        } else {
            query.kinds = vec![FILE_KIND.to_owned(), NOTE_KIND.to_owned()];
        }
        let hits = match memory.index.search(&query).await {
            Ok(hits) => hits,
            Err(error) => {
                return ToolResult::failure(format!(
                    "the memory index cannot be searched: {}",
                    chain(&error)
                ));
            }
        };
        let mut out = String::new();
        if let Err(message) = &sync {
            let _ = writeln!(
                out,
                "Note: {message}; the results may miss the latest changes."
            );
        }
        if hits.is_empty() {
            let _ = write!(
                out,
                "No memories match \"{query_text}\" (minScore {min_score}). \
                 Try other words, or a lower minScore."
            );
        } else {
            let _ = writeln!(
                out,
                "{} result{} for \"{query_text}\" (score 0-1, best first):",
                hits.len(),
                if hits.len() == 1 { "" } else { "s" }
            );
            for (i, hit) in hits.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{}. [{:.2}] {} — {}",
                    i + 1,
                    hit.score,
                    place(hit),
                    shorten(&hit.text, SHOWN_CHARS)
                );
            }
            if hits.iter().any(|h| h.source.kind == FILE_KIND) {
                let _ = write!(
                    out,
                    "Read around a file result with memory_get, e.g. {{\"path\": \"{}\", \"from\": {}}}.",
                    hits.iter()
                        .find(|h| h.source.kind == FILE_KIND)
                        .map_or("", |h| h.source.name.as_str()),
                    hits.iter()
                        .find(|h| h.source.kind == FILE_KIND)
                        .map_or(1, |h| h.position)
                );
            }
        }
        let results: Vec<_> = hits
            .iter()
            .map(|h| {
                json!({
                    "kind": h.source.kind,
                    "name": h.source.name,
                    "position": h.position,
                    "score": h.score,
                })
            })
            .collect();
        let mut result = ToolResult::success(out.trim_end()).with_metadata("results", results);
        if let Ok(report) = sync {
            result = result.with_metadata(
                "indexed",
                json!({
                    "files": report.files_indexed,
                    "files_removed": report.files_removed,
                    "sessions": report.sessions_indexed,
                }),
            );
        }
        result
    }
}

// ----------------------------------------------------------------- memory_get

/// Arguments of `memory_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryGetArgs {
    /// A memory file as `memory_search` shows it, e.g. "2025-01-15.md".
    pub path: String,
    /// The first line to show, from 1 (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub from: Option<usize>,
    /// How many lines to show (default and most: 200).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub lines: Option<usize>,
}

/// `memory_get`: numbered lines of one memory file.
///
/// # Rules
///
/// 1. Only files inside the memory directory: absolute paths and `..` are
///    refused outright, and a symlink that leads out of the directory is
///    refused when the file is opened (the rules of the `dir` module).
/// 2. Lines are numbered from 1; at most `max_get_lines` are returned, and
///    the output says how to read on.
#[derive(Debug, Clone)]
pub struct MemoryGet {
    memory: Arc<Memory>,
}

impl MemoryGet {
    pub(crate) fn new(memory: Arc<Memory>) -> Self {
        Self { memory }
    }
}

#[async_trait]
impl TypedTool for MemoryGet {
    type Args = MemoryGetArgs;
    const NAME: &'static str = "memory_get";
    const DESCRIPTION: &'static str = "Read numbered lines of a memory file found with memory_search, \
        e.g. {\"path\": \"2025-01-15.md\", \"from\": 10, \"lines\": 20}. \
        Paths are relative to the memory directory.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// A read of the file, by its absolute path.
    fn effects(&self, args: &MemoryGetArgs) -> Result<Effects, EffectsError> {
        if args.path.contains('\0') {
            return Err(EffectsError::new("the path contains a NUL byte; remove it"));
        }
        Ok(Effects::known([Effect::read(
            self.memory.dir.effect_path(&args.path),
        )]))
    }

    async fn run(&self, args: MemoryGetArgs, _ctx: &ToolContext) -> ToolResult {
        let memory = Arc::clone(&self.memory);
        let max_lines = memory.config.max_get_lines.max(1);
        let result = tokio::task::spawn_blocking(move || {
            let Some(workspace) = memory.dir.workspace(false)? else {
                return Err("nothing has been saved to memory yet".to_owned());
            };
            let path = memory.dir.resolve(&workspace, &args.path)?;
            let shown = workspace.display(&path);
            let bytes = workspace
                .read_limited(&path, MAX_INDEXED_FILE)
                .map_err(|e| describe(&e))?;
            if bytes.contains(&0) {
                return Err(format!("`{shown}` is not a text file"));
            }
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            let total = lines.len();
            let from = args.from.unwrap_or(1).max(1);
            let count = args.lines.unwrap_or(max_lines).clamp(1, max_lines);
            if total == 0 {
                return Ok((format!("`{shown}` is empty."), shown));
            }
            if from > total {
                return Err(format!(
                    "`{shown}` has {total} lines; from={from} is past the end"
                ));
            }
            let last = (from + count - 1).min(total);
            let mut out = String::new();
            for (i, line) in lines[from - 1..last].iter().enumerate() {
                let _ = writeln!(out, "{:>6}\t{line}", from + i);
            }
            let _ = write!(out, "… {shown}, lines {from}–{last} of {total}");
            if last < total {
                let _ = write!(out, "; continue with from={}", last + 1);
            }
            Ok((out, shown))
        })
        .await;
        match result {
            Ok(Ok((text, shown))) => ToolResult::success(text).with_metadata("path", shown),
            Ok(Err(message)) => ToolResult::failure(message),
            Err(error) => {
                ToolResult::failure(format!("internal error: the read did not finish ({error})"))
            }
        }
    }
}
