//! toolgate's own state: the files that decide what toolgate does and
//! remember what it did, which no tool and no process it starts may reach,
//! whatever the mode and wherever the workspace is.
//!
//! A model that can rewrite `~/.config/toolgate/config.yaml` can switch the
//! sandbox off for the next command; one that can read the data directory
//! reads every other workspace's transcripts. Where the workspace is the home
//! directory, both lie inside it. So the host computes the set once
//! ([`Host::own_state`]) from the same functions that locate these files,
//! and hands it to both enforcers: the file tools' [`Workspace`]
//! ([`WorkspaceBuilder::private_paths`]) and the [`Sandbox`]
//! ([`SandboxBuilder::private`]).
//!
//! [`Workspace`]: toolgate_core::Workspace
//! [`WorkspaceBuilder::private_paths`]: toolgate_core::WorkspaceBuilder::private_paths
//! [`Sandbox`]: toolgate_sandbox::Sandbox
//! [`SandboxBuilder::private`]: toolgate_sandbox::SandboxBuilder::private

use std::path::{Path, PathBuf};

use toolgate_core::private_files;

use crate::assembly::host::Host;
use crate::config::env_vars;
use crate::config::{trust_store_path, user_config_dir, user_config_path};

/// What a path of toolgate's own state is, which decides how it is kept out
/// of reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OwnKind {
    /// A directory of toolgate's (configuration, data, persona, memory):
    /// neither readable nor writable.
    Dir,
    /// A file of toolgate's at a configured place (the store, the audit
    /// file, the `--config` file): neither readable nor writable.
    File,
    /// A file `SQLite` keeps beside the store while it is open (`-wal`,
    /// `-shm`, `-journal`): neither readable nor writable while it exists.
    Companion,
    /// A directory toolgate reads and nothing may change (the user's
    /// skills): readable, never writable. Skills hold instructions and
    /// scripts meant to be read and run, not secrets; what must not happen
    /// is a model planting one for later runs.
    ReadOnly,
}

impl OwnKind {
    /// Whether nothing may read it either.
    pub fn is_private(self) -> bool {
        !matches!(self, Self::ReadOnly)
    }
}

/// One path of [`OwnState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnPath {
    path: PathBuf,
    kind: OwnKind,
}

impl OwnPath {
    /// The path, absolute.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What it is.
    pub fn kind(&self) -> OwnKind {
        self.kind
    }
}

/// toolgate's own state on this machine, as [`Host::own_state`] computes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnState {
    paths: Vec<OwnPath>,
}

impl OwnState {
    /// Every path, in the order of the rules on [`Host::own_state`].
    pub fn paths(&self) -> &[OwnPath] {
        &self.paths
    }

    /// The paths nothing may read or change.
    pub fn private(&self) -> impl Iterator<Item = &Path> {
        self.paths
            .iter()
            .filter(|p| p.kind.is_private())
            .map(|p| p.path.as_path())
    }

    /// The paths that may be read but never changed.
    pub fn read_only(&self) -> impl Iterator<Item = &Path> {
        self.paths
            .iter()
            .filter(|p| !p.kind.is_private())
            .map(|p| p.path.as_path())
    }

    /// Adds `path` unless a private path already holds it (or it is there).
    fn push(&mut self, path: &Path, kind: OwnKind) {
        let path = absolute(path);
        let covered = self
            .paths
            .iter()
            .any(|p| p.kind.is_private() && path.starts_with(&p.path));
        if !covered {
            self.paths.push(OwnPath { path, kind });
        }
    }
}

impl Host {
    /// toolgate's own state: what no tool may read or change, and no
    /// process toolgate starts may reach, in every mode (`yolo` included)
    /// and wherever the workspace is (the home directory, `~/.config`).
    ///
    /// # Rules
    ///
    /// 1. The user configuration directory ([`OwnKind::Dir`]):
    ///    `$XDG_CONFIG_HOME/toolgate`, else `~/.config/toolgate`. It holds
    ///    `config.yaml` (rules, MCP tokens), the trust store
    ///    ([`trust_store_path`](crate::trust_store_path)) and the user's
    ///    configuration skills.
    /// 2. The data directory ([`OwnKind::Dir`]): `$XDG_DATA_HOME/toolgate`,
    ///    else `~/.local/share/toolgate` — every workspace's store
    ///    (sessions, audit, memory index, notes, tasks), memory and persona
    ///    files, the contact book.
    /// 3. This workspace's store ([`Host::store_path`], [`OwnKind::File`])
    ///    and its audit file beside it, each with its `-wal`, `-shm` and
    ///    `-journal` files ([`OwnKind::Companion`]); and the directories of its persona
    ///    ([`Host::persona_dir`]) and memory ([`Host::memory_dir`], unless
    ///    `tools.memory.dir` puts it in the workspace on purpose), unless
    ///    that is the workspace itself or holds it (a `store.path` at the
    ///    top of the workspace). With the default store these lie in the
    ///    data directory (rule 2).
    /// 4. The JSONL audit file, when `audit.path` is set ([`OwnKind::File`]).
    /// 5. The file given with `--config`, unless it is the workspace's own
    ///    `toolgate.yaml`, which stays a policy file: readable, never
    ///    written ([`Host::policy_files`]).
    /// 6. The user's skills directories outside the workspace's own
    ///    ([`OwnKind::ReadOnly`], `~/.agents/skills`): readable, never
    ///    changed. Those in the configuration directory are private by
    ///    rule 1.
    /// 7. Every path is absolute (a relative `XDG_CONFIG_HOME` is taken from
    ///    the current directory, as the configuration loader reads it); a
    ///    path beneath a private one is left out as covered.
    /// 8. A private path that holds the workspace itself is kept here, but
    ///    the enforcers leave it out: the person chose to work inside it.
    pub fn own_state(&self) -> OwnState {
        self.own_state.get_or_init(|| self.find_own_state()).clone()
    }

    fn find_own_state(&self) -> OwnState {
        let env = self.env();
        let mut own = OwnState::default();
        if let Some(dir) = user_config_dir(env) {
            own.push(&dir, OwnKind::Dir);
        }
        if let Some(dir) = toolgate_store::data_dir_from_env(env) {
            own.push(&dir, OwnKind::Dir);
        }
        if let Ok(store) = self.store_path() {
            for (file, companion) in toolgate_store::store_files(&store) {
                let kind = if companion {
                    OwnKind::Companion
                } else {
                    OwnKind::File
                };
                own.push(&file, kind);
            }
        }
        // Derived from the store's place: a `store.path` at the top of the
        // workspace would make the workspace itself the persona directory.
        let derived = [
            self.persona_dir().ok(),
            self.config()
                .tools
                .memory
                .dir
                .is_none()
                .then(|| self.memory_dir().ok())
                .flatten(),
        ];
        for dir in derived.into_iter().flatten() {
            if !self.workspace().starts_with(&dir) {
                own.push(&dir, OwnKind::Dir);
            }
        }
        if let Some(audit) = &self.config().audit.path {
            own.push(audit, OwnKind::File);
        }
        let project = &self.loaded().project_file;
        let own_file = self.workspace().join("toolgate.yaml");
        if std::fs::canonicalize(project).unwrap_or_else(|_| absolute(project)) != own_file {
            own.push(project, OwnKind::File);
        }
        for dir in self.user_skill_dirs() {
            own.push(&dir, OwnKind::ReadOnly);
        }
        own
    }

    /// Gets toolgate's own state ready before any process starts: what a
    /// process could otherwise create is created first, and what toolgate
    /// owns is tightened.
    ///
    /// 1. A missing directory ([`OwnKind::Dir`]) or file
    ///    ([`OwnKind::File`]) of [`own_state`](Self::own_state) that lies
    ///    in the workspace or a `commands.writable` path is created, `0700`
    ///    or empty `0600`, so that the sandbox masks it (a mask needs
    ///    something to cover) instead of leaving room for a process to
    ///    plant a configuration, a trust store or a store there. Elsewhere
    ///    no process can create anything, and nothing is created.
    /// 2. The configuration and data directories, `config.yaml` and the
    ///    trust store lose their group and other bits, with an info line
    ///    ([`private_files::tighten`]); the store and the audit file tighten
    ///    themselves when they are opened.
    ///
    /// Failures are logged, not returned: the sandbox still masks what
    /// exists, and its status says what it cannot do.
    pub(crate) fn prepare_own_state(&self, own: &OwnState) {
        let home = self.env_var(env_vars::HOME).map(PathBuf::from);
        let writable: Vec<PathBuf> = std::iter::once(self.workspace().to_owned())
            .chain(self.config().commands.writable.iter().filter_map(|p| {
                match Path::new(p).strip_prefix("~") {
                    Ok(rest) => home.as_ref().map(|h| h.join(rest)),
                    Err(_) => Some(PathBuf::from(p)),
                }
            }))
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .collect();
        for own_path in own.paths() {
            let path = own_path.path();
            let reachable = writable
                .iter()
                .any(|w| path.starts_with(w) && !w.starts_with(path));
            if !reachable || std::fs::symlink_metadata(path).is_ok() {
                continue;
            }
            let created = match own_path.kind() {
                OwnKind::Dir => private_files::create_dir_all(path),
                OwnKind::File => path
                    .parent()
                    .map_or(Ok(()), private_files::create_dir_all)
                    .and_then(|()| {
                        private_files::open_options()
                            .write(true)
                            .create_new(true)
                            .open(path)
                            .map(drop)
                    }),
                OwnKind::Companion | OwnKind::ReadOnly => continue,
            };
            if let Err(error) = created {
                tracing::warn!(
                    path = %path.display(),
                    %error,
                    "could not create toolgate's own state ahead of the sandbox"
                );
            }
        }
        let env = self.env();
        let owned = [
            user_config_dir(env),
            user_config_path(env),
            trust_store_path(env),
            toolgate_store::data_dir_from_env(env),
        ];
        for path in owned.into_iter().flatten() {
            tighten(&absolute(&path));
        }
    }

    /// toolgate's own files and directories that others may read, with
    /// their modes: for `toolgate doctor`. The configuration and data
    /// directories are looked through (at most [`MAX_LOOKED_AT`] entries);
    /// the configured files one by one.
    pub(crate) fn loose_own_state(&self) -> Vec<(PathBuf, u32)> {
        let env = self.env();
        let mut found = Vec::new();
        let mut budget = MAX_LOOKED_AT;
        let roots = [user_config_dir(env), toolgate_store::data_dir_from_env(env)];
        for root in roots.into_iter().flatten() {
            walk_loose(&absolute(&root), &mut found, &mut budget);
        }
        for own_path in self.own_state().paths() {
            if matches!(own_path.kind(), OwnKind::File | OwnKind::Companion)
                && !found.iter().any(|(p, _)| p == own_path.path())
                && let Some(mode) = private_files::loose_mode(own_path.path())
            {
                found.push((own_path.path().to_owned(), mode));
            }
        }
        found
    }
}

/// How many entries `toolgate doctor` looks at in toolgate's directories.
pub(crate) const MAX_LOOKED_AT: usize = 10_000;

/// Collects the loose entries at and beneath `path`, without following
/// symlinks.
fn walk_loose(path: &Path, found: &mut Vec<(PathBuf, u32)>, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    if let Some(mode) = private_files::loose_mode(path) {
        found.push((path.to_owned(), mode));
    }
    let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    children.sort();
    for child in children {
        walk_loose(&child, found, budget);
    }
}

/// [`private_files::tighten`], a failure logged.
pub(crate) fn tighten(path: &Path) {
    if let Err(error) = private_files::tighten(path) {
        tracing::warn!(
            path = %path.display(),
            %error,
            "could not make toolgate's own file private"
        );
    }
}

/// `path` made absolute against the current directory, as the loaders read
/// it.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn host(ws: &Path, config: Option<&Path>, env: &[(&str, String)]) -> Host {
        Host::builder()
            .workspace(ws)
            .config_file(config.map(Path::to_owned))
            .env(env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
            .load()
            .unwrap()
    }

    fn listed(own: &OwnState, base: &Path) -> Vec<(String, OwnKind)> {
        own.paths()
            .iter()
            .map(|p| {
                let rel = p.path().strip_prefix(base).unwrap_or(p.path());
                (rel.display().to_string(), p.kind())
            })
            .collect()
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_set_follows_the_environment_and_the_configuration() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let home = base.join("home");
        let ws = base.join("ws");
        std::fs::create_dir_all(home.join(".agents/skills")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let home_env = ("HOME", home.display().to_string());

        // Only HOME: the XDG defaults; the store and persona lie in the
        // data directory; the home skills are read-only.
        let own = host(&ws, None, std::slice::from_ref(&home_env)).own_state();
        assert_eq!(
            listed(&own, &base),
            [
                ("home/.config/toolgate".to_owned(), OwnKind::Dir),
                ("home/.local/share/toolgate".to_owned(), OwnKind::Dir),
                ("home/.agents/skills".to_owned(), OwnKind::ReadOnly),
            ]
        );

        // XDG variables, a store, an audit file and a --config of one's own.
        std::fs::write(base.join("elsewhere.yaml"), "").unwrap();
        let env = [
            home_env.clone(),
            ("XDG_CONFIG_HOME", base.join("xc").display().to_string()),
            ("XDG_DATA_HOME", base.join("xd").display().to_string()),
            ("TOOLGATE_STORE__PATH", "state/db.sqlite".to_owned()),
            ("TOOLGATE_AUDIT__PATH", "logs/audit.jsonl".to_owned()),
        ];
        let own = host(&ws, Some(&base.join("elsewhere.yaml")), &env).own_state();
        assert_eq!(
            listed(&own, &base),
            [
                ("xc/toolgate".to_owned(), OwnKind::Dir),
                ("xd/toolgate".to_owned(), OwnKind::Dir),
                ("ws/state/db.sqlite-wal".to_owned(), OwnKind::Companion),
                ("ws/state/db.sqlite-shm".to_owned(), OwnKind::Companion),
                ("ws/state/db.sqlite-journal".to_owned(), OwnKind::Companion),
                ("ws/state/db.sqlite".to_owned(), OwnKind::File),
                (
                    "ws/state/db-audit.sqlite-wal".to_owned(),
                    OwnKind::Companion
                ),
                (
                    "ws/state/db-audit.sqlite-shm".to_owned(),
                    OwnKind::Companion
                ),
                (
                    "ws/state/db-audit.sqlite-journal".to_owned(),
                    OwnKind::Companion
                ),
                ("ws/state/db-audit.sqlite".to_owned(), OwnKind::File),
                ("ws/state".to_owned(), OwnKind::Dir),
                ("ws/logs/audit.jsonl".to_owned(), OwnKind::File),
                ("elsewhere.yaml".to_owned(), OwnKind::File),
                ("home/.agents/skills".to_owned(), OwnKind::ReadOnly),
            ]
        );

        // The workspace's own toolgate.yaml, even named with --config, stays
        // a policy file.
        std::fs::write(ws.join("toolgate.yaml"), "").unwrap();
        let own = host(
            &ws,
            Some(&ws.join("toolgate.yaml")),
            std::slice::from_ref(&home_env),
        )
        .own_state();
        assert!(
            own.paths()
                .iter()
                .all(|p| !p.path().ends_with("toolgate.yaml"))
        );
    }

    #[test]
    fn the_home_directory_as_workspace_gets_its_state_made_and_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap().join("home");
        std::fs::create_dir_all(home.join(".agents/skills/a")).unwrap();
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::fs::set_permissions(home.join(".config"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let env = [
            ("HOME", home.display().to_string()),
            ("TOOLGATE_AUDIT__PATH", "audit.jsonl".to_owned()),
        ];
        let host = host(&home, None, &env);
        host.sandbox().unwrap();
        // Made before any process could: the directories 0700, the audit
        // file empty 0600; existing parents left as they were.
        assert_eq!(mode(&home.join(".config/toolgate")), 0o700);
        assert_eq!(mode(&home.join(".local/share/toolgate")), 0o700);
        assert_eq!(mode(&home.join(".local")), 0o700);
        assert_eq!(mode(&home.join(".config")), 0o755);
        assert_eq!(mode(&home.join("audit.jsonl")), 0o600);

        let view = host.workspace_view().unwrap();
        for path in [
            ".config/toolgate/config.yaml",
            ".local/share/toolgate",
            "audit.jsonl",
        ] {
            let refused = view.resolve(path).unwrap_err();
            assert!(
                matches!(refused, toolgate_core::WorkspaceError::Private { .. }),
                "{path}: {refused:?}"
            );
        }
        // The skills are read-only: readable, never written.
        assert_eq!(host.policy_files(), ["/.agents/skills"]);
        let skill = view.resolve(".agents/skills/a/SKILL.md").unwrap();
        assert!(matches!(
            view.write_atomic(&skill, b"x"),
            Err(toolgate_core::WorkspaceError::Protected { .. })
        ));
    }

    #[test]
    fn loose_files_are_found_for_the_doctor() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap().join("home");
        let ws = tmp.path().canonicalize().unwrap().join("ws");
        let config = home.join(".config/toolgate");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(config.join("config.yaml"), "").unwrap();
        std::fs::set_permissions(
            config.join("config.yaml"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o700)).unwrap();
        let host = host(&ws, None, &[("HOME", home.display().to_string())]);
        assert_eq!(
            host.loose_own_state(),
            [(config.join("config.yaml"), 0o644)]
        );
        host.prepare_own_state(&host.own_state());
        assert!(host.loose_own_state().is_empty());
        assert_eq!(mode(&config.join("config.yaml")), 0o600);
    }
}
