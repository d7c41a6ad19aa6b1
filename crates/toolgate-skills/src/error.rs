//! What can go wrong with a skill, and the warnings a valid skill can carry.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a skill could not be read, found, written or installed.
///
/// A SKILL.md that breaks the format is [`SkillError::Invalid`], whose
/// message starts with the file and a 1-based line number, as compilers
/// write them: `skills/pdf/SKILL.md:2: name "Pdf": use lowercase letters,
/// digits and hyphens`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// A SKILL.md that does not follow the Agent Skills format.
    #[error("{}:{line}: {problem}", file.display())]
    Invalid {
        /// The file (for a download, the URL it came from).
        file: PathBuf,
        /// The 1-based line of the file the problem is on.
        line: usize,
        /// What is wrong.
        problem: Problem,
    },
    /// A SKILL.md larger than [`MAX_SKILL_FILE_BYTES`](crate::MAX_SKILL_FILE_BYTES).
    #[error("{}: the file is {size} bytes; a SKILL.md may be at most {max} bytes", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// Its size (at least; reading stops past the limit).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Reading or writing the filesystem failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done, as a verb phrase: `read`, `create`, …
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// No skill has this name.
    #[error("there is no skill named {name:?}; {}", Names(available))]
    NotFound {
        /// The name asked for.
        name: String,
        /// The names there are, sorted.
        available: Vec<String>,
    },
    /// The skill directory to create or install into is already there.
    #[error("{} already exists; remove it first or choose another name", path.display())]
    Exists {
        /// The directory.
        path: PathBuf,
    },
    /// An entry that is not a regular file or a directory, in a skill
    /// being installed.
    #[error("{} is a {kind}; a skill may hold only regular files and directories", path.display())]
    Unsupported {
        /// The entry.
        path: PathBuf,
        /// What it is: `symbolic link`, `socket`, `device`, …
        kind: &'static str,
    },
    /// A skill directory or SKILL.md in a workspace that is a symbolic link
    /// leading out of its skills directory, or a workspace skills directory
    /// leading out of the directory holding it (see
    /// [`discover`](crate::discover)).
    #[error("{} leads outside {} through a symbolic link; skipped", path.display(), root.display())]
    Escapes {
        /// The link, or the path through it.
        path: PathBuf,
        /// The directory it leaves.
        root: PathBuf,
    },
    /// A skills directory with more skills than are read from one place.
    #[error("{} holds more than {max} skills; the rest were not read", root.display())]
    TooManySkills {
        /// The skills directory.
        root: PathBuf,
        /// How many were read.
        max: usize,
    },
    /// A skill to install is larger than the limits allow.
    #[error("{} is too large to install: {limit}", dir.display())]
    InstallLimit {
        /// The skill directory being installed.
        dir: PathBuf,
        /// The limit it passes.
        limit: InstallLimit,
    },
}

impl SkillError {
    /// The file an [`Invalid`](Self::Invalid) or [`TooLarge`](Self::TooLarge)
    /// error is about.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::Invalid { file, .. } | Self::TooLarge { file, .. } => Some(file),
            _ => None,
        }
    }

    /// The 1-based line of an [`Invalid`](Self::Invalid) error.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Invalid { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The problem of an [`Invalid`](Self::Invalid) error.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Self::Invalid { problem, .. } => Some(problem),
            _ => None,
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// What is wrong with a SKILL.md (the part of [`SkillError::Invalid`] after
/// the file and line).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The file does not start with a `---` line.
    NoFrontmatter,
    /// The opening `---` has no closing `---` line.
    Unterminated,
    /// The file is not UTF-8.
    NotUtf8,
    /// The frontmatter is not valid YAML.
    Yaml {
        /// The parser's description of the problem, without its position
        /// (the error's line is the position in the file).
        message: String,
    },
    /// The frontmatter is YAML, but not a mapping of keys.
    NotMapping {
        /// What it is instead: `a sequence`, `a string`, …
        found: &'static str,
    },
    /// A required key is missing.
    Missing {
        /// `name` or `description`.
        key: &'static str,
    },
    /// A required key is there but empty.
    Empty {
        /// `name` or `description`.
        key: &'static str,
    },
    /// The name breaks a rule of the format.
    InvalidName {
        /// The name as written.
        name: String,
        /// The rule it breaks.
        rule: NameRule,
    },
    /// The name is valid, but not the name of the skill's directory.
    NameMismatch {
        /// The name in the frontmatter.
        name: String,
        /// The directory's name.
        dir: String,
    },
    /// A value is longer than the format allows.
    TooLong {
        /// The key.
        key: &'static str,
        /// Its length, in characters.
        chars: usize,
        /// The limit, in characters.
        max: usize,
    },
    /// A value has the wrong type.
    WrongType {
        /// The key, `metadata.KEY` for an entry of `metadata`.
        key: String,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: &'static str,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoFrontmatter => f.write_str(
                "no frontmatter: a SKILL.md starts with a `---` line, then YAML with `name:` and `description:`, then `---`",
            ),
            Self::Unterminated => {
                f.write_str("the frontmatter opened here is never closed by a `---` line")
            }
            Self::NotUtf8 => f.write_str("the file is not UTF-8 text"),
            Self::Yaml { message } => write!(f, "invalid YAML in the frontmatter: {message}"),
            Self::NotMapping { found } => write!(
                f,
                "the frontmatter is {found}, not a mapping of keys such as `name:` and `description:`"
            ),
            Self::Missing { key } => write!(f, "the required key `{key}` is missing"),
            Self::Empty { key } => write!(f, "`{key}` is empty"),
            Self::InvalidName { name, rule } => write!(f, "name {:?}: {rule}", Short(name)),
            Self::NameMismatch { name, dir } => write!(
                f,
                "name {:?} must be the name of the skill's directory, {:?}",
                Short(name),
                Short(dir)
            ),
            Self::TooLong { key, chars, max } => write!(
                f,
                "`{key}` is {chars} characters; at most {max} are allowed"
            ),
            Self::WrongType {
                key,
                expected,
                found,
            } => write!(f, "`{key}` must be {expected}, not {found}"),
        }
    }
}

/// The rules of a skill name, in the order they are checked
/// ([`validate_name`](crate::validate_name)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRule {
    /// 1 to 64 characters.
    Length,
    /// Only lowercase ASCII letters, digits and hyphens.
    Characters,
    /// No hyphen first or last.
    EdgeHyphen,
    /// No two hyphens in a row.
    DoubleHyphen,
}

impl fmt::Display for NameRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Length => "use 1 to 64 characters",
            Self::Characters => "use lowercase letters, digits and hyphens",
            Self::EdgeHyphen => "do not start or end with a hyphen",
            Self::DoubleHyphen => "do not put two hyphens in a row",
        })
    }
}

/// Which install limit a skill passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstallLimit {
    /// More bytes than [`MAX_INSTALL_BYTES`](crate::MAX_INSTALL_BYTES).
    Bytes(u64),
    /// More files and directories than [`MAX_INSTALL_ENTRIES`](crate::MAX_INSTALL_ENTRIES).
    Entries(usize),
    /// Directories nested deeper than [`MAX_INSTALL_DEPTH`](crate::MAX_INSTALL_DEPTH).
    Depth(usize),
}

impl fmt::Display for InstallLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes(max) => write!(f, "more than {max} bytes"),
            Self::Entries(max) => write!(f, "more than {max} files and directories"),
            Self::Depth(max) => write!(f, "directories nested more than {max} deep"),
        }
    }
}

/// Something odd in a valid SKILL.md: reported, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillWarning {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line.
    pub line: usize,
    /// What is odd.
    pub message: String,
}

impl fmt::Display for SkillWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// A list of names for a message: `available: a, b` or `none are installed`.
struct Names<'a>(&'a [String]);

impl fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no skills are installed");
        }
        write!(f, "available: {}", self.0.join(", "))
    }
}

/// A value quoted in a message, cut to 80 characters so that a 100 KiB name
/// does not become a 100 KiB message.
struct Short<'a>(&'a str);

impl fmt::Debug for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 80;
        match self.0.char_indices().nth(MAX) {
            None => fmt::Debug::fmt(self.0, f),
            Some((cut, _)) => {
                fmt::Debug::fmt(&self.0[..cut], f)?;
                f.write_str("…")
            }
        }
    }
}
