//! Memory and persona tools (seed 002 "Soul & Memory" and "Memory
//! Search"): the `memory` group — `save_memory`, `memory_search`,
//! `memory_get` — and the [`persona`] group — `update_soul`,
//! `update_identity`, `manage_goals`.
//!
//! # Where things live
//!
//! - **Daily logs**: `save_memory` appends each fact as a list item
//!   (`- HH:MM fact`) to `YYYY-MM-DD.md` in the *memory directory* the host
//!   gives [`tools`] (by default `DATA_DIR/workspaces/<ws>/memory`,
//!   or `memory.dir`). Any other `.md` file there (a `MEMORY.md` the user
//!   keeps) is memory too.
//! - **The index**: a [`MemoryIndex`] (the workspace's `SQLite` store) holds
//!   the chunks of the memory files, of the session history (through a
//!   [`SessionHistory`]) and of any other source fed to it — notes, with
//!   [`index_document`] and [`NOTE_KIND`]. `memory_search` brings it up to
//!   date incrementally before each search (only changed files and new
//!   messages are read), then ranks with BM25.
//! - **Persona files**: `SOUL.md`, `IDENTITY.md` and `GOALS.md` in the
//!   directory given to [`persona::tools`]; see [`persona`].
//!
//! Effects name the memory and persona files by their absolute paths
//! (`…/memory/2025-01-15.md`): they are toolgate's own files, outside the
//! workspace, and a relative name would be judged — and shown to hooks — as
//! a workspace file (effects rule 5).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolgate_core::ToolContext;
//! use toolgate_store::SqliteStore;
//! use toolgate_assistant::memory::{self, MemoryConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let data = tempfile::tempdir()?;
//! let store = Arc::new(SqliteStore::open(data.path().join("toolgate.db"))?);
//! let tools = memory::tools(
//!     &MemoryConfig::default(),
//!     data.path().join("memory"),
//!     store.clone(),
//!     Some(store),
//! );
//! let tool = |name: &str| tools.iter().find(|t| t.name() == name).unwrap().clone();
//! let ctx = ToolContext::new("call-1");
//!
//! let saved = tool("save_memory")
//!     .execute(json!({"fact": "The user's dog is called Rocky."}), &ctx)
//!     .await;
//! assert!(saved.success, "{saved:?}");
//! let refused = tool("save_memory")
//!     .execute(json!({"fact": "The API key is sk-proj-Xa9bC3dE5fG7hJ2kL4mN6pQ8r"}), &ctx)
//!     .await;
//! assert!(!refused.success);
//!
//! let found = tool("memory_search").execute(json!({"query": "dog name"}), &ctx).await;
//! assert!(found.output.contains("Rocky"), "{}", found.output);
//! # Ok(())
//! # }
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolgate_core::Tool;
use toolgate_store::{MemoryIndex, MemoryUpdate, SessionHistory, SourceId, StoreError};

pub use text::{MAX_CHUNK_CHARS, chunk_markdown};
pub use tools::{
    MemoryGet, MemoryGetArgs, MemorySearch, MemorySearchArgs, SaveMemory, SaveMemoryArgs,
};

mod dir;
mod goals;
pub mod persona;
mod secrets;
mod sync;
mod text;
mod tools;

/// The index kind of the memory directory's files.
pub const FILE_KIND: &str = "file";
/// The index kind of session messages.
pub const SESSION_KIND: &str = "session";
/// The index kind of notes (fed by the notes tools with
/// [`index_document`]).
pub const NOTE_KIND: &str = "note";

/// The system-prompt block of the `memory` group (seed 002's
/// `memorySearchInstructions` and the memory part of
/// `soulToolsInstructions`).
pub const INSTRUCTIONS: &str = "\
## Memory
You have a long-term memory that lasts between conversations.
- Before answering a question about the user, past work, people, dates or preferences, call memory_search first. Do not guess.
- memory_search returns numbered results with a score from 0 to 1 and where each came from (a file and line, a past session, a note). Use memory_get with that file and line to read around a result.
- When you learn a lasting fact, preference or decision, call save_memory with one short sentence, e.g. \"The user's sister Ana lives in Valencia.\"
- Never save passwords, API keys, tokens, card numbers or phone numbers; save_memory refuses them. Do not save what is already saved or what only matters right now.";

/// Settings of the `memory` group (`tools.memory` in `toolgate.yaml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    /// Whether the group's tools are offered (read by the host). Default:
    /// `false`.
    pub enabled: bool,
    /// The memory directory; by default (`None`) the host uses
    /// `DATA_DIR/workspaces/<workspace>/memory`.
    pub dir: Option<PathBuf>,
    /// The longest fact `save_memory` accepts, in characters. Default: 500.
    pub max_fact_chars: usize,
    /// How alike (0–1, the share of words in common) a new fact may be to
    /// a saved one before `save_memory` refuses it as a near-duplicate.
    /// Default: 0.8.
    pub duplicate_similarity: f64,
    /// The IANA time zone of the daily logs' dates and times; by default
    /// (`None`) the system's.
    pub timezone: Option<String>,
    /// `memory_search`'s `maxResults` when the call gives none. Default: 5.
    pub max_results: usize,
    /// `memory_search`'s `minScore` when the call gives none. Default: 0.1.
    pub min_score: f64,
    /// Whether `memory_search` searches the session history too. Default:
    /// `true`.
    pub search_sessions: bool,
    /// The most lines `memory_get` returns in one call. Default: 200.
    pub max_get_lines: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            dir: None,
            max_fact_chars: 500,
            duplicate_similarity: 0.8,
            timezone: None,
            max_results: 5,
            min_score: 0.1,
            search_sessions: true,
            max_get_lines: 200,
        }
    }
}

/// The `memory` group's tools — `save_memory`, `memory_search`,
/// `memory_get` — over the memory directory `dir` and `index`, searching
/// `sessions` too when given (and `config.search_sessions` is on).
pub fn tools(
    config: &MemoryConfig,
    dir: impl Into<PathBuf>,
    index: Arc<dyn MemoryIndex>,
    sessions: Option<Arc<dyn SessionHistory>>,
) -> Vec<Arc<dyn Tool>> {
    tools_with_notes(config, dir, index, sessions, None)
}

/// [`tools`] that also search the notes of `notes` (the `notes`
/// group's store): kept in the index incrementally before each search, by
/// each note's update time.
pub fn tools_with_notes(
    config: &MemoryConfig,
    dir: impl Into<PathBuf>,
    index: Arc<dyn MemoryIndex>,
    sessions: Option<Arc<dyn SessionHistory>>,
    notes: Option<Arc<dyn toolgate_store::NoteStore>>,
) -> Vec<Arc<dyn Tool>> {
    let memory = Arc::new(tools::Memory::new(
        config,
        dir.into(),
        index,
        sessions,
        notes,
    ));
    vec![
        Arc::new(SaveMemory::new(Arc::clone(&memory))),
        Arc::new(MemorySearch::new(Arc::clone(&memory))),
        Arc::new(MemoryGet::new(memory)),
    ]
}

/// Indexes (or re-indexes) a document for `memory_search`: `text` is cut by
/// [`chunk_markdown`] and replaces whatever the index held for the source
/// `kind` + `name`. For the notes tools: call it when a note is created or
/// changed (`kind` [`NOTE_KIND`], `name` the note's id), with a fingerprint
/// that tells versions apart (an update time, a hash), and
/// [`forget_document`] when it is deleted.
pub async fn index_document(
    index: &dyn MemoryIndex,
    kind: &str,
    name: &str,
    fingerprint: &str,
    text: &str,
) -> Result<(), StoreError> {
    index
        .apply(vec![MemoryUpdate::Replace {
            source: SourceId::new(kind, name),
            fingerprint: fingerprint.to_owned(),
            chunks: chunk_markdown(text),
        }])
        .await
        .map(drop)
}

/// Removes a document indexed with [`index_document`].
pub async fn forget_document(
    index: &dyn MemoryIndex,
    kind: &str,
    name: &str,
) -> Result<(), StoreError> {
    index
        .apply(vec![MemoryUpdate::Delete {
            source: SourceId::new(kind, name),
        }])
        .await
        .map(drop)
}

/// A part: the directory `save_memory` writes its daily logs to (the host
/// resolves `tools.memory.dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDir(pub PathBuf);

/// A part: the notes `memory_search` also searches (the `notes` group's
/// store when that group is on, else `None`).
#[derive(Clone)]
pub struct MemoryNotes(pub Option<Arc<dyn toolgate_store::NoteStore>>);

impl std::fmt::Debug for MemoryNotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("MemoryNotes")
            .field(&self.0.is_some())
            .finish()
    }
}

/// The `memory` group, `tools.memory` (off by default). Parts: [`MemoryDir`], `Arc<dyn MemoryIndex>`, [`MemoryNotes`], and `Arc<dyn SessionHistory>` with `search_sessions`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryGroup;

impl toolgate_core::Group for MemoryGroup {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("memory")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[
            "enabled",
            "max_fact_chars",
            "duplicate_similarity",
            "timezone",
            "max_results",
            "min_score",
            "search_sessions",
            "max_get_lines",
        ]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["save_memory", "memory_search", "memory_get"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<MemoryConfig>()?;
        if !section.enabled {
            return Ok(toolgate_core::ToolGroup::new(
                "memory",
                INSTRUCTIONS,
                Vec::new(),
            ));
        }
        let sessions = if section.search_sessions {
            Some(ctx.part::<Arc<dyn SessionHistory>>()?)
        } else {
            None
        };
        let tools = tools_with_notes(
            section,
            ctx.part::<MemoryDir>()?.0,
            ctx.part::<Arc<dyn MemoryIndex>>()?,
            sessions,
            ctx.part::<MemoryNotes>()?.0,
        );
        Ok(toolgate_core::ToolGroup::new("memory", INSTRUCTIONS, tools))
    }
}
