//! The workspace: a directory that tools may touch, and nothing outside it.
//!
//! [`Workspace`] is the only way toolgate's tools reach the file system. It
//! resolves every path beneath its root with the kernel's help, so that no
//! `..`, absolute path or symlink (even one swapped in while we look) can
//! lead a read or a write outside; it refuses sensitive files (keys,
//! `.env`, credentials) unless configured otherwise; it refuses to change
//! protected files (toolgate's and git's own configuration); and it refuses
//! private paths (toolgate's own state, when the workspace holds it)
//! outright. How the resolution stays race-free is explained in the `locate`
//! module; how writes stay atomic, in the `write` module; how private paths
//! are matched, in the `private` module.

use std::ffi::OsStr;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{OpenOptionsFollowExt as _, OpenOptionsSyncExt as _};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata, OpenOptions};

pub use error::WorkspaceError;
pub use list::{DirEntryInfo, EntryKind, WalkReport, WalkedFile};
pub use sensitive::{DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, PathPatterns};

use locate::{Lookup, open_error};
use private::PrivatePaths;

mod error;
mod list;
mod locate;
mod private;
mod sensitive;
mod write;

/// Protected whatever the configured patterns.
const GIT_DIR_PATTERN: &str = "/.git";

/// A path inside a [`Workspace`]: relative to the root, normalised, with no
/// `.` or `..` components. The empty path is the root itself.
///
/// The only ways to get one are [`Workspace::resolve`] and the listings
/// ([`Workspace::read_dir`], [`Workspace::walk`]), so holding a `WsPath`
/// means the lexical checks have passed. The physical checks (symlinks,
/// sensitive files) happen again at every operation, because the file system
/// may have changed since.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WsPath {
    rel: PathBuf,
    /// Written with a trailing `/` (or `/.`, `/..`): it must name a
    /// directory (rule 8 of [`Workspace`]).
    dir: bool,
}

impl WsPath {
    /// The path relative to the workspace root; empty for the root itself.
    pub fn as_path(&self) -> &Path {
        &self.rel
    }

    /// Whether this is the workspace root.
    pub fn is_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }

    /// Whether the path was written with a trailing `/` (or ending in `/.`
    /// or `/..`), so that it can only name a directory. Never true for the
    /// root.
    pub fn names_directory(&self) -> bool {
        self.dir
    }

    fn join(&self, name: &OsStr) -> Self {
        Self::new(self.rel.join(name))
    }

    fn new(rel: PathBuf) -> Self {
        Self { rel, dir: false }
    }
}

/// Configures and opens a [`Workspace`].
///
/// Created by [`Workspace::builder`].
#[derive(Clone, Debug)]
pub struct WorkspaceBuilder {
    root: PathBuf,
    patterns: Vec<String>,
    protected: Vec<String>,
    private: Vec<PathBuf>,
    private_modes: bool,
    allow_sensitive: bool,
}

impl WorkspaceBuilder {
    /// Sets the sensitive-file patterns, replacing the current ones.
    ///
    /// By default, the patterns are [`DEFAULT_SENSITIVE_PATTERNS`]. To add to
    /// the defaults, chain them:
    /// `DEFAULT_SENSITIVE_PATTERNS.iter().copied().chain(["*.kdbx"])`.
    ///
    /// # Rules
    ///
    /// Patterns are globs matched against the workspace-relative,
    /// `/`-separated path of a file, both as the caller wrote it and as it
    /// resolves after following symlinks:
    ///
    /// 1. `*`, `?` and `[…]` never match `/`; `**` matches any number of
    ///    directories.
    /// 2. A pattern matches at any depth: `*.pem` refuses `keys/server.pem`,
    ///    `.ssh/**` refuses `backup/.ssh/config`. A leading `/` anchors the
    ///    pattern at the root instead: `/build/*.log` refuses `build/a.log`
    ///    but not `x/build/a.log`.
    /// 3. A pattern that matches a directory matches everything beneath it:
    ///    `credentials` refuses `credentials/prod.json`.
    /// 4. `\` escapes the next character. Matching is case-sensitive except
    ///    on macOS and Windows, whose file systems are not.
    ///
    /// [`build`](Self::build) refuses an empty or malformed pattern.
    pub fn sensitive_patterns<I, S>(&mut self, patterns: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.patterns = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the protected-file patterns, replacing the current ones
    /// (`/.git`, git's directory or file, is always protected on top).
    ///
    /// By default, the patterns are [`DEFAULT_PROTECTED_PATTERNS`]
    /// (toolgate's own configuration and git's). Callers that take
    /// `guardrails.protected_files` from a configuration add them to the
    /// defaults rather than replace them:
    /// `DEFAULT_PROTECTED_PATTERNS.iter().copied().chain(["/Cargo.lock"])`.
    ///
    /// Patterns match exactly as [sensitive
    /// patterns](Self::sensitive_patterns) do. A protected file may be read,
    /// listed and searched, but every operation that would change it fails
    /// with [`WorkspaceError::Protected`]: see rule 5 on [`Workspace`].
    /// [`allow_sensitive`](Self::allow_sensitive) does not lift it; nothing
    /// does, short of leaving the pattern out.
    ///
    /// [`build`](Self::build) refuses an empty or malformed pattern.
    pub fn protected_patterns<I, S>(&mut self, patterns: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protected = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Allows reading and writing sensitive files.
    ///
    /// By default, this is `false`: every operation on a path that matches a
    /// sensitive-file pattern fails with [`WorkspaceError::Sensitive`]. When
    /// `true`, [`Workspace::is_sensitive`] still reports the match, and
    /// [`Workspace::walk`] still lists the files; nothing is refused.
    pub fn allow_sensitive(&mut self, yes: bool) -> &mut Self {
        self.allow_sensitive = yes;
        self
    }

    /// Sets the private paths, replacing the current ones: absolute host
    /// paths that no operation may read, list, write or create, inside the
    /// workspace or out. toolgate's host passes its own state (its
    /// configuration and data directories, the store, the audit file), so
    /// that a workspace that holds them (the home directory) does not hand
    /// them to a model.
    ///
    /// By default, there are none.
    ///
    /// # Rules
    ///
    /// 1. Each path must be absolute; [`build`](Self::build) refuses a
    ///    relative one with [`WorkspaceError::PrivateNotAbsolute`].
    /// 2. A private path covers itself and everything beneath it, by whole
    ///    components, in two spellings: as given (`.` and `..` folded), and
    ///    as it resolves on disk when [`build`](Self::build) runs (symlinks
    ///    followed as far as the path exists).
    /// 3. [`Workspace::resolve`] refuses a path that, as written, lies in a
    ///    private path with [`WorkspaceError::Private`]: a relative path
    ///    after `..` is folded, and an absolute one, also outside the root
    ///    (where it would otherwise be [`WorkspaceError::OutsideWorkspace`]).
    /// 4. Every operation refuses a path that *resolves* into a private path
    ///    (a symlink inside the workspace that leads there), and a write
    ///    whose missing parent directories would be created there, before
    ///    anything is created.
    /// 5. Listings and walks leave private entries out silently, as they
    ///    leave out symlinks that lead outside; they are not counted as
    ///    sensitive files.
    /// 6. A private path that is the root or holds it is left out (a
    ///    `tracing` debug line says so): the person chose to work there.
    /// 7. Nothing lifts the refusal: not [`allow_sensitive`](Self::allow_sensitive),
    ///    not the patterns.
    pub fn private_paths<I, P>(&mut self, paths: I) -> &mut Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.private = paths.into_iter().map(Into::into).collect();
        self
    }

    /// Makes the files this workspace creates private to the user: mode
    /// `0600` for files and `0700` for directories, whatever the umask, and
    /// a file it rewrites or appends to loses the group and other bits.
    /// For directories of toolgate's own (memory, persona), not for a
    /// person's project.
    ///
    /// By default, this is `false`: new files get `0666` and directories
    /// `0777`, less the umask, and a rewritten file keeps its permissions.
    pub fn private_modes(&mut self, yes: bool) -> &mut Self {
        self.private_modes = yes;
        self
    }

    /// Opens the workspace.
    ///
    /// The root must exist and be a directory; it is canonicalised (symlinks
    /// resolved, made absolute) once, here, and the workspace then holds an
    /// open handle on it, so renaming the root later does not redirect it.
    pub fn build(&self) -> Result<Workspace, WorkspaceError> {
        let root_error = |source| WorkspaceError::Root {
            root: self.root.clone(),
            source,
        };
        let root = std::fs::canonicalize(&self.root).map_err(root_error)?;
        if !std::fs::metadata(&root).map_err(root_error)?.is_dir() {
            return Err(WorkspaceError::RootNotADirectory {
                root: self.root.clone(),
            });
        }
        let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(root_error)?;
        // The root as the caller spelled it (made absolute), so that an
        // absolute path or symlink through e.g. `/tmp` -> `/private/tmp` on
        // macOS is still recognised as inside.
        let given_root = std::path::absolute(&self.root).unwrap_or_else(|_| root.clone());
        let sensitive = PathPatterns::new(self.patterns.iter().cloned())?;
        // Git's own directory, always: the file tools have no business in
        // it, and a `.git` *file* (`gitdir: elsewhere`) would point the
        // user's git at a configuration of the model's choosing.
        let protected = PathPatterns::new(
            self.protected
                .iter()
                .map(String::as_str)
                .chain([GIT_DIR_PATTERN])
                .map(str::to_owned),
        )?;
        let private = PrivatePaths::new(&self.private, &root, &given_root)?;
        Ok(Workspace {
            inner: Arc::new(Inner {
                root,
                given_root,
                dir,
                sensitive,
                protected,
                private,
                private_modes: self.private_modes,
                allow_sensitive: self.allow_sensitive,
            }),
        })
    }
}

/// A directory tree that tools may read and write, and nothing outside it.
///
/// Cheap to clone (an [`Arc`] inside); `Send` and `Sync`.
///
/// # Rules
///
/// 1. [`resolve`](Self::resolve) turns what a model or a user typed into a
///    [`WsPath`], lexically: a NUL byte is refused; an absolute path must lie
///    under the root and becomes relative; `.` and `..` are folded, and a
///    `..` that would climb above the root is refused. `""` and `"."` are the
///    root.
/// 2. Every operation then walks the path beneath the root one component at
///    a time from an open handle on the root, following symlinks itself:
///    symlinks that stay inside are followed (relative or absolute); a
///    symlink that leads outside fails with
///    [`WorkspaceError::SymlinkEscapes`]; more than 40 symlinks fail with
///    [`WorkspaceError::TooManySymlinks`].
/// 3. Each step opens one name with `O_NOFOLLOW` through `cap_std`, hence
///    `openat2(RESOLVE_BENEATH)` on Linux: a symlink swapped in between the
///    check and the use is refused by the kernel
///    ([`WorkspaceError::Changed`]), never followed out.
/// 4. If the path as written, or the path it resolves to, matches a
///    sensitive-file pattern, reading, writing, appending, removing and
///    listing fail with [`WorkspaceError::Sensitive`], unless the workspace
///    allows sensitive files. [`metadata`](Self::metadata) and
///    [`exists`](Self::exists) reveal no content and are not refused.
///    Listings ([`read_dir`](Self::read_dir), [`walk`](Self::walk)) do not
///    fail on a sensitive entry: they mark it or skip it, and count it.
/// 5. If the path as written, the path it resolves to, or (for a path that
///    does not exist yet) the path a write would create, matches a
///    protected-file pattern, every operation that changes the file system
///    there fails with [`WorkspaceError::Protected`] before anything is
///    created: [`write_atomic`](Self::write_atomic),
///    [`append`](Self::append), [`remove_file`](Self::remove_file), and the
///    creation of missing parent directories. A rename is a write of the
///    destination plus a removal of the source, so both ends are checked.
///    `/.git` (the directory, or a `gitdir:` file) is always protected,
///    whatever the patterns: the file tools never write git's internals.
///    Reading, listing and searching protected files is allowed, and
///    [`allow_sensitive`](WorkspaceBuilder::allow_sensitive) does not lift
///    the refusal. Removing a symlink that points at a protected file is
///    allowed: it removes the link, never the file.
/// 6. Hard links cannot be told apart by path: a hard link inside the root
///    to a file outside is the same file, and reading it reads that file.
///    Tools that let a model create hard links must not exist. What the
///    workspace does guarantee is that no write through it modifies an
///    inode that has other links:
///    [`write_atomic`](Self::write_atomic) always writes a new inode and
///    renames it into place, and [`append`](Self::append) to a file with
///    more than one link copies it to a new inode first. The other links
///    keep the old content.
/// 7. A private path ([`WorkspaceBuilder::private_paths`]: toolgate's own
///    state) is refused to every operation, as written and as it resolves,
///    with [`WorkspaceError::Private`] — reads, metadata, writes and the
///    creation of missing directories alike — and listings leave it out.
///    This comes before every other rule and nothing lifts it.
/// 8. A path written with a trailing `/` (or ending in `/.` or `/..`) names
///    a directory: reading, listing or walking it fails with
///    [`WorkspaceError::SlashOnFile`] when it is a file, and writing,
///    appending to or removing it fails with
///    [`WorkspaceError::SlashOnWrite`] before anything is created. The
///    root is a directory however it is written.
///
/// # Example
///
/// ```
/// use toolgate_core::{Workspace, WorkspaceError};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let ws = Workspace::builder(dir.path()).build()?;
///
/// let notes = ws.resolve("notes/today.md")?;
/// ws.write_atomic(&notes, b"buy milk\n")?;
/// assert_eq!(ws.read(&notes)?, b"buy milk\n");
/// assert_eq!(ws.walk(&ws.resolve(".")?, true)?, vec![notes]);
///
/// let err = ws.resolve("../etc/passwd").unwrap_err();
/// assert!(err.to_string().contains("use a path inside it"));
/// let env = ws.resolve(".env")?;
/// assert!(matches!(ws.read(&env), Err(WorkspaceError::Sensitive { .. })));
/// let config = ws.resolve("./toolgate.yaml")?;
/// assert!(matches!(
///     ws.write_atomic(&config, b"confirmation: {mode: yolo}\n"),
///     Err(WorkspaceError::Protected { .. })
/// ));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Workspace {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Canonical root.
    root: PathBuf,
    /// The root as configured, made absolute but not canonical.
    given_root: PathBuf,
    /// Handle on the root; every operation starts from it.
    dir: Dir,
    sensitive: PathPatterns,
    protected: PathPatterns,
    private: PrivatePaths,
    /// New files `0600`, new directories `0700`.
    private_modes: bool,
    allow_sensitive: bool,
}

impl Workspace {
    /// Starts configuring a workspace rooted at `root`.
    pub fn builder(root: impl Into<PathBuf>) -> WorkspaceBuilder {
        WorkspaceBuilder {
            root: root.into(),
            patterns: DEFAULT_SENSITIVE_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            protected: DEFAULT_PROTECTED_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            private: Vec::new(),
            private_modes: false,
            allow_sensitive: false,
        }
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The sensitive patterns, compiled (whether or not the workspace
    /// allows sensitive files): for a part that judges paths by the same
    /// patterns (the guardrails) without compiling them again. (The
    /// protected ones are not offered: the workspace adds `/.git` to them.)
    pub fn sensitive_set(&self) -> &PathPatterns {
        &self.inner.sensitive
    }

    /// Checks and normalises a path given by a user or a model, without
    /// touching the file system (rule 1 in the [type docs](Self)).
    pub fn resolve(&self, user_path: &str) -> Result<WsPath, WorkspaceError> {
        if user_path.contains('\0') {
            return Err(WorkspaceError::NulByte {
                path: user_path.to_owned(),
            });
        }
        let outside = || WorkspaceError::OutsideWorkspace {
            path: user_path.to_owned(),
            root: self.inner.root.clone(),
        };
        let private = || WorkspaceError::Private {
            path: user_path.to_owned(),
        };
        let path = Path::new(user_path);
        let rel = if path.has_root() {
            if self.inner.private.covers_abs(path) {
                return Err(private());
            }
            self.strip_root(path).ok_or_else(outside)?
        } else {
            path
        };
        let mut normal = PathBuf::new();
        for component in rel.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !normal.pop() {
                        return Err(outside());
                    }
                }
                Component::Normal(name) => normal.push(name),
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        if self.inner.private.covers(&normal) {
            return Err(private());
        }
        // `Path::components` forgets a trailing `/` and a trailing `.`;
        // the text still has them.
        let dir = !normal.as_os_str().is_empty()
            && (user_path.ends_with('/')
                || user_path.ends_with("/.")
                || matches!(rel.components().next_back(), Some(Component::ParentDir)));
        Ok(WsPath { rel: normal, dir })
    }

    /// The path relative to the root, `/`-separated; `.` for the root. For
    /// messages to people and models, not for the file system (non-UTF-8
    /// bytes are replaced).
    pub fn display(&self, p: &WsPath) -> String {
        rel_display(&p.rel)
    }

    /// Where `p` really is inside the workspace: symlinks on the way that
    /// stay inside followed, so that a policy can judge the place a call
    /// would reach, not only its name. A path that does not exist yet is
    /// its nearest existing ancestor, resolved, with the missing rest
    /// appended (where a write would create it). `None` when the path leads
    /// out of the workspace or cannot be resolved (a loop).
    pub fn physical(&self, p: &WsPath) -> Option<WsPath> {
        match self.locate(p, Lookup::READ) {
            Ok(located) => Some(WsPath::new(located.phys)),
            Err(WorkspaceError::NotFound { .. }) => {
                let name = p.rel.file_name()?;
                let parent = WsPath::new(p.rel.parent().map(Path::to_owned).unwrap_or_default());
                Some(self.physical(&parent)?.join(name))
            }
            Err(_) => None,
        }
    }

    /// The first sensitive-file pattern that `p`, as written or as it
    /// resolves, matches. Reported even when the workspace allows sensitive
    /// files.
    pub fn is_sensitive(&self, p: &WsPath) -> Option<&str> {
        if let Some(pattern) = self.inner.sensitive.matches(&p.rel) {
            return Some(pattern);
        }
        self.resolves_sensitive(p)
    }

    /// The first sensitive-file pattern that the path `p` resolves to
    /// matches, when that differs from `p` as written (a symlink on the
    /// way). For callers that have already judged `p` as written, with
    /// [`sensitive_refusal`](Self::sensitive_refusal).
    pub fn resolves_sensitive(&self, p: &WsPath) -> Option<&str> {
        let located = self.locate(p, Lookup::READ).ok()?;
        if located.phys == p.rel {
            return None;
        }
        self.inner.sensitive.matches(&located.phys)
    }

    /// The sensitive-file pattern for which this workspace refuses `rel`, a
    /// path relative to the root, judged on the path alone: nothing on disk
    /// is looked at and no symlink is followed. `None` when `rel` matches no
    /// pattern, or when the workspace allows sensitive files.
    ///
    /// For tools that walk the tree themselves (the search tools) and must
    /// skip sensitive files cheaply, for every file: they call it with the
    /// path as found and again with the path the opened file really has.
    pub fn sensitive_refusal(&self, rel: &Path) -> Option<&str> {
        if self.inner.allow_sensitive {
            return None;
        }
        self.inner.sensitive.matches(rel)
    }

    /// The first protected-file pattern that `p`, as written or as it
    /// resolves (following symlinks that stay inside), matches.
    pub fn is_protected(&self, p: &WsPath) -> Option<&str> {
        if let Some(pattern) = self.inner.protected.matches(&p.rel) {
            return Some(pattern);
        }
        let located = self.locate(p, Lookup::READ).ok()?;
        self.inner.protected.matches(&located.phys)
    }

    /// Refuses `p` as a write to it would be refused by policy, without
    /// changing anything: [`WorkspaceError::Sensitive`] or
    /// [`WorkspaceError::Protected`] when `p` as written, as it resolves, or
    /// as a write would create it matches (rules 4 and 5 in the
    /// [type docs](Self)); and the errors of resolving it (a symlink that
    /// leaves, a loop). A missing file or directory is no error.
    ///
    /// For tools that make several changes and must refuse before making
    /// any (a patch of several files); the write itself checks again.
    pub fn check_write(&self, p: &WsPath) -> Result<(), WorkspaceError> {
        self.check_slash_write(p)?;
        self.check_sensitive(p, None)?;
        self.check_protected(p, None)?;
        match self.locate(p, Lookup::PROBE) {
            Ok(located) => {
                self.check_sensitive(p, Some(&located.phys))?;
                self.check_protected(p, Some(&located.phys))
            }
            Err(WorkspaceError::NotFound { .. }) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Whether `p` exists inside the workspace (following symlinks that stay
    /// inside). A symlink that leads outside does not exist, as far as the
    /// workspace is concerned.
    pub fn exists(&self, p: &WsPath) -> bool {
        self.locate(p, Lookup::READ).is_ok_and(|located| {
            located
                .meta
                .is_some_and(|meta| !p.names_directory() || meta.is_dir())
        })
    }

    /// The metadata of what `p` resolves to (following symlinks that stay
    /// inside).
    pub fn metadata(&self, p: &WsPath) -> Result<Metadata, WorkspaceError> {
        let located = self.locate(p, Lookup::READ)?;
        let meta = located.meta.ok_or_else(|| WorkspaceError::NotFound {
            path: self.display(p),
        })?;
        self.check_slash_read(p, &meta)?;
        Ok(meta)
    }

    /// Reads a whole file.
    pub fn read(&self, p: &WsPath) -> Result<Vec<u8>, WorkspaceError> {
        self.read_impl(p, None)
    }

    /// Reads a whole file, refusing it with [`WorkspaceError::TooLarge`] if
    /// it is larger than `max` bytes (also if it grows past `max` while being
    /// read).
    pub fn read_limited(&self, p: &WsPath, max: u64) -> Result<Vec<u8>, WorkspaceError> {
        self.read_impl(p, Some(max))
    }

    /// Opens a regular file for reading, after the same checks as
    /// [`read`](Self::read): for callers that read a large file in parts
    /// instead of whole.
    pub fn open_read(&self, p: &WsPath) -> Result<std::fs::File, WorkspaceError> {
        self.open_read_checked(p, None)
            .map(cap_std::fs::File::into_std)
    }

    /// Opens `p` for reading; with `max`, refuses it first if it is larger.
    fn open_read_checked(
        &self,
        p: &WsPath,
        max: Option<u64>,
    ) -> Result<cap_std::fs::File, WorkspaceError> {
        let user = self.display(p);
        self.check_sensitive(p, None)?;
        let located = self.locate(p, Lookup::READ)?;
        if located.phys != p.rel {
            self.check_sensitive(p, Some(&located.phys))?;
        }
        if let Some(meta) = &located.meta {
            self.check_slash_read(p, meta)?;
        }
        let (Some(name), Some(meta)) = (&located.name, &located.meta) else {
            return Err(match located.meta {
                None => WorkspaceError::NotFound { path: user },
                Some(_) => WorkspaceError::NotAFile { path: user },
            });
        };
        // Checked before opening so that a FIFO is never opened at all.
        if !meta.is_file() {
            return Err(WorkspaceError::NotAFile { path: user });
        }
        if let Some(max) = max
            && meta.len() > max
        {
            return Err(WorkspaceError::TooLarge {
                path: user,
                size: meta.len(),
                max,
            });
        }
        // `O_NOFOLLOW`: the name was not a symlink when `locate` looked; if
        // it is one now, fail rather than follow it. `O_NONBLOCK`: if a FIFO
        // was swapped in, do not hang in `open`; the type check below then
        // refuses it. (Regular files ignore `O_NONBLOCK`.)
        let file = located
            .parent
            .open_with(
                name,
                OpenOptions::new()
                    .read(true)
                    .follow(cap_fs_ext::FollowSymlinks::No)
                    .nonblock(true),
            )
            .map_err(|err| open_error(err, "read", &user, &located.phys))?;
        let opened = file.metadata().map_err(|source| WorkspaceError::Io {
            action: "read",
            path: user.clone(),
            source,
        })?;
        if !opened.is_file() {
            return Err(WorkspaceError::NotAFile { path: user });
        }
        Ok(file)
    }

    fn read_impl(&self, p: &WsPath, max: Option<u64>) -> Result<Vec<u8>, WorkspaceError> {
        let user = self.display(p);
        let mut file = self.open_read_checked(p, max)?;
        let io_error = |source| WorkspaceError::Io {
            action: "read",
            path: user.clone(),
            source,
        };
        let too_large = |size: u64, max: u64| WorkspaceError::TooLarge {
            path: user.clone(),
            size,
            max,
        };
        let opened = file.metadata().map_err(io_error)?;
        // Room for the whole file and one byte more, so a file that has
        // not grown since the `fstat` is read in two `read` calls (the
        // second sees EOF) instead of doubling up from 32 bytes.
        let expected = opened.len().min(max.unwrap_or(u64::MAX)).saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        match max {
            Some(max) => {
                if opened.len() > max {
                    return Err(too_large(opened.len(), max));
                }
                let read = (&mut file)
                    .take(max.saturating_add(1))
                    .read_to_end(&mut bytes)
                    .map_err(io_error)?;
                if read as u64 > max {
                    return Err(too_large(read as u64, max));
                }
            }
            None => {
                file.read_to_end(&mut bytes).map_err(io_error)?;
            }
        }
        Ok(bytes)
    }

    /// Removes a file, or a symlink itself (never what it points to, so a
    /// symlink that leads outside may be removed).
    pub fn remove_file(&self, p: &WsPath) -> Result<(), WorkspaceError> {
        let user = self.display(p);
        self.check_slash_write(p)?;
        self.check_sensitive(p, None)?;
        self.check_protected(p, None)?;
        let located = self.locate(p, Lookup::ENTRY)?;
        self.check_sensitive(p, Some(&located.phys))?;
        self.check_protected(p, Some(&located.phys))?;
        let (Some(name), Some(meta)) = (&located.name, &located.meta) else {
            return Err(match located.meta {
                None => WorkspaceError::NotFound { path: user },
                Some(_) => WorkspaceError::NotAFile { path: user },
            });
        };
        if meta.is_dir() {
            return Err(WorkspaceError::NotAFile { path: user });
        }
        // `unlinkat` never follows the last component.
        located
            .parent
            .remove_file(name)
            .map_err(|err| open_error(err, "remove", &user, &located.phys))
    }

    /// Refuses `p` if it (as written, or its physical path `phys` when
    /// given) is sensitive and sensitive files are not allowed.
    fn check_sensitive(&self, p: &WsPath, phys: Option<&Path>) -> Result<(), WorkspaceError> {
        if self.inner.allow_sensitive {
            return Ok(());
        }
        let rel = phys.unwrap_or(&p.rel);
        match self.inner.sensitive.matches(rel) {
            Some(pattern) => Err(WorkspaceError::Sensitive {
                path: self.display(p),
                pattern: pattern.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses `p` if it (as written, or its physical path `phys` when
    /// given) is protected.
    fn check_protected(&self, p: &WsPath, phys: Option<&Path>) -> Result<(), WorkspaceError> {
        let rel = phys.unwrap_or(&p.rel);
        match self.inner.protected.matches(rel) {
            Some(pattern) => Err(WorkspaceError::Protected {
                path: self.display(p),
                pattern: pattern.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses to write, append to or remove `p` when it was written with a
    /// trailing `/` (rule 8 in the [type docs](Self)).
    fn check_slash_write(&self, p: &WsPath) -> Result<(), WorkspaceError> {
        if p.names_directory() {
            return Err(WorkspaceError::SlashOnWrite {
                path: self.display(p),
            });
        }
        Ok(())
    }

    /// Refuses `p`, found to be `meta`, when it was written with a trailing
    /// `/` and is not a directory (rule 8 in the [type docs](Self)).
    fn check_slash_read(&self, p: &WsPath, meta: &Metadata) -> Result<(), WorkspaceError> {
        if p.names_directory() && !meta.is_dir() {
            return Err(WorkspaceError::SlashOnFile {
                path: self.display(p),
            });
        }
        Ok(())
    }

    /// `abs` relative to the root, if it lies under the root as
    /// canonicalised or as configured. Component-wise, so `/ws-evil` is not
    /// under `/ws`.
    fn strip_root<'a>(&self, abs: &'a Path) -> Option<&'a Path> {
        abs.strip_prefix(&self.inner.root)
            .or_else(|_| abs.strip_prefix(&self.inner.given_root))
            .ok()
    }
}

/// A workspace-relative path for messages: `/`-separated, `.` for the root.
fn rel_display(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        return ".".to_owned();
    }
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}
