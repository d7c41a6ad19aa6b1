//! Agent Skills for toolgate: directories of instructions a model loads
//! when a task needs them, in the open [Agent Skills](https://agentskills.io)
//! format.
//!
//! A skill is a directory holding a `SKILL.md`: YAML frontmatter with a
//! `name` and a `description`, then Markdown instructions. The model sees
//! only the names and descriptions at first ([`catalog_block`]); it calls
//! the `skill` tool ([`SkillTool`]) to get a skill's instructions when a
//! task matches one, and using a tool a skill names in `allowed-tools`
//! brings its instructions along ([`Activations::on_tool_used`]).
//!
//! - [`SkillFile`] parses and validates a SKILL.md, with errors that name
//!   the file and line ([`SkillError`]), and renders one back.
//! - [`discover`] finds the skills of a workspace, the user and toolgate's
//!   configuration, nearest first ([`DiscoverOptions`], [`Discovery`],
//!   [`Skill`]).
//! - [`Activations`] records which skills the model has been given in a
//!   run, shared by the [`SkillTool`] and the agent loop.
//! - [`create`], [`install_dir`] and [`install_text`] write skills, whole
//!   or not at all.
//!
//! This crate reaches no network: to install a SKILL.md from a URL, fetch
//! it with `toolgate_web::download_text` (the web tools' SSRF-checked
//! client) and pass the text to [`install_text`].
//!
//! # Example
//!
//! ```
//! use toolgate_skills::{Activations, DiscoverOptions, SkillTool, catalog_block, create, discover};
//! use toolgate_core::Tool;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = tempfile::tempdir()?;
//! let skills = workspace.path().join(".agents/skills");
//! create(&skills, "release-notes", "Write release notes from the git log.")?;
//!
//! let found = discover(&DiscoverOptions::new(workspace.path()));
//! assert!(found.errors.is_empty());
//! let prompt = catalog_block(&found.skills);
//! assert!(prompt.contains("- release-notes: Write release notes from the git log."));
//!
//! let activations = Activations::new(found.skills);
//! let tool = SkillTool::new(activations.clone());
//! assert_eq!(tool.name(), "skill");
//! let given = activations.activate("release-notes")?;
//! assert!(given.text.starts_with("# Skill: release-notes\n"));
//! # Ok(())
//! # }
//! ```
//!
//! # Writing skills
//!
//! [`create`], [`install_dir`] and [`install_text`] build the skill in a
//! fresh hidden directory beside its destination (`<root>/.create-XXXX`, `<root>/.install-XXXX`), checks
//! what it built, and only then renames that directory to `<root>/<name>`.
//! A rename within one filesystem is atomic, so a reader — discovery in
//! another process, say — sees no skill or the whole skill, never half a
//! copy; discovery skips hidden entries, so the temporary directory is never
//! taken for a skill; and on any failure the temporary directory is
//! removed.
//!
//! Refusing to overwrite needs no separate lock. `rename(2)` of a directory
//! onto an existing path fails unless that path is an *empty* directory
//! (then it is replaced — nothing is lost) — so a skill directory created by
//! someone else between our check and our rename makes the rename fail, and
//! that failure is reported as [`SkillError::Exists`], as the check would
//! have. See <https://man7.org/linux/man-pages/man2/rename.2.html>.

pub use activate::{Activated, Activations, MAX_LISTED_FILES, framed_skill};
pub use catalog::{CATALOG_DESCRIPTION_CHARS, CATALOG_INSTRUCTION, catalog_block};
pub use discover::{DEFAULT_MAX_SKILLS_PER_ROOT, DiscoverOptions, Discovery, discover};
pub use error::{InstallLimit, NameRule, Problem, SkillError, SkillWarning};
pub use install::{
    MAX_INSTALL_BYTES, MAX_INSTALL_DEPTH, MAX_INSTALL_ENTRIES, create, install_dir, install_text,
};
pub use parse::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_SKILL_FILE_BYTES,
    SKILL_FILE, SkillFile, validate_name,
};
pub use skill::{Skill, SkillOrigin, SkillRoot};
pub use tool::{SkillArgs, SkillTool};

mod activate;
mod catalog;
mod discover;
mod error;
mod install;
mod parse;
mod skill;
mod tool;
