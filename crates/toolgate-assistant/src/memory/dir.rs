//! A directory of memory or persona files, reached only through a
//! [`Workspace`] rooted at it.
//!
//! The directory may not exist yet (nothing saved so far): reads then find
//! nothing, and the first write creates it. Every path a model gives is
//! checked here first (relative, no `..`), then resolved by the workspace,
//! which refuses symlinks that lead out of the directory, race-free.

use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use toolgate_core::{Workspace, WorkspaceError, WsPath};

/// A memory or persona directory.
#[derive(Debug)]
pub(crate) struct FileDir {
    root: PathBuf,
    /// Opened on first use: the directory may be created later.
    workspace: Mutex<Option<Workspace>>,
}

impl FileDir {
    pub(crate) fn new(root: PathBuf) -> Self {
        Self {
            root,
            workspace: Mutex::new(None),
        }
    }

    /// The directory.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// How an effect names the file `name` of this directory: its absolute
    /// path, since the directory is not the workspace (effects rule 5: a
    /// name relative to it would be judged, and shown to hooks, as a
    /// workspace file).
    /// A leading `memory/` is dropped as [`FileDir::resolve`] drops it.
    pub(crate) fn effect_path(&self, name: &str) -> String {
        let name = name.trim_start_matches("./");
        let name = match name.strip_prefix("memory/") {
            Some(rest) if !self.root.join("memory").exists() => rest,
            _ => name,
        };
        self.root.join(name).display().to_string()
    }

    /// The workspace over the directory; `None` when the directory does not
    /// exist and `create` is false.
    pub(crate) fn workspace(&self, create: bool) -> Result<Option<Workspace>, String> {
        let mut slot = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(workspace) = &*slot {
            return Ok(Some(workspace.clone()));
        }
        if !self.root.is_dir() {
            if !create {
                return Ok(None);
            }
            toolgate_core::private_files::create_dir_all(&self.root).map_err(|error| {
                format!(
                    "cannot create the directory {}: {error}",
                    self.root.display()
                )
            })?;
        }
        // The directory is toolgate's own: no file in it is sensitive or
        // protected by name (a fact may well mention `.env`), and what is
        // written there is the user's only (0600, 0700).
        let workspace = Workspace::builder(&self.root)
            .sensitive_patterns(Vec::<String>::new())
            .protected_patterns(Vec::<String>::new())
            .private_modes(true)
            .build()
            .map_err(|error| {
                format!("cannot open the directory {}: {error}", self.root.display())
            })?;
        *slot = Some(workspace.clone());
        Ok(Some(workspace))
    }

    /// Checks a path a model gave and resolves it in `workspace`.
    ///
    /// # Rules
    ///
    /// 1. The path must be relative to the directory: absolute paths and
    ///    `..` components are refused, even when they would lead back in.
    /// 2. A leading `memory/` is dropped when the directory has no `memory`
    ///    entry: models echo the `memory/YYYY-MM-DD.md` form of the docs.
    /// 3. Symlinks that lead out of the directory are refused when the file
    ///    is opened (by the [`Workspace`]).
    pub(crate) fn resolve(&self, workspace: &Workspace, path: &str) -> Result<WsPath, String> {
        let given = Path::new(path);
        if given.has_root() || path.starts_with('~') {
            return Err(format!(
                "`{path}` is an absolute path; give a path relative to the memory directory, \
                 as memory_search shows it (e.g. `2025-01-15.md`)"
            ));
        }
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(format!(
                "`{path}` contains `..`; give a path inside the memory directory, \
                 as memory_search shows it (e.g. `2025-01-15.md`)"
            ));
        }
        let path = match path.strip_prefix("memory/") {
            Some(rest) if !self.root.join("memory").exists() => rest,
            _ => path,
        };
        workspace.resolve(path).map_err(|e| describe(&e))
    }
}

/// A workspace error in the words of a memory directory.
pub(crate) fn describe(error: &WorkspaceError) -> String {
    match error {
        WorkspaceError::SymlinkEscapes { path, .. } => format!(
            "`{path}` leads out of the memory directory through a symlink; only files inside it can be read"
        ),
        WorkspaceError::OutsideWorkspace { path, .. } => {
            format!("`{path}` is outside the memory directory")
        }
        WorkspaceError::NotFound { path } => format!(
            "`{path}` does not exist in the memory directory; use memory_search to find the right file"
        ),
        other => other.to_string(),
    }
}
