//! The `notes` group (seed 003's `notes_tools`): `create_note`,
//! `list_notes`, `get_note`, `update_note`, `delete_note`, `search_notes`,
//! over a [`NoteStore`] (toolgate's own store, not the workspace).
//!
//! # Sensitivity
//!
//! DESIGN.md §5 makes writes sensitive because they change the user's
//! workspace. Notes live in toolgate's own store, outside the workspace
//! and outside anything else the user works on, so creating and changing a
//! note is `ReadOnly` for confirmation: asking the user before every note
//! the assistant takes would make the group useless, and nothing outside
//! toolgate changes. The exception is `delete_note`, which is
//! `Sensitive`: it is the one call that loses what the user asked to keep,
//! without a trace, so it asks under `confirm-sensitive`. The MCP
//! annotations stay honest either way: every tool that writes says
//! `readOnlyHint: false` (so read-only agents such as `plan` do not get
//! it), and `delete_note` says `destructiveHint: true`.
//!
//! All six declare no [`Effects`]: they touch nothing but the store.
//!
//! # Rules
//!
//! 1. A title is one line of at most `max_title_chars` characters, not
//!    blank; a body at most `max_body_chars` characters. Longer input is
//!    refused, not cut, so that nothing is lost without the model knowing.
//! 2. Notes are named by the id the store gave them (`#12`); every output
//!    shows the ids.
//! 3. `update_note` needs at least one of `title`, `body`, `append`;
//!    `append` adds a line at the end and is the way to add to a note
//!    without rewriting it.
//! 4. Search rules are [`NoteStore::search_notes`]'s: words, prefixes,
//!    case and accents ignored, notes with every word first.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};
use toolgate_store::{NewNote, Note, NoteStore, NoteUpdate, StoreError};

/// The system-prompt block for the `notes` group.
pub const INSTRUCTIONS: &str = "## Notes
- When the user asks you to note, remember or write something down, call `create_note` with a short title and the text.
- To find a note, call `search_notes` with a few key words; `list_notes` shows the newest. Then `get_note` with its id for the full text.
- To add to a note, call `update_note` with its id and `append`; use `body` only to rewrite it whole.
- Only call `delete_note` when the user asks to delete a note.
- Notes are not files: never use file tools for them.
";

/// The `tools.notes` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotesConfig {
    /// Whether the notes tools are registered. Default: false (an
    /// assistant feature: six more tools in every prompt).
    pub enabled: bool,
    /// The longest title, in characters. Default: 200.
    pub max_title_chars: usize,
    /// The longest body, in characters. Default: 20,000.
    pub max_body_chars: usize,
    /// How many notes `list_notes` and `search_notes` return when the call
    /// does not say, and the most they return. Default: 20.
    pub list_limit: usize,
}

impl Default for NotesConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_title_chars: 200,
            max_body_chars: 20_000,
            list_limit: 20,
        }
    }
}

/// The tools of the `notes` group over `store`. Empty when the group is
/// disabled.
pub fn tools(config: &NotesConfig, store: Arc<dyn NoteStore>) -> Vec<Arc<dyn Tool>> {
    if !config.enabled {
        return Vec::new();
    }
    let notes = Notes {
        store,
        config: config.clone(),
    };
    vec![
        Arc::new(CreateNote(notes.clone())),
        Arc::new(ListNotes(notes.clone())),
        Arc::new(GetNote(notes.clone())),
        Arc::new(UpdateNote(notes.clone())),
        Arc::new(DeleteNote(notes.clone())),
        Arc::new(SearchNotes(notes)),
    ]
}

/// What every notes tool holds: the store and the limits.
#[derive(Clone)]
struct Notes {
    store: Arc<dyn NoteStore>,
    config: NotesConfig,
}

impl Notes {
    fn check_title(&self, title: &str) -> Result<String, String> {
        let title = title.trim();
        if title.is_empty() {
            return Err("the title is empty; give the note a short title".into());
        }
        if title.contains('\n') {
            return Err("the title must be one line; put the rest in the body".into());
        }
        let chars = title.chars().count();
        if chars > self.config.max_title_chars {
            return Err(format!(
                "the title is {chars} characters; at most {} are allowed (put the rest in the body)",
                self.config.max_title_chars
            ));
        }
        Ok(title.to_owned())
    }

    fn check_body(&self, body: &str, what: &str) -> Result<(), String> {
        let chars = body.chars().count();
        if chars > self.config.max_body_chars {
            return Err(format!(
                "the {what} is {chars} characters; a note holds at most {}",
                self.config.max_body_chars
            ));
        }
        Ok(())
    }

    fn limit(&self, asked: Option<usize>) -> usize {
        asked
            .unwrap_or(self.config.list_limit)
            .clamp(1, self.config.list_limit.max(1))
    }
}

impl std::fmt::Debug for Notes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notes")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A store failure as the model sees it.
pub(crate) fn store_failure(error: &StoreError) -> ToolResult {
    ToolResult::failure(format!(
        "the store failed: {}",
        toolgate_core::error_chain(error)
    ))
}

/// A time stored in milliseconds, shown in UTC to the minute.
pub(crate) fn format_time(ms: i64) -> String {
    Timestamp::from_millisecond(ms).map_or_else(
        |_| ms.to_string(),
        |t| t.strftime("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

/// The first line of a body, cut to `max` characters.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    if line.chars().count() <= max {
        line.to_owned()
    } else {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    }
}

fn note_json(note: &Note) -> serde_json::Value {
    json!({"id": note.id, "title": note.title, "created": note.created, "updated": note.updated})
}

fn missing(id: i64) -> ToolResult {
    ToolResult::failure(format!(
        "there is no note #{id}; find notes with `search_notes` or `list_notes`"
    ))
}

/// Annotations of a tool that changes the store.
fn writes(destructive: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: Some(false),
        destructive_hint: Some(destructive),
        idempotent_hint: Some(idempotent),
        open_world_hint: Some(false),
        ..ToolAnnotations::default()
    }
}

/// Annotations of a tool that only reads the store.
fn reads() -> ToolAnnotations {
    ToolAnnotations {
        idempotent_hint: Some(true),
        ..ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly)
    }
}

// ------------------------------------------------------------- create_note

/// Arguments of `create_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNoteArgs {
    /// A short title, one line, e.g. `Shopping list`.
    pub title: String,
    /// The text of the note.
    #[serde(default)]
    pub body: String,
}

/// `create_note`: stores a new note.
#[derive(Debug, Clone)]
pub struct CreateNote(Notes);

#[async_trait]
impl TypedTool for CreateNote {
    type Args = CreateNoteArgs;
    const NAME: &'static str = "create_note";
    const DESCRIPTION: &'static str = "Save a new note (kept across sessions). \
        Give a short one-line `title` and the `body` text. Returns the note's id, e.g. #12.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        writes(false, false)
    }

    /// None: it writes toolgate's own store only.
    fn effects(&self, _args: &CreateNoteArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: CreateNoteArgs, _ctx: &ToolContext) -> ToolResult {
        let title = match self.0.check_title(&args.title) {
            Ok(title) => title,
            Err(message) => return ToolResult::failure(message),
        };
        if let Err(message) = self.0.check_body(&args.body, "body") {
            return ToolResult::failure(message);
        }
        let new = NewNote {
            title,
            body: args.body,
        };
        match self.0.store.create_note(&new).await {
            Ok(note) => ToolResult::success(format!("Saved note #{} \"{}\".", note.id, note.title))
                .with_metadata("note", note_json(&note)),
            Err(error) => store_failure(&error),
        }
    }
}

// -------------------------------------------------------------- list_notes

/// Arguments of `list_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNotesArgs {
    /// How many notes to show (newest first; default and maximum 20 unless
    /// configured otherwise).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// How many of the newest notes to skip, to see older ones.
    #[serde(default)]
    pub offset: usize,
}

/// `list_notes`: the most recently changed notes, with ids and a preview.
#[derive(Debug, Clone)]
pub struct ListNotes(Notes);

#[async_trait]
impl TypedTool for ListNotes {
    type Args = ListNotesArgs;
    const NAME: &'static str = "list_notes";
    const DESCRIPTION: &'static str = "List saved notes, most recently changed first: id, title, \
        date and first line. Use `offset` to see older ones, `get_note` for a whole note.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        reads()
    }

    /// None: it reads toolgate's own store only.
    fn effects(&self, _args: &ListNotesArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: ListNotesArgs, _ctx: &ToolContext) -> ToolResult {
        let limit = self.0.limit(args.limit);
        let (notes, total) = match tokio::try_join!(
            self.0.store.list_notes(limit, args.offset),
            self.0.store.count_notes()
        ) {
            Ok(found) => found,
            Err(error) => return store_failure(&error),
        };
        if notes.is_empty() {
            let text = if total == 0 {
                "No notes yet.".to_owned()
            } else {
                format!("No notes past the first {total}.")
            };
            return ToolResult::success(text).with_metadata("total", total);
        }
        let mut out = format!(
            "{total} note(s); showing {} from {}:",
            notes.len(),
            args.offset + 1
        );
        for note in &notes {
            let _ = write!(
                out,
                "\n#{} {} ({})",
                note.id,
                note.title,
                format_time(note.updated)
            );
            let first = preview(&note.body, 80);
            if !first.is_empty() {
                let _ = write!(out, " — {first}");
            }
        }
        let shown = args.offset + notes.len();
        if u64::try_from(shown).is_ok_and(|shown| shown < total) {
            let _ = write!(out, "\n(more: call again with offset {shown})");
        }
        ToolResult::success(out)
            .with_metadata("total", total)
            .with_metadata("notes", notes.iter().map(note_json).collect::<Vec<_>>())
    }
}

// ---------------------------------------------------------------- get_note

/// Arguments of `get_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetNoteArgs {
    /// The note's id, e.g. 12 for #12.
    pub id: i64,
}

/// `get_note`: one note, whole.
#[derive(Debug, Clone)]
pub struct GetNote(Notes);

#[async_trait]
impl TypedTool for GetNote {
    type Args = GetNoteArgs;
    const NAME: &'static str = "get_note";
    const DESCRIPTION: &'static str =
        "Read one saved note in full, by its id (from `list_notes` or `search_notes`).";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        reads()
    }

    /// None: it reads toolgate's own store only.
    fn effects(&self, _args: &GetNoteArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: GetNoteArgs, _ctx: &ToolContext) -> ToolResult {
        match self.0.store.note(args.id).await {
            Ok(Some(note)) => ToolResult::success(format!(
                "#{} {}\ncreated {}, updated {}\n\n{}",
                note.id,
                note.title,
                format_time(note.created),
                format_time(note.updated),
                note.body
            ))
            .with_metadata("note", note_json(&note)),
            Ok(None) => missing(args.id),
            Err(error) => store_failure(&error),
        }
    }
}

// ------------------------------------------------------------- update_note

/// Arguments of `update_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateNoteArgs {
    /// The note's id.
    pub id: i64,
    /// A new title.
    pub title: Option<String>,
    /// A new text, replacing the whole body.
    pub body: Option<String>,
    /// Text to add at the end of the body, on a new line.
    pub append: Option<String>,
}

/// `update_note`: changes a note's title or body, or adds to its body.
#[derive(Debug, Clone)]
pub struct UpdateNote(Notes);

#[async_trait]
impl TypedTool for UpdateNote {
    type Args = UpdateNoteArgs;
    const NAME: &'static str = "update_note";
    const DESCRIPTION: &'static str = "Change a saved note by id. `append` adds text at the end \
        (best for adding items); `body` replaces the whole text; `title` renames it. \
        Give at least one of them.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        writes(false, false)
    }

    /// None: it writes toolgate's own store only.
    fn effects(&self, _args: &UpdateNoteArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: UpdateNoteArgs, _ctx: &ToolContext) -> ToolResult {
        if args.title.is_none() && args.body.is_none() && args.append.is_none() {
            return ToolResult::failure(
                "nothing to change: give `append`, `body` or `title`".to_owned(),
            );
        }
        let title = match args.title.as_deref().map(|t| self.0.check_title(t)) {
            Some(Ok(title)) => Some(title),
            Some(Err(message)) => return ToolResult::failure(message),
            None => None,
        };
        // The size the body would have, checked before anything is written.
        let current = match self.0.store.note(args.id).await {
            Ok(Some(note)) => note,
            Ok(None) => return missing(args.id),
            Err(error) => return store_failure(&error),
        };
        let base = args.body.as_deref().unwrap_or(&current.body);
        let appended = args.append.as_deref().map_or(0, |a| a.chars().count() + 1);
        let chars = base.chars().count() + appended;
        if chars > self.0.config.max_body_chars {
            return ToolResult::failure(format!(
                "the note would hold {chars} characters; at most {} are allowed",
                self.0.config.max_body_chars
            ));
        }
        let update = NoteUpdate {
            title,
            body: args.body,
            append: args.append,
        };
        match self.0.store.update_note(args.id, &update).await {
            Ok(Some(note)) => ToolResult::success(format!(
                "Updated note #{} \"{}\" ({} characters).",
                note.id,
                note.title,
                note.body.chars().count()
            ))
            .with_metadata("note", note_json(&note)),
            Ok(None) => missing(args.id),
            Err(error) => store_failure(&error),
        }
    }
}

// ------------------------------------------------------------- delete_note

/// Arguments of `delete_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteNoteArgs {
    /// The note's id.
    pub id: i64,
}

/// `delete_note`: removes a note for good (sensitive: see the [module
/// docs](self)).
#[derive(Debug, Clone)]
pub struct DeleteNote(Notes);

#[async_trait]
impl TypedTool for DeleteNote {
    type Args = DeleteNoteArgs;
    const NAME: &'static str = "delete_note";
    const DESCRIPTION: &'static str =
        "Delete a saved note for good, by id. Only when the user asks to delete it.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        writes(true, true)
    }

    /// None: it writes toolgate's own store only.
    fn effects(&self, _args: &DeleteNoteArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: DeleteNoteArgs, _ctx: &ToolContext) -> ToolResult {
        match self.0.store.delete_note(args.id).await {
            Ok(Some(note)) => {
                ToolResult::success(format!("Deleted note #{} \"{}\".", note.id, note.title))
                    .with_metadata("note", note_json(&note))
            }
            Ok(None) => missing(args.id),
            Err(error) => store_failure(&error),
        }
    }
}

// ------------------------------------------------------------ search_notes

/// Arguments of `search_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchNotesArgs {
    /// A few key words, e.g. `dentist appointment`.
    pub query: String,
    /// How many notes to return at most (default 20 unless configured
    /// otherwise).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// `search_notes`: full-text search over titles and bodies.
#[derive(Debug, Clone)]
pub struct SearchNotes(Notes);

#[async_trait]
impl TypedTool for SearchNotes {
    type Args = SearchNotesArgs;
    const NAME: &'static str = "search_notes";
    const DESCRIPTION: &'static str = "Search saved notes by words in their title or text, \
        best match first. Words match their beginnings, case and accents ignored \
        (`dent` finds `Dentist`). Returns ids, titles and the matching passage.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        reads()
    }

    /// None: it reads toolgate's own store only.
    fn effects(&self, _args: &SearchNotesArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: SearchNotesArgs, _ctx: &ToolContext) -> ToolResult {
        if toolgate_store::query_words(&args.query).is_empty() {
            return ToolResult::failure(
                "the query has no words to search for; give a few key words".to_owned(),
            );
        }
        let hits = match self
            .0
            .store
            .search_notes(&args.query, self.0.limit(args.limit))
            .await
        {
            Ok(hits) => hits,
            Err(error) => return store_failure(&error),
        };
        if hits.is_empty() {
            return ToolResult::success(format!(
                "No note matches \"{}\". Try other or fewer words, or `list_notes`.",
                args.query
            ))
            .with_metadata("ids", json!([]));
        }
        let mut out = if hits[0].all_words {
            format!("{} note(s) match:", hits.len())
        } else {
            format!(
                "No note holds every word; {} note(s) hold some of them:",
                hits.len()
            )
        };
        for hit in &hits {
            let _ = write!(out, "\n#{} {}", hit.note.id, hit.note.title);
            let snippet = hit.snippet.replace('\n', " ");
            if !snippet.trim().is_empty() {
                let _ = write!(out, " — {}", snippet.trim());
            }
        }
        ToolResult::success(out)
            .with_metadata("ids", hits.iter().map(|h| h.note.id).collect::<Vec<_>>())
    }
}

/// The `notes` group, `tools.notes` (off by default). Part: `Arc<dyn NoteStore>`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotesGroup;

impl toolgate_core::Group for NotesGroup {
    fn name(&self) -> &'static str {
        "notes"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("notes")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &[
            "create_note",
            "list_notes",
            "get_note",
            "update_note",
            "delete_note",
            "search_notes",
        ]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<NotesConfig>()?;
        let tools = if section.enabled {
            tools(section, ctx.part::<Arc<dyn NoteStore>>()?)
        } else {
            Vec::new()
        };
        Ok(toolgate_core::ToolGroup::new("notes", INSTRUCTIONS, tools))
    }
}
