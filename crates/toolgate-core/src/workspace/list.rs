//! Listing a directory and walking a tree.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt as _, MetadataExt as _};
use cap_std::fs::Dir;

use super::locate::{Located, Lookup, open_error};
use super::{Workspace, WorkspaceError, WsPath};

/// How deep [`Workspace::walk`] descends; deeper directories are skipped
/// (with a `tracing` warning) rather than risk the stack.
const MAX_DEPTH: usize = 256;

/// What a directory entry is, as [`Workspace::read_dir`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symlink that does not lead outside the workspace. It may still be
    /// dangling, or part of a loop.
    SymlinkInside,
    /// A symlink that leads outside the workspace. Every operation through
    /// it is refused; listings should not offer it.
    SymlinkOutside,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// One entry of [`Workspace::read_dir`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirEntryInfo {
    /// The entry's file name (non-UTF-8 bytes replaced).
    pub name: String,
    /// The entry's path, usable with the other [`Workspace`] methods.
    pub path: WsPath,
    /// What the entry is.
    pub kind: EntryKind,
    /// Whether the workspace refuses the entry as sensitive: its path, or
    /// for a symlink the path it resolves to, matches a sensitive-file
    /// pattern, and sensitive files are not allowed. Listings shown to a
    /// model leave such entries out (and may say how many there were).
    pub sensitive: bool,
}

/// One regular file a walk found, as [`Workspace::walk_each`] hands it
/// over.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkedFile {
    /// The file, under the path it was reached by.
    pub path: WsPath,
    /// Whether the workspace refuses the file as sensitive (rule 4 of
    /// [`Workspace::walk`]): it may be counted, but its content must not be
    /// shown.
    pub sensitive: bool,
}

/// What [`Workspace::walk_report`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkReport {
    /// The files, sorted, as [`Workspace::walk`] returns them.
    pub files: Vec<WsPath>,
    /// The regular files skipped because they are sensitive (rule 4 of
    /// [`Workspace::walk`]), sorted: for a count, or to tell whether a
    /// filter would have matched any. Their content must not be shown.
    pub sensitive: Vec<WsPath>,
}

impl Workspace {
    /// Lists a directory, sorted by name. Symlinks are not followed but
    /// classified: [`EntryKind::SymlinkInside`] or
    /// [`EntryKind::SymlinkOutside`]. Private entries, and symlinks that
    /// lead into one, are left out (rule 7 of [`Workspace`]).
    ///
    /// The whole listing is held in memory; for a directory that may hold
    /// millions of entries, [`read_dir_each`](Self::read_dir_each) hands
    /// them over one at a time.
    pub fn read_dir(&self, p: &WsPath) -> Result<Vec<DirEntryInfo>, WorkspaceError> {
        let mut out = Vec::new();
        self.read_dir_each(p, |entry| out.push(entry))?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Lists a directory as [`read_dir`](Self::read_dir) does, but hands
    /// each entry to `each` as it is read, in no particular order, and
    /// keeps none: memory does not grow with the size of the directory.
    pub fn read_dir_each(
        &self,
        p: &WsPath,
        mut each: impl FnMut(DirEntryInfo),
    ) -> Result<(), WorkspaceError> {
        let user = self.display(p);
        self.check_sensitive(p, None)?;
        let located = self.locate(p, Lookup::READ)?;
        self.check_sensitive(p, Some(&located.phys))?;
        if let Some(meta) = &located.meta {
            self.check_slash_read(p, meta)?;
        }
        let phys = located.phys.clone();
        let dir = open_located_dir(located, &user)?;
        let list_error = |source| WorkspaceError::Io {
            action: "list",
            path: user.clone(),
            source,
        };
        for entry in dir.entries().map_err(list_error)? {
            let entry = entry.map_err(list_error)?;
            let name = entry.file_name();
            let file_type = entry.file_type().map_err(list_error)?;
            let child = p.join(&name);
            let child_phys = phys.join(&name);
            if self.is_private(&child.rel) || self.is_private(&child_phys) {
                continue;
            }
            let mut sensitive =
                self.refuses_sensitive(&child.rel) || self.refuses_sensitive(&child_phys);
            let kind = if file_type.is_symlink() {
                let target = WsPath::new(child_phys);
                match self.locate(&target, Lookup::READ) {
                    // Into toolgate's own state: as if it were not there.
                    Err(WorkspaceError::Private { .. }) => continue,
                    Err(
                        WorkspaceError::SymlinkEscapes { .. }
                        | WorkspaceError::OutsideWorkspace { .. },
                    ) => EntryKind::SymlinkOutside,
                    Ok(located) => {
                        sensitive |= self.refuses_sensitive(&located.phys);
                        EntryKind::SymlinkInside
                    }
                    Err(_) => EntryKind::SymlinkInside,
                }
            } else if file_type.is_dir() {
                EntryKind::Dir
            } else if file_type.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
            each(DirEntryInfo {
                name: name.to_string_lossy().into_owned(),
                path: child,
                kind,
                sensitive,
            });
        }
        Ok(())
    }

    /// The files under `p` (or `p` itself if it is a file), sorted.
    ///
    /// With `recursive` false, only the files directly in `p`.
    ///
    /// # Rules
    ///
    /// 1. Only regular files are returned (reached directly or through a
    ///    symlink that stays inside), under the path they were reached by.
    /// 2. Entries named `.git` are skipped, at any depth.
    /// 3. Symlinks that lead outside the workspace, dangling symlinks and
    ///    symlink loops are skipped silently; nothing outside is ever
    ///    listed or entered. So are private paths (rule 7 of [`Workspace`])
    ///    and symlinks that lead into one: never entered, never counted.
    /// 4. Sensitive files are skipped unless the workspace allows them, so
    ///    that everything returned can be read; [`walk_report`](Self::walk_report)
    ///    says which. A sensitive `p` itself is refused.
    /// 5. Each directory is entered once, so the walk ends even with symlink
    ///    cycles. Real directories are walked before symlinked ones, so a
    ///    directory reachable both ways is listed under its real path.
    /// 6. A subdirectory that cannot be read, or that lies more than 256
    ///    levels down, is skipped with a `tracing` warning; only a failure to
    ///    read `p` itself is an error.
    ///
    /// The whole list is held in memory; [`walk_each`](Self::walk_each)
    /// hands the files over one at a time instead.
    pub fn walk(&self, p: &WsPath, recursive: bool) -> Result<Vec<WsPath>, WorkspaceError> {
        self.walk_report(p, recursive).map(|report| report.files)
    }

    /// Walks like [`walk`](Self::walk), and also reports the sensitive files
    /// it skipped.
    pub fn walk_report(&self, p: &WsPath, recursive: bool) -> Result<WalkReport, WorkspaceError> {
        let mut report = WalkReport::default();
        self.walk_each(p, recursive, |file| {
            if file.sensitive {
                report.sensitive.push(file.path);
            } else {
                report.files.push(file.path);
            }
        })?;
        report.files.sort();
        report.sensitive.sort();
        Ok(report)
    }

    /// Walks like [`walk_report`](Self::walk_report), but hands each file
    /// (sensitive ones marked) to `each` as it is found, in no particular
    /// order.
    ///
    /// Files are not collected: memory grows with the depth of the tree and
    /// with the number of subdirectories and symlinks of the directories
    /// being walked (their names, to visit them in order), never with the
    /// number of files, so a directory of millions of files costs no more
    /// than an empty one.
    pub fn walk_each(
        &self,
        p: &WsPath,
        recursive: bool,
        mut each: impl FnMut(WalkedFile),
    ) -> Result<(), WorkspaceError> {
        let user = self.display(p);
        self.check_sensitive(p, None)?;
        let located = self.locate(p, Lookup::READ)?;
        self.check_sensitive(p, Some(&located.phys))?;
        match &located.meta {
            None => return Err(WorkspaceError::NotFound { path: user }),
            Some(meta) if meta.is_file() => {
                self.check_slash_read(p, meta)?;
                each(WalkedFile {
                    path: p.clone(),
                    sensitive: false,
                });
                return Ok(());
            }
            Some(_) => {}
        }
        let phys = located.phys.clone();
        let dir = open_located_dir(located, &user)?;
        let mut walker = Walker {
            ws: self,
            recursive,
            visited: HashSet::new(),
            linked_dirs: VecDeque::new(),
            each: &mut each,
        };
        walker
            .visit(&dir, p, &phys, 0)
            .map_err(|source| WorkspaceError::Io {
                action: "list",
                path: user,
                source,
            })?;
        // Then the directories reached through symlinks, breadth-first;
        // visiting them may queue more.
        while let Some((lexical, link_phys, depth)) = walker.linked_dirs.pop_front() {
            walker.visit_linked_dir(&lexical, &link_phys, depth);
        }
        Ok(())
    }

    /// Whether sensitive files are refused and `rel` is one.
    fn refuses_sensitive(&self, rel: &Path) -> bool {
        !self.inner.allow_sensitive && self.inner.sensitive.matches(rel).is_some()
    }

    /// Whether `rel`, a path relative to the root, is a private path or lies
    /// beneath one (rule 7 of [`Workspace`]), judged on the path alone:
    /// nothing on disk is looked at and no symlink is followed.
    ///
    /// For tools that walk the tree themselves (the search tools): they skip
    /// what this refuses, silently, with the path as found and again with
    /// the path the opened file really has.
    pub fn is_private(&self, rel: &Path) -> bool {
        self.inner.private.covers(rel)
    }
}

/// Opens the directory a lookup ended on.
fn open_located_dir(located: Located<'_>, user: &str) -> Result<Dir, WorkspaceError> {
    match (&located.name, &located.meta) {
        (_, None) => Err(WorkspaceError::NotFound {
            path: user.to_owned(),
        }),
        (_, Some(meta)) if !meta.is_dir() => Err(WorkspaceError::NotADirectory {
            path: user.to_owned(),
        }),
        (None, Some(_)) => located.parent.into_owned(user),
        (Some(name), Some(_)) => located
            .parent
            .open_dir_nofollow(name)
            .map_err(|err| open_error(err, "list", user, &located.phys)),
    }
}

struct Walker<'a> {
    ws: &'a Workspace,
    recursive: bool,
    /// `(device, inode)` of every directory entered.
    visited: HashSet<(u64, u64)>,
    /// Symlinks to directories, to enter after the real tree: the path they
    /// were reached by, their own physical path, their depth.
    linked_dirs: VecDeque<(WsPath, PathBuf, usize)>,
    /// Receives every file found.
    each: &'a mut dyn FnMut(WalkedFile),
}

impl Walker<'_> {
    /// Lists `dir` (reached as `lexical`, physically at `phys`) and, if
    /// recursive, the real directories below it.
    fn visit(
        &mut self,
        dir: &Dir,
        lexical: &WsPath,
        phys: &Path,
        depth: usize,
    ) -> std::io::Result<()> {
        let meta = dir.dir_metadata()?;
        if !self.visited.insert((meta.dev(), meta.ino())) {
            return Ok(());
        }
        // Files are handed over as they are read. Subdirectories and
        // symlinks are visited afterwards, in name order, so that which path
        // a directory reachable twice is listed under (rule 5) does not
        // depend on the order the file system lists entries in; only their
        // names are kept meanwhile.
        let mut entries: Vec<(OsString, cap_std::fs::FileType)> = Vec::new();
        for entry in dir.entries()? {
            let entry = entry?;
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let file_type = entry.file_type()?;
            if self.ws.is_private(&lexical.join(&name).rel) || self.ws.is_private(&phys.join(&name))
            {
                continue;
            }
            if file_type.is_file() {
                self.push_file(lexical.join(&name), &phys.join(&name));
            } else if file_type.is_symlink() || (file_type.is_dir() && self.recursive) {
                entries.push((name, file_type));
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, file_type) in entries {
            let child = lexical.join(&name);
            let child_phys = phys.join(&name);
            if file_type.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    tracing::warn!(path = %self.ws.display(&child), "not walking deeper than {MAX_DEPTH} levels");
                    continue;
                }
                // `O_NOFOLLOW`: if it became a symlink since `readdir`, skip it
                // here; it is not queued as a linked directory either, which
                // is fine for a tree changing under our feet.
                let result = dir
                    .open_dir_nofollow(&name)
                    .and_then(|sub| self.visit(&sub, &child, &child_phys, depth + 1));
                if let Err(err) = result {
                    tracing::warn!(path = %self.ws.display(&child), error = %err, "skipping a directory that cannot be walked");
                }
            } else if file_type.is_symlink() {
                self.visit_symlink(child, child_phys, depth);
            }
        }
        Ok(())
    }

    /// A symlink met in a directory: a file is listed now, a directory queued.
    fn visit_symlink(&mut self, lexical: WsPath, link_phys: PathBuf, depth: usize) {
        let link = WsPath::new(link_phys);
        let located = match self.ws.locate(&link, Lookup::READ) {
            Ok(located) => located,
            Err(err) => {
                tracing::debug!(path = %self.ws.display(&lexical), error = %err, "skipping a symlink");
                return;
            }
        };
        match &located.meta {
            Some(meta) if meta.is_file() => self.push_file(lexical, &located.phys),
            Some(meta) if meta.is_dir() && self.recursive => {
                self.linked_dirs.push_back((lexical, link.rel, depth));
            }
            _ => {}
        }
    }

    /// Enters a directory reached through a symlink. It is looked up again
    /// from the root: the tree may have changed since it was queued.
    fn visit_linked_dir(&mut self, lexical: &WsPath, link_phys: &Path, depth: usize) {
        if depth + 1 > MAX_DEPTH {
            tracing::warn!(path = %self.ws.display(lexical), "not walking deeper than {MAX_DEPTH} levels");
            return;
        }
        let link = WsPath::new(link_phys.to_owned());
        let user = self.ws.display(lexical);
        let result = self.ws.locate(&link, Lookup::READ).and_then(|located| {
            let phys = located.phys.clone();
            let dir = open_located_dir(located, &user)?;
            Ok((dir, phys))
        });
        let visited = result.and_then(|(dir, phys)| {
            self.visit(&dir, lexical, &phys, depth + 1)
                .map_err(|source| WorkspaceError::Io {
                    action: "list",
                    path: user.clone(),
                    source,
                })
        });
        if let Err(err) = visited {
            tracing::warn!(path = %user, error = %err, "skipping a directory that cannot be walked");
        }
    }

    fn push_file(&mut self, lexical: WsPath, phys: &Path) {
        let sensitive = self.ws.refuses_sensitive(&lexical.rel) || self.ws.refuses_sensitive(phys);
        (self.each)(WalkedFile {
            path: lexical,
            sensitive,
        });
    }
}
