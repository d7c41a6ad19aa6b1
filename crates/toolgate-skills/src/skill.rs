//! A skill as the rest of toolgate sees it: its SKILL.md and where it lives.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::parse::SkillFile;

/// Which kind of directory a skill was found in. Earlier variants win when
/// two skills share a name (see [`discover`](crate::discover)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SkillOrigin {
    /// `.agents/skills/` in the workspace or a directory above it, up to the
    /// repository's root.
    Workspace,
    /// `.agents/skills/` in the user's home directory.
    User,
    /// `skills/` in toolgate's configuration directory.
    Config,
}

impl SkillOrigin {
    /// The origin's name for people: `workspace`, `user`, `config`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::User => "user",
            Self::Config => "config",
        }
    }
}

impl fmt::Display for SkillOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A directory skills are looked for in, and what kind it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillRoot {
    /// The directory holding one directory per skill.
    pub path: PathBuf,
    /// What kind of directory it is.
    pub origin: SkillOrigin,
}

impl SkillRoot {
    /// A skills directory of this origin.
    pub fn new(path: impl Into<PathBuf>, origin: SkillOrigin) -> Self {
        Self {
            path: path.into(),
            origin,
        }
    }
}

/// A valid skill, found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skill {
    /// Its name (also its directory's name).
    pub name: String,
    /// What it is for and when to use it.
    pub description: String,
    /// Tools its instructions use: using one of them activates the skill
    /// ([`Activations::on_tool_used`](crate::Activations::on_tool_used)).
    pub allowed_tools: Vec<String>,
    /// Free-form key-value pairs from its frontmatter.
    pub metadata: BTreeMap<String, String>,
    /// Its license, if it names one.
    pub license: Option<String>,
    /// What it needs from its environment, if it says.
    pub compatibility: Option<String>,
    /// The skill's directory.
    pub dir: PathBuf,
    /// Its SKILL.md.
    pub file: PathBuf,
    /// The Markdown instructions: given to the model only when the skill
    /// is activated, never in the catalog.
    pub body: String,
    /// Where it was found.
    pub origin: SkillOrigin,
}

impl Skill {
    /// The skill a parsed SKILL.md describes; its directory is the one
    /// holding [`SkillFile::path`].
    pub fn from_file(file: SkillFile, origin: SkillOrigin) -> Self {
        let dir = file
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Self {
            name: file.name,
            description: file.description,
            allowed_tools: file.allowed_tools,
            metadata: file.metadata,
            license: file.license,
            compatibility: file.compatibility,
            dir,
            file: file.path,
            body: file.body,
            origin,
        }
    }
}
