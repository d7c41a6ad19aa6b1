//! Finding skills on disk: which directories, in which order, and what is
//! skipped.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{SkillError, SkillWarning};
use crate::parse::{SKILL_FILE, SkillFile};
use crate::skill::{Skill, SkillOrigin, SkillRoot};

/// Default of [`DiscoverOptions::max_skills_per_root`].
pub const DEFAULT_MAX_SKILLS_PER_ROOT: usize = 200;

/// The most entries of one skills directory looked at, skills or not: a
/// bound on memory for a directory that is not what it claims to be.
const MAX_ENTRIES_LISTED: usize = 4096;

/// Where [`discover`] looks for skills.
///
/// ```
/// use toolgate_skills::{DiscoverOptions, SkillOrigin};
///
/// let options = DiscoverOptions::new("/work/repo/crates/app")
///     .home("/home/ana")
///     .config_dir("/home/ana/.config/toolgate");
/// let roots = options.roots();
/// assert_eq!(roots.last().unwrap().origin, SkillOrigin::Config);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoverOptions {
    workspace: PathBuf,
    home: Option<PathBuf>,
    config_dir: Option<PathBuf>,
    max_skills_per_root: usize,
}

impl DiscoverOptions {
    /// Options for the workspace at `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            home: None,
            config_dir: None,
            max_skills_per_root: DEFAULT_MAX_SKILLS_PER_ROOT,
        }
    }

    /// Sets the user's home directory, whose `.agents/skills/` holds the
    /// user's skills. By default, none: no user skills. (This crate reads
    /// no environment variables; the caller knows where home is.)
    #[must_use]
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Sets toolgate's configuration directory (`~/.config/toolgate`),
    /// whose `skills/` holds skills installed for toolgate. By default,
    /// none.
    #[must_use]
    pub fn config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(dir.into());
        self
    }

    /// Sets how many skills are read from one skills directory; past that,
    /// [`SkillError::TooManySkills`] is reported and the rest skipped. By
    /// default, [`DEFAULT_MAX_SKILLS_PER_ROOT`] (200).
    #[must_use]
    pub fn max_skills_per_root(mut self, max: usize) -> Self {
        self.max_skills_per_root = max;
        self
    }

    /// The skills directories, nearest first (see [`discover`]'s rules 1
    /// to 4). Only the `.git` markers and the paths are looked at; the
    /// directories need not exist.
    pub fn roots(&self) -> Vec<SkillRoot> {
        let workspace =
            fs::canonicalize(&self.workspace).unwrap_or_else(|_| self.workspace.clone());
        let home = self.home.as_deref().map(canonical_or_given);
        let mut roots = Vec::new();
        let top = workspace
            .ancestors()
            .find(|dir| dir.join(".git").symlink_metadata().is_ok());
        for dir in workspace.ancestors() {
            // Rule 2: home is the user's, even inside a repository.
            if home.as_deref() != Some(dir) {
                roots.push(SkillRoot::new(
                    dir.join(".agents").join("skills"),
                    SkillOrigin::Workspace,
                ));
            }
            if top.is_none_or(|top| top == dir) {
                break;
            }
        }
        if let Some(home) = home {
            roots.push(SkillRoot::new(
                home.join(".agents").join("skills"),
                SkillOrigin::User,
            ));
        }
        if let Some(config) = &self.config_dir {
            roots.push(SkillRoot::new(
                canonical_or_given(config).join("skills"),
                SkillOrigin::Config,
            ));
        }
        // Rule 4: a directory reached twice is read once, the first time.
        let mut seen = Vec::new();
        roots.retain(|root| {
            let key = canonical_or_given(&root.path);
            if seen.contains(&key) {
                false
            } else {
                seen.push(key);
                true
            }
        });
        roots
    }
}

fn canonical_or_given(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// What [`discover`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Discovery {
    /// The valid skills, one per name, sorted by name.
    pub skills: Vec<Skill>,
    /// Skills that could not be read, and directories that were skipped.
    /// None of them stops discovery.
    pub errors: Vec<SkillError>,
    /// Skills hidden by a nearer skill of the same name: the name and the
    /// hidden skill's directory.
    pub shadowed: Vec<(String, PathBuf)>,
    /// Oddities in valid skills (unknown keys).
    pub warnings: Vec<SkillWarning>,
}

/// Finds the skills for a workspace.
///
/// # Rules
///
/// 1. Skills are the directories `<root>/<name>/` holding a `SKILL.md`, in
///    these roots, nearest first: `.agents/skills/` in the workspace, then
///    in each directory above it up to the repository's root (the nearest
///    directory holding `.git`, a directory or a file; without one, the
///    workspace alone) — [`SkillOrigin::Workspace`]; then
///    `<home>/.agents/skills/` ([`SkillOrigin::User`]); then
///    `<config_dir>/skills/` ([`SkillOrigin::Config`]).
/// 2. A home directory met on the way up from the workspace is read as
///    the user's, in its place in rule 1's order, not as the workspace's.
/// 3. The nearest skill of a name wins; the others are listed in
///    [`Discovery::shadowed`].
/// 4. A directory reached twice (through a link, or because the workspace
///    is the home directory) is read once, as the first root that reaches
///    it.
/// 5. Entries whose names start with `.` are skipped: that is where
///    installs build a skill before it appears ([`install_dir`](crate::install_dir)).
///    So are entries without a `SKILL.md`.
/// 6. At most [`DiscoverOptions::max_skills_per_root`] skills are read per
///    root, in name order; past that, [`SkillError::TooManySkills`].
/// 7. A skill that cannot be read or parsed is an error in
///    [`Discovery::errors`], and discovery goes on.
///
/// # Symbolic links
///
/// A workspace is someone else's repository as often as it is the user's,
/// and a skill's body goes to the model word for word while its directory
/// is listed to it. So in a workspace root, a skill directory or `SKILL.md`
/// that resolves outside that `.agents/skills/` directory, or an
/// `.agents/skills/` that resolves outside the directory holding it, is not
/// read: it is reported as [`SkillError::Escapes`] and skipped — the rule the file tools
/// apply at the workspace's edge (DESIGN.md §8). Links that stay inside are
/// followed. In the user's roots (home and configuration) links are followed
/// wherever they lead: the user put them there, and linking skills in from a
/// dotfiles checkout is common. The check is made when discovery runs; a
/// link swapped in between the check and the read is not defended against,
/// because whoever can do that can already write the skill itself. When a
/// skill's directory is listed for the model
/// ([`Activations::activate`](crate::Activations::activate)), links inside
/// it are never followed.
pub fn discover(options: &DiscoverOptions) -> Discovery {
    let mut discovery = Discovery::default();
    let mut by_name: BTreeMap<String, Skill> = BTreeMap::new();
    for root in options.roots() {
        tracing::debug!(root = %root.path.display(), origin = %root.origin, "looking for skills");
        for skill in scan(&root, options.max_skills_per_root, &mut discovery) {
            if let Some(winner) = by_name.get(&skill.name) {
                tracing::debug!(
                    name = %skill.name,
                    hidden = %skill.dir.display(),
                    by = %winner.dir.display(),
                    "skill shadowed by a nearer one"
                );
                discovery.shadowed.push((skill.name, skill.dir));
            } else {
                by_name.insert(skill.name.clone(), skill);
            }
        }
    }
    discovery.skills = by_name.into_values().collect();
    discovery
}

/// The skills of one root (rules 5 to 7).
fn scan(root: &SkillRoot, max: usize, discovery: &mut Discovery) -> Vec<Skill> {
    // Only a workspace root confines its links (see `discover`), starting
    // with `.agents/skills` itself, which must stay in the directory that
    // holds it.
    let confine = match root.origin {
        SkillOrigin::Workspace => {
            let Ok(inside) = fs::canonicalize(&root.path) else {
                return Vec::new();
            };
            let holder = root.path.ancestors().nth(2).map(canonical_or_given);
            if let Some(holder) = holder.filter(|holder| !inside.starts_with(holder)) {
                discovery.errors.push(SkillError::Escapes {
                    path: root.path.clone(),
                    root: holder,
                });
                return Vec::new();
            }
            Some(inside)
        }
        SkillOrigin::User | SkillOrigin::Config => None,
    };
    let entries = match fs::read_dir(&root.path) {
        Ok(entries) => entries,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Vec::new();
        }
        Err(e) => {
            discovery.errors.push(SkillError::io("list", &root.path, e));
            return Vec::new();
        }
    };
    let mut names: Vec<OsString> = entries
        .take(MAX_ENTRIES_LISTED)
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| !name.as_encoded_bytes().starts_with(b"."))
        .collect();
    names.sort();
    let mut skills = Vec::new();
    let mut read = 0;
    for name in names {
        let dir = root.path.join(&name);
        let file = dir.join(SKILL_FILE);
        if fs::metadata(&file).is_err() {
            tracing::debug!(dir = %dir.display(), "no SKILL.md: not a skill");
            continue;
        }
        if read == max {
            discovery.errors.push(SkillError::TooManySkills {
                root: root.path.clone(),
                max,
            });
            break;
        }
        read += 1;
        if let Some(inside) = &confine {
            let leaves = |path: &Path| {
                !fs::canonicalize(path).is_ok_and(|resolved| resolved.starts_with(inside))
            };
            let escaping = if leaves(&dir) {
                Some(dir)
            } else if leaves(&file) {
                Some(file.clone())
            } else {
                None
            };
            if let Some(path) = escaping {
                discovery.errors.push(SkillError::Escapes {
                    path,
                    root: root.path.clone(),
                });
                continue;
            }
        }
        match SkillFile::read(&file) {
            Ok(parsed) => {
                discovery.warnings.extend(parsed.warnings.iter().cloned());
                skills.push(Skill::from_file(parsed, root.origin));
            }
            Err(error) => {
                tracing::debug!(%error, "skill skipped");
                discovery.errors.push(error);
            }
        }
    }
    skills
}
