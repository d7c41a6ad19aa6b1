//! Which skills' instructions the model has been given in a run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::SkillError;
use crate::parse::SKILL_FILE;
use crate::skill::Skill;

/// The most files of a skill's directory listed on activation.
pub const MAX_LISTED_FILES: usize = 50;

/// How deep the listing goes below the skill's directory.
const MAX_LISTED_DEPTH: usize = 4;

/// The record of one run: the skills there are, and which of them the model
/// has already been given.
///
/// Cheap to clone; clones share the record, so the `skill` tool
/// ([`SkillTool`](crate::SkillTool)) and the agent loop (which calls
/// [`on_tool_used`](Self::on_tool_used) after each tool call) see the same
/// activations.
///
/// # Rules
///
/// 1. Activating a skill gives its body, framed with its name and
///    directory and followed by a list of the files in its directory
///    (relative paths, at most [`MAX_LISTED_FILES`], hidden entries and
///    symbolic links left out), and marks it active.
/// 2. Activating an active skill gives a one-line note instead: the body is
///    already in the conversation, and repeating it only costs context.
/// 3. Using a tool activates every inactive skill whose `allowed-tools`
///    names that tool, so its instructions arrive when they are needed even
///    if the model did not ask (seed 003's lazy instructions).
/// 4. A resumed session [`restore`](Self::restore)s the names it had
///    active, without their bodies, which are in its transcript already.
///
/// ```
/// use toolgate_skills::{Activations, Skill, SkillFile, SkillOrigin};
///
/// # fn main() -> Result<(), toolgate_skills::SkillError> {
/// let text = "---\nname: pdf\ndescription: Fill in PDF forms.\nallowed-tools: run_command\n---\nUse pdftk.\n";
/// let skill = Skill::from_file(SkillFile::parse("skills/pdf/SKILL.md".as_ref(), text)?, SkillOrigin::User);
/// let activations = Activations::new([skill]);
/// let first = activations.activate("pdf")?;
/// assert!(first.text.contains("Use pdftk."));
/// let second = activations.activate("pdf")?;
/// assert!(second.already_active && !second.text.contains("Use pdftk."));
/// assert!(activations.on_tool_used("run_command").is_empty());
/// assert!(activations.activate("docx").is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Activations {
    inner: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    skills: BTreeMap<String, Arc<Skill>>,
    active: BTreeSet<String>,
}

/// What an activation gives the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Activated {
    /// The skill's name.
    pub name: String,
    /// The text for the model: the framed body, or the "already active"
    /// note.
    pub text: String,
    /// Whether the skill was active before this call (rule 2).
    pub already_active: bool,
}

impl Activations {
    /// A record of `skills`, none active. Of two skills with one name, the
    /// first is kept (as [`discover`](crate::discover) has already done).
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut by_name = BTreeMap::new();
        for skill in skills {
            by_name
                .entry(skill.name.clone())
                .or_insert_with(|| Arc::new(skill));
        }
        Self {
            inner: Arc::new(Mutex::new(State {
                skills: by_name,
                active: BTreeSet::new(),
            })),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is two maps updated in single steps: a panic elsewhere
        // while the lock was held cannot have left them half-changed.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The names of the skills, sorted.
    pub fn names(&self) -> Vec<String> {
        self.state().skills.keys().cloned().collect()
    }

    /// The skill of this name.
    pub fn skill(&self, name: &str) -> Option<Skill> {
        self.state().skills.get(name).map(|s| Skill::clone(s))
    }

    /// The names of the active skills, sorted: what a session saves to
    /// [`restore`](Self::restore) later.
    pub fn active(&self) -> Vec<String> {
        self.state().active.iter().cloned().collect()
    }

    /// Whether the skill of this name is active.
    pub fn is_active(&self, name: &str) -> bool {
        self.state().active.contains(name)
    }

    /// Activates the skill `name` (rules 1 and 2).
    ///
    /// # Errors
    ///
    /// [`SkillError::NotFound`], listing the names there are.
    pub fn activate(&self, name: &str) -> Result<Activated, SkillError> {
        let (skill, already_active) = {
            let mut state = self.state();
            let Some(skill) = state.skills.get(name).cloned() else {
                return Err(SkillError::NotFound {
                    name: name.to_owned(),
                    available: state.skills.keys().cloned().collect(),
                });
            };
            let newly = state.active.insert(skill.name.clone());
            (skill, !newly)
        };
        if already_active {
            return Ok(Activated {
                text: format!(
                    "Skill `{}` is already active: its instructions are earlier in this conversation. Follow them.",
                    skill.name
                ),
                name: skill.name.clone(),
                already_active: true,
            });
        }
        tracing::debug!(name = %skill.name, "skill activated");
        Ok(Activated {
            name: skill.name.clone(),
            text: frame(&skill, None),
            already_active: false,
        })
    }

    /// Activates every inactive skill whose `allowed-tools` names `tool`
    /// (rule 3), in name order. Empty when there is none, which is almost
    /// always.
    pub fn on_tool_used(&self, tool: &str) -> Vec<Activated> {
        let activated: Vec<Arc<Skill>> = {
            let mut state = self.state();
            let State { skills, active } = &mut *state;
            skills
                .values()
                .filter(|skill| skill.allowed_tools.iter().any(|t| t == tool))
                .filter(|skill| active.insert(skill.name.clone()))
                .cloned()
                .collect()
        };
        if activated.is_empty() {
            return Vec::new();
        }
        let reason = format!("{LAZY_REASON} `{tool}` was used, which this skill covers");
        activated
            .iter()
            .map(|skill| {
                tracing::debug!(name = %skill.name, tool, "skill activated by a tool");
                Activated {
                    name: skill.name.clone(),
                    text: frame(skill, Some(&reason)),
                    already_active: false,
                }
            })
            .collect()
    }

    /// Marks the skills named active without giving their bodies (rule 4).
    /// Names that are not skills any more are ignored.
    pub fn restore<I, S>(&self, names: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut state = self.state();
        for name in names {
            let name = name.as_ref();
            if state.skills.contains_key(name) {
                state.active.insert(name.to_owned());
            } else {
                tracing::debug!(name, "restored skill no longer exists");
            }
        }
    }
}

/// How a framed body starts: `# Skill: NAME`.
const FRAME_START: &str = "# Skill: ";
/// How the reason of a body given with a tool's first use starts.
const LAZY_REASON: &str = "given because";

/// The skill whose framed body `text` starts with, and whether it came
/// with a tool's first use ([`Activations::on_tool_used`]) rather than by
/// [`Activations::activate`]: what a resumed run reads back from its
/// history to [`restore`](Activations::restore) the skills already given.
pub fn framed_skill(text: &str) -> Option<(&str, bool)> {
    let rest = text.strip_prefix(FRAME_START)?;
    let mut lines = rest.lines();
    let name = lines.next()?.trim();
    let lazy = lines.next().is_some_and(|l| {
        l.strip_prefix('(')
            .is_some_and(|r| r.starts_with(LAZY_REASON))
    });
    Some((name, lazy))
}

/// The text of a first activation: the body framed with the skill's name
/// and directory, then the files beside it. `reason` says why it came
/// without being asked for.
fn frame(skill: &Skill, reason: Option<&str>) -> String {
    let mut text = format!("{FRAME_START}{}\n", skill.name);
    if let Some(reason) = reason {
        let _ = writeln!(text, "({reason})");
    }
    let _ = writeln!(
        text,
        "Directory: {} (relative paths in these instructions are inside it)\n",
        skill.dir.display()
    );
    if skill.body.is_empty() {
        text.push_str("(This skill has no instructions beyond its description.)\n");
    } else {
        text.push_str(&skill.body);
        text.push('\n');
    }
    let (files, more) = list_files(&skill.dir);
    if !files.is_empty() {
        text.push_str("\nFiles in the skill's directory:\n");
        for file in &files {
            let _ = writeln!(text, "- {file}");
        }
        if more {
            let _ = writeln!(text, "- … (only the first {MAX_LISTED_FILES} are listed)");
        }
    }
    text
}

/// The regular files below `dir`, as sorted relative paths with `/`, not
/// the SKILL.md itself; and whether there were more than
/// [`MAX_LISTED_FILES`]. Hidden entries and symbolic links are left out,
/// and nothing is followed out of the directory. Unreadable directories
/// are left out too: the listing is a hint, not a promise.
fn list_files(dir: &Path) -> (Vec<String>, bool) {
    let mut files = Vec::new();
    let mut more = false;
    walk(dir, "", 0, &mut files, &mut more);
    (files, more)
}

fn walk(dir: &Path, prefix: &str, depth: usize, files: &mut Vec<String>, more: &mut bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let kind = entry.file_type().ok()?;
            (!name.starts_with('.')).then_some((name, kind))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        if *more {
            return;
        }
        let relative = format!("{prefix}{name}");
        if kind.is_file() {
            if depth == 0 && name == SKILL_FILE {
                continue;
            }
            if files.len() == MAX_LISTED_FILES {
                *more = true;
                return;
            }
            files.push(relative);
        } else if kind.is_dir() && depth < MAX_LISTED_DEPTH {
            walk(
                &dir.join(&name),
                &format!("{relative}/"),
                depth + 1,
                files,
                more,
            );
        }
    }
}
