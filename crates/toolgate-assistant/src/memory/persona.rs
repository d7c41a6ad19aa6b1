//! The `persona` group (seed 002's soul tools): `update_soul` (`SOUL.md`),
//! `update_identity` (`IDENTITY.md`) and `manage_goals` (`GOALS.md`), and
//! [`persona_prompt`], which turns the three files into a system-prompt
//! block.
//!
//! The files live in the directory the host gives [`tools`] —
//! `DATA_DIR/workspaces/<ws>` beside the `memory` directory, in the layout
//! of seed 002's soul loader — and are written atomically (temporary file,
//! `fsync`, rename), so a crash or a concurrent reader never sees half a
//! file. Effects name them relative to that directory (`SOUL.md`).
//!
//! The agent rewrites its own system prompt with these tools, so they are
//! sensitive (confirmed under `confirm-sensitive`), every write is capped
//! in size, credentials are refused, and [`persona_prompt`] caps what it
//! returns.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext,
    ToolResult, TypedTool, Workspace, WorkspaceError,
};

use super::dir::{FileDir, describe};
use super::goals::Goals;
use super::secrets::{self, Finding};

pub use super::goals::{GoalAction, ManageGoals, ManageGoalsArgs, Priority};

/// The personality file.
pub const SOUL_FILE: &str = "SOUL.md";
/// The identity file (name, emoji, vibe).
pub const IDENTITY_FILE: &str = "IDENTITY.md";
/// The goals file.
pub const GOALS_FILE: &str = "GOALS.md";

/// The most [`persona_prompt`] returns, in characters.
pub const PERSONA_PROMPT_MAX_CHARS: usize = 6000;
/// The most of `SOUL.md` that [`persona_prompt`] includes, in characters.
const PROMPT_SOUL_MAX_CHARS: usize = 4000;
/// The most of the open goals that [`persona_prompt`] includes.
const PROMPT_GOALS_MAX_CHARS: usize = 1500;
/// Persona files larger than this are not read.
const MAX_FILE: u64 = 256 * 1024;

/// The system-prompt block of the `persona` group (seed 002's
/// `soulToolsInstructions` and `goalsToolInstructions`).
pub const INSTRUCTIONS: &str = "\
## Persona
Your personality (SOUL.md), identity (IDENTITY.md) and goals (GOALS.md) are yours to keep up to date.
- update_soul replaces all of SOUL.md: send the complete new text (personality, tone, rules), not only the change.
- update_identity changes your name, emoji or vibe; give at least one.
- manage_goals tracks goals: action \"list\" first, then \"add\" (goal, priority low|medium|high), \"update\" (goal: part of its text, plus status, priority or notes) or \"complete\" (goal, outcome). If a goal matches more than one, use more of its text.
- Changes take effect in the next session. Never put passwords, keys or tokens in these files.";

/// Settings of the `persona` group (`tools.persona` in `toolgate.yaml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PersonaConfig {
    /// Whether the group's tools are offered and [`persona_prompt`] is
    /// added to the system prompt (read by the host). Default: `false`.
    pub enabled: bool,
    /// The longest `SOUL.md` `update_soul` writes, in characters.
    /// Default: 8000.
    pub max_soul_chars: usize,
    /// How many completed goals `GOALS.md` keeps (the most recent).
    /// Default: 10.
    pub completed_goals_kept: usize,
    /// The most open goals `GOALS.md` holds. Default: 50.
    pub max_active_goals: usize,
}

impl Default for PersonaConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_soul_chars: 8000,
            completed_goals_kept: 10,
            max_active_goals: 50,
        }
    }
}

/// The `persona` group's tools — `update_soul`, `update_identity`,
/// `manage_goals` — over the files in `dir`.
pub fn tools(config: &PersonaConfig, dir: impl Into<PathBuf>) -> Vec<Arc<dyn Tool>> {
    let persona = Arc::new(Persona {
        dir: FileDir::new(dir.into()),
        config: config.clone(),
    });
    vec![
        Arc::new(UpdateSoul {
            persona: Arc::clone(&persona),
        }),
        Arc::new(UpdateIdentity {
            persona: Arc::clone(&persona),
        }),
        Arc::new(ManageGoals::new(persona)),
    ]
}

/// The persona files of `dir` as a system-prompt block: the identity, the
/// soul and the open goals; `None` when there is none of them.
///
/// # Rules
///
/// 1. `IDENTITY.md`'s name, emoji and vibe come first, then `SOUL.md`
///    (at most 4,000 characters), then the open goals of `GOALS.md` (at
///    most 1,500 characters); completed goals are left out.
/// 2. The whole block is at most [`PERSONA_PROMPT_MAX_CHARS`]; a part cut
///    short ends with `[…]`.
/// 3. Files are read through the directory's sandbox: a symlink leading
///    out of it is not followed, and a file over 256 KiB is not read.
pub fn persona_prompt(dir: &Path) -> Option<String> {
    let dir = FileDir::new(dir.to_owned());
    let workspace = dir.workspace(false).ok()??;
    let read = |name: &str| read_file(&workspace, name).ok().flatten();
    let mut out = String::new();
    if let Some(identity) = read(IDENTITY_FILE) {
        let fields = Identity::parse(&identity).fields();
        if !fields.is_empty() {
            out.push_str("### Identity\n");
            for (key, value) in fields {
                let _ = writeln!(out, "- {key}: {value}");
            }
        }
    }
    if let Some(soul) = read(SOUL_FILE).filter(|s| !s.trim().is_empty()) {
        out.push_str("\n### Soul\n");
        out.push_str(&cut(soul.trim(), PROMPT_SOUL_MAX_CHARS));
        out.push('\n');
    }
    if let Some(text) = read(GOALS_FILE) {
        let open = Goals::parse(&text).open_summary();
        if !open.is_empty() {
            out.push_str("\n### Open goals\n");
            out.push_str(&cut(&open, PROMPT_GOALS_MAX_CHARS));
            out.push('\n');
        }
    }
    if out.trim().is_empty() {
        return None;
    }
    Some(cut(
        &format!("## Persona\n{}", out.trim_start()),
        PERSONA_PROMPT_MAX_CHARS,
    ))
}

/// `text`, cut to at most `max` characters at a line end when there is
/// one, with `[…]` where it was cut.
fn cut(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max.saturating_sub(4)) else {
        return text.to_owned();
    };
    let end = text[..end]
        .rfind('\n')
        .filter(|i| *i > end / 2)
        .unwrap_or(end);
    format!("{}\n[…]", text[..end].trim_end())
}

/// A persona file's text; `None` when it does not exist.
pub(crate) fn read_file(workspace: &Workspace, name: &str) -> Result<Option<String>, String> {
    let path = workspace.resolve(name).map_err(|e| describe(&e))?;
    match workspace.read_limited(&path, MAX_FILE) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(WorkspaceError::NotFound { .. }) => Ok(None),
        Err(error) => Err(describe(&error)),
    }
}

/// What the persona tools share.
#[derive(Debug)]
pub(crate) struct Persona {
    pub(crate) dir: FileDir,
    pub(crate) config: PersonaConfig,
}

impl Persona {
    /// A file's current text (`None`: it does not exist yet).
    pub(crate) fn read(&self, name: &str) -> Result<Option<String>, String> {
        match self.dir.workspace(false)? {
            Some(workspace) => read_file(&workspace, name),
            None => Ok(None),
        }
    }

    /// Replaces a file atomically, creating the directory if needed.
    pub(crate) fn write(&self, name: &str, text: &str) -> Result<(), String> {
        let workspace = self
            .dir
            .workspace(true)?
            .ok_or("the persona directory cannot be created")?;
        let path = workspace.resolve(name).map_err(|e| describe(&e))?;
        workspace
            .write_atomic(&path, text.as_bytes())
            .map_err(|e| describe(&e))
    }

    /// The effect of replacing `name` with `after`.
    pub(crate) fn write_effect(&self, name: &str, after: String) -> Effects {
        let before = self.read(name).ok().flatten();
        Effects::known([Effect::write(
            self.dir.effect_path(name),
            Change::from_texts(before.as_deref(), after),
        )])
    }
}

/// Refuses text with a credential in it (phone numbers are allowed in
/// persona files: they are not secrets, only not facts to remember).
pub(crate) fn refuse_credentials(field: &str, text: &str) -> Result<(), String> {
    match secrets::find(text) {
        Some(Finding::Credential(what)) => Err(format!(
            "the {field} contains a credential ({what}); never put passwords, keys or tokens in persona files"
        )),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------- update_soul

/// Arguments of `update_soul`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSoulArgs {
    /// The complete new SOUL.md: personality, tone and rules of behaviour, in Markdown.
    pub content: String,
}

/// `update_soul`: replaces `SOUL.md`.
///
/// # Rules
///
/// 1. The content replaces the whole file; it must not be empty, be over
///    `max_soul_chars`, or hold a credential.
/// 2. The file ends with a newline.
#[derive(Debug, Clone)]
pub struct UpdateSoul {
    persona: Arc<Persona>,
}

impl UpdateSoul {
    fn content(&self, content: &str) -> Result<String, String> {
        let content = content.trim();
        if content.is_empty() {
            return Err(
                "the content is empty; send the complete new SOUL.md (personality, tone, rules)"
                    .to_owned(),
            );
        }
        let chars = content.chars().count();
        let max = self.persona.config.max_soul_chars;
        if chars > max {
            return Err(format!(
                "the content is {chars} characters; SOUL.md may hold at most {max}. Keep it short"
            ));
        }
        refuse_credentials("content", content)?;
        Ok(format!("{content}\n"))
    }
}

#[async_trait]
impl TypedTool for UpdateSoul {
    type Args = UpdateSoulArgs;
    const NAME: &'static str = "update_soul";
    const DESCRIPTION: &'static str = "Rewrite your personality file SOUL.md (personality, tone, rules of behaviour). \
        Replaces the whole file: send the complete new text, not only the change. \
        Takes effect in the next session.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// A write of `SOUL.md`, by its absolute path.
    fn effects(&self, args: &UpdateSoulArgs) -> Result<Effects, EffectsError> {
        Ok(self
            .persona
            .write_effect(SOUL_FILE, self.content(&args.content)?))
    }

    async fn run(&self, args: UpdateSoulArgs, _ctx: &ToolContext) -> ToolResult {
        let content = match self.content(&args.content) {
            Ok(content) => content,
            Err(message) => return ToolResult::failure(message),
        };
        let persona = Arc::clone(&self.persona);
        let lines = content.lines().count();
        match tokio::task::spawn_blocking(move || persona.write(SOUL_FILE, &content)).await {
            Ok(Ok(())) => ToolResult::success(format!(
                "{SOUL_FILE} updated ({lines} lines). It takes effect in the next session."
            ))
            .with_metadata("path", SOUL_FILE),
            Ok(Err(message)) => ToolResult::failure(format!("{SOUL_FILE} not updated: {message}")),
            Err(error) => ToolResult::failure(format!(
                "internal error: the write did not finish ({error})"
            )),
        }
    }
}

// ------------------------------------------------------------ update_identity

/// Arguments of `update_identity`: give at least one.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateIdentityArgs {
    /// Your new name, e.g. "Nova".
    #[serde(default)]
    pub name: Option<String>,
    /// Your new emoji, e.g. "🦊".
    #[serde(default)]
    pub emoji: Option<String>,
    /// Your new vibe in a few words, e.g. "warm, curious, concise".
    #[serde(default)]
    pub vibe: Option<String>,
}

/// The fields of `IDENTITY.md`, in file order, and the longest value each
/// takes, in characters.
const IDENTITY_FIELDS: &[(&str, usize)] = &[("Name", 64), ("Emoji", 16), ("Vibe", 200)];

/// `IDENTITY.md`: `- **Name:** value` lines, and whatever else the file
/// holds, kept as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    lines: Vec<String>,
}

impl Identity {
    fn parse(text: &str) -> Self {
        Self {
            lines: text.lines().map(str::to_owned).collect(),
        }
    }

    /// The field a line sets, and its value.
    fn field_of(line: &str) -> Option<(&'static str, &str)> {
        let rest = line.trim().strip_prefix("- **")?;
        let (key, value) = rest.split_once(":**")?;
        let field = IDENTITY_FIELDS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(key.trim()))?;
        Some((field.0, value.trim()))
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        IDENTITY_FIELDS
            .iter()
            .filter_map(|(name, _)| {
                self.lines
                    .iter()
                    .filter_map(|l| Self::field_of(l))
                    .find(|(key, value)| key == name && !value.is_empty())
                    .map(|(key, value)| (key, value.to_owned()))
            })
            .collect()
    }

    /// Sets a field: its line is replaced, or added after the last field
    /// (after the title in a new file).
    fn set(&mut self, field: &'static str, value: &str) {
        let line = format!("- **{field}:** {value}");
        if let Some(at) = self
            .lines
            .iter()
            .position(|l| Self::field_of(l).is_some_and(|(k, _)| k == field))
        {
            self.lines[at] = line;
            return;
        }
        if self.lines.is_empty() {
            self.lines = vec!["# Identity".to_owned(), String::new()];
        }
        let at = self
            .lines
            .iter()
            .rposition(|l| Self::field_of(l).is_some())
            .map_or(self.lines.len(), |i| i + 1);
        self.lines.insert(at, line);
    }

    fn render(&self) -> String {
        let mut out = self.lines.join("\n");
        out.push('\n');
        out
    }
}

/// `update_identity`: changes the name, emoji or vibe in `IDENTITY.md`.
///
/// # Rules
///
/// 1. At least one of `name`, `emoji`, `vibe` is given; each is one line
///    (whitespace collapsed), not empty, at most 64, 16 and 200 characters,
///    without a credential.
/// 2. Each given field replaces its `- **Field:** value` line, or is added;
///    every other line of the file is kept.
#[derive(Debug, Clone)]
pub struct UpdateIdentity {
    persona: Arc<Persona>,
}

impl UpdateIdentity {
    /// The new file and the fields changed.
    fn edit(&self, args: &UpdateIdentityArgs) -> Result<(String, Vec<String>), String> {
        let given = [&args.name, &args.emoji, &args.vibe];
        if given.iter().all(|v| v.is_none()) {
            return Err("give at least one of name, emoji or vibe".to_owned());
        }
        let current = self.persona.read(IDENTITY_FILE)?.unwrap_or_default();
        let mut identity = Identity::parse(&current);
        let mut changed = Vec::new();
        for ((field, max), value) in IDENTITY_FIELDS.iter().zip(given) {
            let Some(value) = value else { continue };
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            let key = field.to_lowercase();
            if value.is_empty() {
                return Err(format!("the {key} is empty"));
            }
            if value.chars().count() > *max {
                return Err(format!("the {key} is too long (at most {max} characters)"));
            }
            refuse_credentials(&key, &value)?;
            identity.set(field, &value);
            changed.push(format!("{key}: {value}"));
        }
        Ok((identity.render(), changed))
    }
}

#[async_trait]
impl TypedTool for UpdateIdentity {
    type Args = UpdateIdentityArgs;
    const NAME: &'static str = "update_identity";
    const DESCRIPTION: &'static str = "Change your name, emoji or vibe in IDENTITY.md. Give at least one, \
        e.g. {\"name\": \"Nova\", \"emoji\": \"🦊\"}. The other fields are kept.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// A write of `IDENTITY.md`, by its absolute path.
    fn effects(&self, args: &UpdateIdentityArgs) -> Result<Effects, EffectsError> {
        let (text, _) = self.edit(args)?;
        Ok(self.persona.write_effect(IDENTITY_FILE, text))
    }

    async fn run(&self, args: UpdateIdentityArgs, _ctx: &ToolContext) -> ToolResult {
        let tool = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let (text, changed) = tool.edit(&args)?;
            tool.persona.write(IDENTITY_FILE, &text)?;
            Ok::<_, String>(changed)
        })
        .await;
        match done {
            Ok(Ok(changed)) => ToolResult::success(format!(
                "{IDENTITY_FILE} updated ({}). It takes effect in the next session.",
                changed.join(", ")
            ))
            .with_metadata("path", IDENTITY_FILE),
            Ok(Err(message)) => {
                ToolResult::failure(format!("{IDENTITY_FILE} not updated: {message}"))
            }
            Err(error) => ToolResult::failure(format!(
                "internal error: the write did not finish ({error})"
            )),
        }
    }
}

/// A part: the directory of the persona files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonaDir(pub PathBuf);

/// The `persona` group, `tools.persona` (off by default). Part: [`PersonaDir`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PersonaGroup;

impl toolgate_core::Group for PersonaGroup {
    fn name(&self) -> &'static str {
        "persona"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("persona")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["update_soul", "update_identity", "manage_goals"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<PersonaConfig>()?;
        let tools = if section.enabled {
            tools(section, ctx.part::<PersonaDir>()?.0)
        } else {
            Vec::new()
        };
        Ok(toolgate_core::ToolGroup::new(
            "persona",
            INSTRUCTIONS,
            tools,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_fields_are_set_in_place_and_other_lines_kept() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case<'_>] = &[
            ("", &[("Name", "Nova")], "# Identity\n\n- **Name:** Nova\n"),
            (
                "# Identity\n\n- **Name:** Nova\n- **Vibe:** calm\n\nWritten by hand.\n",
                &[("Vibe", "warm, curious"), ("Emoji", "🦊")],
                "# Identity\n\n- **Name:** Nova\n- **Vibe:** warm, curious\n- **Emoji:** 🦊\n\nWritten by hand.\n",
            ),
            (
                "- **name:**   old\n",
                &[("Name", "New")],
                "- **Name:** New\n",
            ),
        ];
        for (before, sets, after) in cases {
            let mut identity = Identity::parse(before);
            for (field, value) in *sets {
                let field = IDENTITY_FIELDS.iter().find(|(f, _)| f == field).unwrap().0;
                identity.set(field, value);
            }
            assert_eq!(identity.render(), *after, "{before:?}");
        }
    }

    #[test]
    fn cut_marks_where_it_cut() {
        assert_eq!(cut("short", 100), "short");
        let long = "line one\nline two\nline three\n".repeat(10);
        let out = cut(&long, 50);
        assert!(
            out.chars().count() <= 50 && out.ends_with("\n[…]"),
            "{out:?}"
        );
        assert!(out.starts_with("line one\nline two"));
    }
}
