//! Writing skills: a new one from a template, a copy of a directory, a
//! downloaded SKILL.md.
//!
//! Why and how each appears whole or not at all is in the crate docs
//! ([Writing skills](crate#writing-skills)).

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::error::{InstallLimit, Problem, SkillError};
use crate::parse::{MAX_SKILL_FILE_BYTES, SKILL_FILE, SkillFile};
use crate::skill::{Skill, SkillOrigin};

/// The most bytes a skill directory may hold to be installed (10 MiB).
pub const MAX_INSTALL_BYTES: u64 = 10 * 1024 * 1024;
/// The most files and directories a skill directory may hold to be
/// installed.
pub const MAX_INSTALL_ENTRIES: usize = 1000;
/// The deepest directory nesting installed.
pub const MAX_INSTALL_DEPTH: usize = 16;

/// Writes a new skill `<root>/<name>/SKILL.md` from a template, and returns
/// the SKILL.md's path.
///
/// The template holds the name, the description and a placeholder body
/// for the user to replace. It is parsed back before it is written, so a
/// name or description the format refuses is refused here, with the line
/// of the file it would have been on. An existing `<root>/<name>` is never
/// touched: [`SkillError::Exists`]. The skill appears whole (see
/// [Writing skills](crate#writing-skills)); `root` is created if it is missing.
///
/// ```
/// use toolgate_skills::{SkillFile, create};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let root = tempfile::tempdir()?;
/// let file = create(root.path(), "release-notes", "Write release notes from the git log.")?;
/// assert_eq!(file, root.path().join("release-notes/SKILL.md"));
/// assert_eq!(SkillFile::read(&file)?.name, "release-notes");
/// assert!(create(root.path(), "release-notes", "Again.").is_err());
/// # Ok(())
/// # }
/// ```
pub fn create(root: &Path, name: &str, description: &str) -> Result<PathBuf, SkillError> {
    let dest = root.join(name);
    let file = dest.join(SKILL_FILE);
    let template = SkillFile {
        path: file.clone(),
        name: name.to_owned(),
        description: description.to_owned(),
        license: None,
        compatibility: None,
        metadata: BTreeMap::new(),
        allowed_tools: Vec::new(),
        body: format!(
            "# {name}\n\n\
             Replace this text with the instructions a model should follow for this job:\n\
             when the skill applies, the steps in order, and the files in this directory\n\
             it may use (scripts/, references/, assets/)."
        ),
        warnings: Vec::new(),
    };
    let text = template.render();
    // Rendering quotes whatever it is given; the parser is what decides
    // whether the name and description are valid.
    SkillFile::parse(&file, &text)?;
    write_skill(root, &dest, ".create-", |tmp| {
        write_new(&tmp.join(SKILL_FILE), text.as_bytes())
    })?;
    tracing::info!(path = %file.display(), "skill created");
    Ok(file)
}

/// Installs a copy of the skill directory `src` (or of the directory
/// holding `src`, when it is a file: its SKILL.md) as `<dest_root>/<name>`, the name being the
/// one in its frontmatter, and returns it as a skill of `origin`.
///
/// # Rules
///
/// 1. The source's SKILL.md is read and validated first; the source
///    directory's own name does not matter (a download unpacked as
///    `pdf-forms-main/` installs as `pdf-forms`).
/// 2. An existing `<dest_root>/<name>` is never touched: [`SkillError::Exists`].
/// 3. Only regular files and directories are copied. A symbolic link, a
///    device, a socket or a FIFO anywhere in the tree refuses the whole
///    install ([`SkillError::Unsupported`]): a link could point at the
///    user's secrets and would go on pointing there from the installed
///    skill. `.git` directories are left out.
/// 4. At most [`MAX_INSTALL_BYTES`] in at most [`MAX_INSTALL_ENTRIES`]
///    files and directories, nested at most [`MAX_INSTALL_DEPTH`] deep
///    ([`SkillError::InstallLimit`]).
/// 5. File permissions are kept, without set-user-ID, set-group-ID and
///    sticky bits (scripts stay executable).
/// 6. The copy's SKILL.md is validated again before it appears, in case
///    the source changed during the copy; the skill appears whole or not at
///    all (see [Writing skills](crate#writing-skills)).
pub fn install_dir(src: &Path, dest_root: &Path, origin: SkillOrigin) -> Result<Skill, SkillError> {
    let meta = fs::metadata(src).map_err(|e| SkillError::io("read", src, e))?;
    let src_dir = if meta.is_dir() {
        src
    } else {
        src.parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    let src_dir = fs::canonicalize(src_dir).map_err(|e| SkillError::io("read", src_dir, e))?;
    let source_file = src_dir.join(SKILL_FILE);
    if fs::symlink_metadata(&source_file).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(SkillError::Unsupported {
            path: source_file,
            kind: "symbolic link",
        });
    }
    let parsed = SkillFile::read_unplaced(&source_file)?;
    let dest = dest_root.join(&parsed.name);
    let copied = write_skill(dest_root, &dest, ".install-", |tmp| {
        let mut budget = Budget::default();
        copy_tree(&src_dir, tmp, 0, &mut budget).map_err(|error| match error {
            CopyError::Skill(error) => error,
            CopyError::Limit(limit) => SkillError::InstallLimit {
                dir: src_dir.clone(),
                limit,
            },
        })?;
        let copied = SkillFile::read_unplaced(&tmp.join(SKILL_FILE))?;
        if copied.name != parsed.name {
            // The source's SKILL.md changed while it was copied.
            return Err(SkillError::Invalid {
                file: source_file.clone(),
                line: 1,
                problem: Problem::NameMismatch {
                    name: copied.name,
                    dir: parsed.name.clone(),
                },
            });
        }
        Ok(copied)
    })?;
    tracing::info!(from = %src_dir.display(), to = %dest.display(), "skill installed");
    Ok(placed(copied, &dest, origin))
}

/// Installs one SKILL.md's `text` — fetched from `source`, a URL named in
/// messages — as `<dest_root>/<name>/SKILL.md`, the name being the one in
/// its frontmatter, and returns it as a skill of `origin`.
///
/// This crate does not reach the network. A caller downloads the text
/// through the web tools' checked client, so a skill URL gets the same
/// SSRF rules as `web_fetch`, and hands it over:
///
/// ```ignore
/// # async fn example(web: &toolgate_web::WebConfig, root: &std::path::Path)
/// #     -> Result<(), Box<dyn std::error::Error>> {
/// use toolgate_skills::{MAX_SKILL_FILE_BYTES, SkillOrigin, install_text};
/// use toolgate_web::download_text;
///
/// let url = "https://example.com/skills/pdf-forms/SKILL.md";
/// let text = download_text(web, url, MAX_SKILL_FILE_BYTES as usize).await?;
/// let skill = install_text(&text, url, root, SkillOrigin::User)?;
/// # Ok(())
/// # }
/// ```
///
/// The text is validated before anything is written, it is refused over
/// [`MAX_SKILL_FILE_BYTES`], an existing skill of the name is never
/// touched ([`SkillError::Exists`]), and the skill appears whole or not at
/// all (see [Writing skills](crate#writing-skills)). The file is written as given.
pub fn install_text(
    text: &str,
    source: &str,
    dest_root: &Path,
    origin: SkillOrigin,
) -> Result<Skill, SkillError> {
    let source = Path::new(source);
    let size = text.len() as u64;
    if size > MAX_SKILL_FILE_BYTES {
        return Err(SkillError::TooLarge {
            file: source.to_owned(),
            size,
            max: MAX_SKILL_FILE_BYTES,
        });
    }
    let parsed = SkillFile::parse_unplaced(source, text)?;
    let dest = dest_root.join(&parsed.name);
    write_skill(dest_root, &dest, ".install-", |tmp| {
        write_new(&tmp.join(SKILL_FILE), text.as_bytes())
    })?;
    tracing::info!(from = %source.display(), to = %dest.display(), "skill installed");
    Ok(placed(parsed, &dest, origin))
}

/// The skill of a SKILL.md now at `<dest>/SKILL.md`.
fn placed(mut file: SkillFile, dest: &Path, origin: SkillOrigin) -> Skill {
    file.path = dest.join(SKILL_FILE);
    Skill::from_file(file, origin)
}

/// Builds a skill in a temporary directory under `root` with `build`, then
/// renames it to `dest` (see [Writing skills](crate#writing-skills)).
fn write_skill<T>(
    root: &Path,
    dest: &Path,
    prefix: &str,
    build: impl FnOnce(&Path) -> Result<T, SkillError>,
) -> Result<T, SkillError> {
    let exists = || SkillError::Exists {
        path: dest.to_owned(),
    };
    if fs::symlink_metadata(dest).is_ok() {
        return Err(exists());
    }
    fs::create_dir_all(root).map_err(|e| SkillError::io("create", root, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(root)
        .map_err(|e| SkillError::io("create a directory in", root, e))?;
    let built = build(tmp.path())?;
    publish(tmp, dest).map_err(|e| {
        if fs::symlink_metadata(dest).is_ok() {
            exists()
        } else {
            SkillError::io("create", dest, e)
        }
    })?;
    Ok(built)
}

/// Makes the temporary directory readable like any directory the user
/// creates (a temporary directory starts private), and renames it.
fn publish(tmp: TempDir, dest: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755))?;
    }
    fs::rename(tmp.path(), dest)?;
    // Renamed: there is nothing left to clean up.
    let _ = tmp.keep();
    Ok(())
}

/// Creates `path`, which must not exist, with `bytes`, flushed to disk.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SkillError> {
    let mut file = fs::File::create_new(path).map_err(|e| SkillError::io("create", path, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| SkillError::io("write", path, e))
}

/// What a copy has used of the install limits.
#[derive(Debug, Default)]
struct Budget {
    bytes: u64,
    entries: usize,
}

enum CopyError {
    Skill(SkillError),
    Limit(InstallLimit),
}

impl From<SkillError> for CopyError {
    fn from(error: SkillError) -> Self {
        Self::Skill(error)
    }
}

/// Copies the tree under `from` into the existing directory `to` (rules 3
/// to 5 of [`install_dir`]).
fn copy_tree(from: &Path, to: &Path, depth: usize, budget: &mut Budget) -> Result<(), CopyError> {
    if depth > MAX_INSTALL_DEPTH {
        return Err(CopyError::Limit(InstallLimit::Depth(MAX_INSTALL_DEPTH)));
    }
    let entries = fs::read_dir(from).map_err(|e| SkillError::io("list", from, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| SkillError::io("list", from, e))?;
        names.push(entry.file_name());
        if names.len() > MAX_INSTALL_ENTRIES {
            return Err(CopyError::Limit(InstallLimit::Entries(MAX_INSTALL_ENTRIES)));
        }
    }
    names.sort();
    for name in names {
        if name == ".git" {
            continue;
        }
        let source = from.join(&name);
        let target = to.join(&name);
        let meta = fs::symlink_metadata(&source).map_err(|e| SkillError::io("read", &source, e))?;
        budget.entries += 1;
        if budget.entries > MAX_INSTALL_ENTRIES {
            return Err(CopyError::Limit(InstallLimit::Entries(MAX_INSTALL_ENTRIES)));
        }
        let kind = meta.file_type();
        if kind.is_dir() {
            fs::create_dir(&target).map_err(|e| SkillError::io("create", &target, e))?;
            copy_tree(&source, &target, depth + 1, budget)?;
        } else if kind.is_file() {
            copy_file(&source, &target, &meta, budget)?;
        } else {
            return Err(SkillError::Unsupported {
                path: source,
                kind: kind_name(kind),
            }
            .into());
        }
    }
    Ok(())
}

/// Copies one regular file, within the byte budget, keeping its
/// permissions (rule 5).
fn copy_file(
    source: &Path,
    target: &Path,
    seen: &fs::Metadata,
    budget: &mut Budget,
) -> Result<(), CopyError> {
    let input = fs::File::open(source).map_err(|e| SkillError::io("read", source, e))?;
    let opened = input
        .metadata()
        .map_err(|e| SkillError::io("read", source, e))?;
    if !opened.is_file() || !same_file(seen, &opened) {
        // Replaced (by a link, say) between the look and the open.
        return Err(SkillError::Unsupported {
            path: source.to_owned(),
            kind: "file that changed while it was copied",
        }
        .into());
    }
    let mut output =
        fs::File::create_new(target).map_err(|e| SkillError::io("create", target, e))?;
    let room = MAX_INSTALL_BYTES - budget.bytes;
    // One byte past the room tells a file that grew apart from one that fits.
    let copied = io::copy(&mut input.take(room + 1), &mut output)
        .map_err(|e| SkillError::io("copy", source, e))?;
    if copied > room {
        return Err(CopyError::Limit(InstallLimit::Bytes(MAX_INSTALL_BYTES)));
    }
    budget.bytes += copied;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = opened.permissions().mode() & 0o777;
        fs::set_permissions(target, fs::Permissions::from_mode(mode))
            .map_err(|e| SkillError::io("set permissions of", target, e))?;
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_a: &fs::Metadata, _b: &fs::Metadata) -> bool {
    true
}

/// What a file type is, for [`SkillError::Unsupported`].
fn kind_name(kind: fs::FileType) -> &'static str {
    if kind.is_symlink() {
        return "symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "device";
        }
    }
    "special file"
}
