//! Where a search starts, how the tree is walked, and how each file found is
//! opened without leaving the workspace (the module docs of [`super`] say
//! why each check is there).

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};
#[cfg(target_os = "linux")]
use std::{
    os::fd::OwnedFd,
    sync::atomic::{AtomicBool, Ordering},
};

#[cfg(target_os = "linux")]
use rustix::fs::ResolveFlags;
use rustix::fs::{self, Mode, OFlags};
#[cfg(target_os = "linux")]
use rustix::io::Errno;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match, WalkBuilder, WalkParallel};
use toolgate_core::Workspace;

/// The start of a search, checked against the workspace.
#[derive(Debug)]
pub(super) struct Scope {
    /// The canonical root of the workspace.
    root: PathBuf,
    /// Where the walk starts: absolute, canonical (symlinks inside resolved).
    start: PathBuf,
    /// `start` relative to the root.
    start_rel: PathBuf,
    /// The start as the caller wrote it, workspace-relative; found files are
    /// reported under it.
    shown: PathBuf,
    /// `shown` for messages: `/`-separated, `.` for the root.
    pub(super) display: String,
    /// Whether the start is a single file rather than a directory.
    pub(super) is_file: bool,
    opener: Opener,
}

impl Scope {
    /// Checks `user_path` (rule 1 of the module docs): inside the workspace,
    /// existing, a directory or a regular file, and not sensitive as written
    /// nor as it resolves.
    pub(super) fn new(workspace: &Workspace, user_path: &str) -> Result<Self, String> {
        let path = workspace.resolve(user_path).map_err(|e| e.to_string())?;
        let display = workspace.display(&path);
        let meta = workspace.metadata(&path).map_err(|e| e.to_string())?;
        if !meta.is_dir() && !meta.is_file() {
            return Err(format!(
                "`{display}` is neither a file nor a directory; give a directory to search"
            ));
        }
        let root = workspace.root().to_path_buf();
        // `metadata` walked the path beneath the root and found no symlink
        // leading out; canonicalising gives the same answer (or, if the tree
        // changed meanwhile, something the check below refuses).
        let start = std::fs::canonicalize(root.join(path.as_path()))
            .map_err(|error| format!("`{display}` cannot be searched: {error}"))?;
        let physical = start
            .strip_prefix(&root)
            .map_err(|_| format!("path `{display}` leaves the workspace; use a path inside it"))?;
        for rel in [path.as_path(), physical] {
            if rel.components().any(|c| c.as_os_str() == ".git") {
                return Err(format!(
                    "`{display}` is inside a `.git` directory, which holds git's own data and is never searched; \
                     use git commands to inspect it"
                ));
            }
            if workspace.is_private(rel) {
                return Err(format!(
                    "refusing `{display}`: it is toolgate's own configuration or data; \
                     no tool may read or change it"
                ));
            }
            if let Some(pattern) = workspace.sensitive_refusal(rel) {
                return Err(format!(
                    "`{display}` matches the sensitive-file pattern `{pattern}`; its content cannot be searched"
                ));
            }
        }
        Ok(Self {
            opener: Opener::new(&root),
            start_rel: physical.to_path_buf(),
            shown: path.as_path().to_path_buf(),
            root,
            start,
            display,
            is_file: meta.is_file(),
        })
    }

    /// The absolute path the walk starts from.
    pub(super) fn start(&self) -> &Path {
        &self.start
    }

    /// The workspace-relative path a found file is reported under, and the
    /// one it has physically (they differ when `path` went through a symlink
    /// inside the workspace).
    pub(super) fn relative<'a>(&self, found: &'a Path) -> Option<(Cow<'a, Path>, &'a Path)> {
        let physical = found.strip_prefix(&self.root).ok()?;
        if self.shown == self.start_rel {
            return Some((Cow::Borrowed(physical), physical));
        }
        let below = physical.strip_prefix(&self.start_rel).ok()?;
        let shown = if below.as_os_str().is_empty() {
            self.shown.clone()
        } else {
            self.shown.join(below)
        };
        Some((Cow::Owned(shown), physical))
    }

    /// Opens a found file (see [`Opener::open`]).
    pub(super) fn open<'a>(
        &self,
        found: &Path,
        physical: &'a Path,
        access: Access,
    ) -> Option<(File, Cow<'a, Path>)> {
        self.opener.open(found, physical, access)
    }

    /// A parallel walker over the scope (rules 2, 3 and 5 of the module
    /// docs).
    pub(super) fn walker(
        &self,
        workspace: &Workspace,
        recursive: bool,
        include_ignored: bool,
    ) -> WalkParallel {
        let mut builder = WalkBuilder::new(&self.start);
        builder
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .parents(false)
            .git_global(false)
            .ignore(!include_ignored)
            .git_ignore(!include_ignored)
            .git_exclude(!include_ignored)
            .require_git(false)
            .max_depth((!recursive).then_some(1));
        let above = if include_ignored {
            AncestorIgnores::default()
        } else {
            AncestorIgnores::new(&self.root, &self.start)
        };
        // Private paths (toolgate's own state) are not entered at all: the
        // files found are checked again on their way out, but a walk of
        // the home directory need not read the store's directories.
        let root = self.root.clone();
        let workspace = workspace.clone();
        let private = move |entry: &DirEntry| {
            entry
                .path()
                .strip_prefix(&root)
                .is_ok_and(|rel| workspace.is_private(rel))
        };
        builder.filter_entry(move |entry| {
            entry.file_name() != ".git" && !above.ignores(entry) && !private(entry)
        });
        builder.build_parallel()
    }
}

/// The ignore files of the directories between the workspace root and the
/// start of a walk (excluded), deepest first.
///
/// The walker reads the ignore files of every directory it enters, but not
/// those above its start, unless told to read *all* parents, up to `/`,
/// which would read files outside the workspace and make results depend on
/// where the workspace sits. These fill the gap between the two, so that
/// searching `src/` skips what searching `.` skips there.
#[derive(Debug, Default)]
struct AncestorIgnores {
    matchers: Vec<Gitignore>,
}

impl AncestorIgnores {
    fn new(root: &Path, start: &Path) -> Self {
        let Ok(below) = start.strip_prefix(root) else {
            return Self::default();
        };
        let mut dirs = vec![root.to_path_buf()];
        let mut dir = root.to_path_buf();
        let mut components: Vec<Component<'_>> = below.components().collect();
        // The start reads its own ignore files.
        components.pop();
        for component in components {
            dir.push(component);
            dirs.push(dir.clone());
        }
        let mut matchers = Vec::new();
        for dir in dirs.iter().rev() {
            let mut builder = GitignoreBuilder::new(dir);
            // Lowest precedence first: a later rule wins within one matcher,
            // and `.ignore` beats `.gitignore` as in the walker. A missing
            // file is no error.
            if dir == root {
                let _ = builder.add(dir.join(".git/info/exclude"));
            }
            let _ = builder.add(dir.join(".gitignore"));
            let _ = builder.add(dir.join(".ignore"));
            if let Ok(matcher) = builder.build()
                && !matcher.is_empty()
            {
                matchers.push(matcher);
            }
        }
        Self { matchers }
    }

    /// Whether the deepest ancestor with an opinion on `entry` ignores it.
    fn ignores(&self, entry: &DirEntry) -> bool {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        for matcher in &self.matchers {
            match matcher.matched(entry.path(), is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// How a found file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// To read its content.
    Read,
    /// Only to learn what and where it is (`find_files`): no read
    /// permission needed on Linux, where this uses `O_PATH`.
    Locate,
}

/// Opens the files a walk finds, never outside the workspace root.
#[derive(Debug)]
pub(super) struct Opener {
    root: PathBuf,
    /// A handle on the root for `openat2(RESOLVE_BENEATH)`; `None` where
    /// that is not available (or the root could not be opened).
    #[cfg(target_os = "linux")]
    dir: Option<OwnedFd>,
}

/// Whether `openat2` turned out to be missing (kernels before 5.6, or
/// filtered out by a seccomp policy); checked once per process.
#[cfg(target_os = "linux")]
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Opener {
    /// An opener beneath `root`, which must be canonical.
    pub(super) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            #[cfg(target_os = "linux")]
            dir: fs::open(
                root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok(),
        }
    }

    /// Opens `found` (absolute; `rel` is the same path relative to the
    /// root), found by the walker a moment ago, if it is still a regular
    /// file inside the root; returns it with its real path relative to the
    /// root.
    ///
    /// `None` for anything else: a symlink, a FIFO, a file that vanished or
    /// moved outside, a path whose directories were swapped for symlinks.
    /// The module docs of [`super`] explain each step.
    pub(super) fn open<'a>(
        &self,
        found: &Path,
        rel: &'a Path,
        access: Access,
    ) -> Option<(File, Cow<'a, Path>)> {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.dir
            && !NO_OPENAT2.load(Ordering::Relaxed)
        {
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match fs::openat2(dir, rel, flags(access), Mode::empty(), resolve) {
                Ok(fd) => {
                    // No symlink was followed and nothing left the root:
                    // the file is at `rel`.
                    let file = File::from(fd);
                    return file
                        .metadata()
                        .ok()?
                        .is_file()
                        .then_some((file, Cow::Borrowed(rel)));
                }
                Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
                Err(_) => return None,
            }
        }
        let file = File::from(fs::open(found, flags(access), Mode::empty()).ok()?);
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let real = real_path(&file, found, &meta)?;
        // Component-wise: `/ws-evil/x` is not under `/ws`.
        let real = real.strip_prefix(&self.root).ok()?;
        Some((file, Cow::Owned(real.to_path_buf())))
    }
}

/// `O_NOFOLLOW`: a symlink as the last component fails the open.
/// `O_NONBLOCK`: a FIFO swapped in does not hang it. `O_NOCTTY`: a terminal
/// does not become ours.
fn flags(access: Access) -> OFlags {
    let base = OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match access {
        Access::Read => base | OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        #[cfg(target_os = "linux")]
        Access::Locate => base | OFlags::PATH,
        #[cfg(not(target_os = "linux"))]
        Access::Locate => base | OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
    }
}

/// Where the open `file` really is: the kernel's own answer from
/// `/proc/self/fd` on Linux, otherwise the canonical `path` if it still
/// names the same file as the descriptor.
fn real_path(file: &File, path: &Path, meta: &std::fs::Metadata) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;

        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return Some(real);
        }
    }
    let _ = file;
    let real = std::fs::canonicalize(path).ok()?;
    let named = std::fs::metadata(&real).ok()?;
    (named.dev() == meta.dev() && named.ino() == meta.ino()).then_some(real)
}

/// A workspace-relative path for output: `/`-separated, `.` for the root.
pub(super) fn display(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        return ".".to_owned();
    }
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_refuses_what_is_not_a_regular_file_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("out.txt"), "out").unwrap();
        std::os::unix::fs::symlink(dir.path().join("out.txt"), root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("dirlink")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("inlink")).unwrap();

        let check = |opener: &Opener| {
            for access in [Access::Read, Access::Locate] {
                let open = |rel: &'static str| {
                    opener
                        .open(&root.join(rel), Path::new(rel), access)
                        .map(|(_, real)| real)
                };
                assert_eq!(open("sub/a.txt").unwrap(), Path::new("sub/a.txt"));
                assert!(open("link.txt").is_none());
                // The last component is a regular file, but a directory on
                // the way is a symlink out (or in: the walk never follows
                // one, so a path through one means a swap).
                assert!(open("dirlink/out.txt").is_none());
                assert!(open("sub").is_none());
                assert!(open("missing").is_none());
            }
        };
        let opener = Opener::new(&root);
        check(&opener);
        // The fallback without `openat2`: `O_NOFOLLOW`, then the real path.
        let fallback = Opener {
            root: root.clone(),
            #[cfg(target_os = "linux")]
            dir: None,
        };
        check(&fallback);
        let (_, real) = fallback
            .open(
                &root.join("inlink/a.txt"),
                Path::new("inlink/a.txt"),
                Access::Read,
            )
            .unwrap();
        assert_eq!(real, Path::new("sub/a.txt"));
        #[cfg(target_os = "linux")]
        assert!(
            opener
                .open(
                    &root.join("inlink/a.txt"),
                    Path::new("inlink/a.txt"),
                    Access::Read
                )
                .is_none()
        );
    }

    #[test]
    fn displays() {
        let cases: &[(&str, &str)] = &[("", "."), ("a", "a"), ("a/b/c.rs", "a/b/c.rs")];
        for (rel, expected) in cases {
            assert_eq!(display(Path::new(rel)), *expected);
        }
    }
}
