//! Where a search starts, how the tree is walked, and how each file found is
//! opened without leaving the workspace (the module docs of [`super`] say
//! why each check is there).

use std::borrow::Cow;
use std::fs::File;
#[cfg(target_os = "linux")]
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};

#[cfg(target_os = "linux")]
use rustix::fs::ResolveFlags;
use rustix::fs::{self, Mode, OFlags};
#[cfg(target_os = "linux")]
use rustix::io::Errno;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match, Walk, WalkBuilder};
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
    /// The workspace, for its private paths (toolgate's own state), which
    /// the walk never enters.
    workspace: Workspace,
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
            workspace: workspace.clone(),
        })
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

    /// Calls `work` on every regular file of the scope (rules 2, 3 and 5 of
    /// the module docs; a scope that is one file is that file), from
    /// [`workers`] threads, each with its own `state`. Stops early when
    /// `cancel` is set.
    ///
    /// The walk itself runs on the calling thread and hands the paths over
    /// in batches through a queue of two batches per worker, so that what
    /// waits to be searched stays bounded: a directory of millions of files
    /// is read as it is walked, never held whole. (ripgrep's parallel
    /// walker, which this replaced, reads each directory whole and queues
    /// all its entries at once: about 200 bytes each, 40 MB for a directory
    /// of 200,000 files.) The first batches hold one path each, so that a
    /// few large files are spread over every worker; they grow to
    /// [`MAX_BATCH`], so that on a tree of many small files a worker is
    /// woken once per batch, not once per file (which cost about as much as
    /// searching a small file).
    ///
    /// One case still holds names: the walker (`walkdir`, under `ignore`)
    /// keeps at most ten directories open, so when it descends more than
    /// ten levels below a directory it has not finished, it reads the rest
    /// of that directory's entries into memory to close it. A directory of
    /// millions of files with a deep subtree in it costs its names then.
    pub(super) fn for_each_file<S>(
        &self,
        recursive: bool,
        include_ignored: bool,
        cancel: &AtomicBool,
        state: impl Fn() -> S + Sync,
        work: impl Fn(&mut S, &Path) + Sync,
    ) {
        if self.is_file {
            work(&mut state(), &self.start);
            return;
        }
        let threads = workers();
        let (sender, receiver) = mpsc::sync_channel::<Vec<PathBuf>>(2 * threads);
        // Each worker holds the receiving end: if every worker ended (a
        // panic), it is dropped and the walk's next send fails instead of
        // waiting forever for room in the queue.
        let receiver = Arc::new(Mutex::new(receiver));
        let (state, work) = (&state, &work);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let receiver = Arc::clone(&receiver);
                scope.spawn(move || {
                    let mut state = state();
                    loop {
                        // One worker waits on the channel, the others on the
                        // lock; a poisoned lock only means another worker
                        // panicked, which the scope reports.
                        let next = receiver
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .recv();
                        let Ok(batch) = next else { break };
                        for path in batch {
                            if cancel.load(Ordering::Relaxed) {
                                break;
                            }
                            work(&mut state, &path);
                        }
                    }
                });
            }
            drop(receiver);
            let mut batch = Vec::new();
            let mut sent = 0usize;
            for entry in self.walker(recursive, include_ignored) {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                // Symlinks are `is_symlink`, not `is_file`: skipped.
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                batch.push(entry.into_path());
                if batch.len() > (sent / threads).min(MAX_BATCH - 1) {
                    if sender.send(std::mem::take(&mut batch)).is_err() {
                        break;
                    }
                    sent += 1;
                }
            }
            if !batch.is_empty() {
                let _ = sender.send(batch);
            }
            // Closing the queue lets the workers finish.
            drop(sender);
        });
    }

    /// A walker over the scope (rules 2, 3 and 5 of the module docs).
    fn walker(&self, recursive: bool, include_ignored: bool) -> Walk {
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
        let workspace = self.workspace.clone();
        let private = move |entry: &ignore::DirEntry| {
            entry
                .path()
                .strip_prefix(&root)
                .is_ok_and(|rel| workspace.is_private(rel))
        };
        builder.filter_entry(move |entry| {
            entry.file_name() != ".git" && !above.ignores(entry) && !private(entry)
        });
        builder.build()
    }
}

/// The most paths handed to a worker at once.
const MAX_BATCH: usize = 32;

/// Most worker threads of one search (ripgrep's default too).
const MAX_WORKERS: usize = 12;

/// How many threads search files: one per core, at most [`MAX_WORKERS`].
fn workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(MAX_WORKERS)
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
    fn every_file_is_handed_over_once_and_a_panic_does_not_hang_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            let sub = dir.path().join(format!("d{}", i % 7));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(format!("f{i}")), "x").unwrap();
        }
        let workspace = Workspace::builder(dir.path()).build().unwrap();
        let scope = Scope::new(&workspace, ".").unwrap();
        let cancel = AtomicBool::new(false);
        let seen = Mutex::new(Vec::new());
        scope.for_each_file(
            true,
            false,
            &cancel,
            || (),
            |(), path| seen.lock().unwrap().push(path.to_path_buf()),
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 300);
        // Every worker dies on its first file: the walk, with far more
        // files than the queue holds, must end (and the panic surface).
        let panicked = std::panic::catch_unwind(|| {
            scope.for_each_file(true, false, &cancel, || (), |(), _| panic!("worker"));
        });
        assert!(panicked.is_err());
    }

    #[test]
    fn displays() {
        let cases: &[(&str, &str)] = &[("", "."), ("a", "a"), ("a/b/c.rs", "a/b/c.rs")];
        for (rel, expected) in cases {
            assert_eq!(display(Path::new(rel)), *expected);
        }
    }
}
