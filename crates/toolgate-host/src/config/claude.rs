//! `confirmation.import: [claude]`: Claude Code's permission settings read
//! as confirmation rules and a mode.
//!
//! # Rules
//!
//! 1. Three files are read, when they exist: `~/.claude/settings.json`
//!    (the user's, always trusted), then the workspace's
//!    `.claude/settings.json` and `.claude/settings.local.json`. A
//!    workspace file is written by whoever can write to the repository, so
//!    it applies only when trusted exactly as the workspace's
//!    `toolgate.yaml` is ([`crate::config::trust`]: its canonical path and
//!    the SHA-256 of the bytes read are in the trust store, or
//!    `--trust-workspace` for this run). An untrusted file applies nothing
//!    and is listed with the reason.
//! 2. `permissions.allow`, `ask` and `deny` of every applied file are
//!    mapped rule by rule ([`toolgate_policy::claude_rule`]) and added after
//!    `confirmation.rules`; the gate evaluates deny → ask → allow over all
//!    of them, as Claude Code does. Each rule keeps its origin: file, list
//!    and index.
//! 3. `permissions.defaultMode` of the most specific applied file (local,
//!    then project, then user) sets the mode when no layer of our own
//!    configuration sets `confirmation.mode` (flags still win).
//! 4. Nothing is dropped in silence: a rule that cannot be mapped,
//!    `additionalDirectories` (toolgate has no extra workspace directories),
//!    a mode it does not have, any other key of `permissions` and a file that
//!    is not valid JSON are listed with the reason
//!    ([`ClaudeImport::unmapped`]), by `toolgate rules list` and `toolgate
//!    doctor`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_policy::{
    ClaudeContext, ClaudeTools, ConfirmationMode, ConfirmationRule, RuleDecision, claude_mode,
    claude_rule,
};

/// Our tools for Claude Code's `Bash`, `WebFetch` and `WebSearch`.
const CLAUDE_TOOLS: ClaudeTools<'static> = ClaudeTools {
    command: <toolgate_tools::command::RunCommand as toolgate_core::TypedTool>::NAME,
    web_fetch: <toolgate_web::WebFetch as toolgate_core::TypedTool>::NAME,
    web_search: <toolgate_web::WebSearch as toolgate_core::TypedTool>::NAME,
};

use super::trust::{Trust, sha256_hex};

/// A source `confirmation.import` can read rules from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImportSource {
    /// Claude Code's `settings.json` files.
    Claude,
}

/// Whose a settings file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.claude/settings.json`.
    User,
    /// The workspace's `.claude/settings.json` or `settings.local.json`.
    Workspace,
}

/// One settings file that exists, and whether it applied.
#[derive(Debug, Clone, Serialize)]
pub struct ClaudeFile {
    /// Its path (canonical for workspace files: the trust store's key).
    pub path: PathBuf,
    /// Hex SHA-256 of the bytes read.
    pub sha256: String,
    /// Whose it is.
    pub scope: Scope,
    /// Whether it applied, and why.
    pub trust: Trust,
}

/// Where an imported entry came from: `FILE permissions.deny[0]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The settings file.
    pub file: PathBuf,
    /// The key, dotted, with the index of a list entry
    /// (`permissions.deny[0]`, `permissions.defaultMode`).
    pub key: String,
    /// The entry as written (a rule's text, a mode, a directory).
    pub text: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} `{}`", self.file.display(), self.key, self.text)
    }
}

/// A rule mapped from a settings file.
#[derive(Debug, Clone, Serialize)]
pub struct ImportedRule {
    /// The rule, as the gate applies it.
    pub rule: ConfirmationRule,
    /// Where it came from.
    pub origin: Origin,
}

/// An entry that was not applied, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Unmapped {
    /// Where it is.
    pub origin: Origin,
    /// Why it was not applied.
    pub reason: String,
}

/// What `confirmation.import: [claude]` read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClaudeImport {
    /// The settings files that exist, in the order read.
    pub files: Vec<ClaudeFile>,
    /// The rules mapped from the applied files, in file order.
    pub rules: Vec<ImportedRule>,
    /// The mode of the most specific applied file that sets one.
    pub mode: Option<(ConfirmationMode, Origin)>,
    /// Whether that mode applied (no layer of ours sets
    /// `confirmation.mode`).
    pub mode_applied: bool,
    /// What was not applied, with the reason.
    pub unmapped: Vec<Unmapped>,
}

impl ClaudeImport {
    /// The workspace files that exist but are not trusted.
    pub fn untrusted(&self) -> impl Iterator<Item = &ClaudeFile> {
        self.files.iter().filter(|f| f.trust == Trust::Untrusted)
    }
}

/// The workspace's Claude Code settings files, most specific last.
pub fn workspace_files(workspace: &Path) -> [PathBuf; 2] {
    let dir = workspace.join(".claude");
    [dir.join("settings.json"), dir.join("settings.local.json")]
}

/// Reads the settings files (rule 1) and maps them (rules 2–4). `home` is
/// the user's home directory; `trust` says whether a workspace file, by
/// canonical path and SHA-256, applies.
pub fn read(
    workspace: &Path,
    home: Option<&Path>,
    trust: &dyn Fn(&Path, &str) -> Trust,
) -> ClaudeImport {
    let mut import = ClaudeImport::default();
    let user = home.map(|h| h.join(".claude").join("settings.json"));
    let candidates = user
        .into_iter()
        .map(|p| (p, Scope::User))
        .chain(workspace_files(workspace).map(|p| (p, Scope::Workspace)));
    let root = workspace.to_string_lossy();
    let home_text = home.map(|h| h.to_string_lossy().into_owned());
    let paths = ClaudeContext {
        root: &root,
        home: home_text.as_deref(),
        tools: CLAUDE_TOOLS,
    };
    for (path, scope) in candidates {
        if !path.is_file() {
            continue;
        }
        let path = match scope {
            Scope::Workspace => path.canonicalize().unwrap_or(path),
            Scope::User => path,
        };
        let unmapped_file = |import: &mut ClaudeImport, reason: String| {
            import.unmapped.push(Unmapped {
                origin: Origin {
                    file: path.clone(),
                    key: String::new(),
                    text: String::new(),
                },
                reason,
            });
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                unmapped_file(&mut import, format!("the file could not be read: {error}"));
                continue;
            }
        };
        let sha256 = sha256_hex(&bytes);
        let file_trust = match scope {
            Scope::User => Trust::NotNeeded,
            Scope::Workspace => trust(&path, &sha256),
        };
        import.files.push(ClaudeFile {
            path: path.clone(),
            sha256,
            scope,
            trust: file_trust,
        });
        if !file_trust.applies() {
            unmapped_file(
                &mut import,
                "the workspace file is not trusted: nothing in it applies (run `toolgate trust`, or pass --trust-workspace for this run)".into(),
            );
            continue;
        }
        let settings: Value = match serde_json::from_slice(&bytes) {
            Ok(value) => value,
            Err(error) => {
                unmapped_file(&mut import, format!("the file is not valid JSON: {error}"));
                continue;
            }
        };
        map_file(&mut import, &path, &settings, &paths);
    }
    import
}

fn map_file(import: &mut ClaudeImport, file: &Path, settings: &Value, paths: &ClaudeContext<'_>) {
    let origin = |key: String, text: String| Origin {
        file: file.to_owned(),
        key,
        text,
    };
    let Some(permissions) = settings.get("permissions") else {
        return;
    };
    let Some(permissions) = permissions.as_object() else {
        import.unmapped.push(Unmapped {
            origin: origin("permissions".into(), permissions.to_string()),
            reason: "`permissions` is not an object".into(),
        });
        return;
    };
    for (key, value) in permissions {
        let decision = match key.as_str() {
            "allow" => RuleDecision::Allow,
            "ask" => RuleDecision::Ask,
            "deny" => RuleDecision::Deny,
            "defaultMode" => {
                let text = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                let at = origin("permissions.defaultMode".into(), text.clone());
                match claude_mode(&text) {
                    Ok(mode) => import.mode = Some((mode, at)),
                    Err(why) => import.unmapped.push(Unmapped {
                        origin: at,
                        reason: why.reason().to_owned(),
                    }),
                }
                continue;
            }
            "additionalDirectories" => {
                let dirs = value
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![value.clone()]);
                for (i, dir) in dirs.iter().enumerate() {
                    let text = dir.as_str().map_or_else(|| dir.to_string(), str::to_owned);
                    import.unmapped.push(Unmapped {
                        origin: origin(format!("permissions.additionalDirectories[{i}]"), text),
                        reason: "toolgate has no extra workspace directories: file tools stay in the workspace (a process may be given more with commands.readable and commands.writable)".into(),
                    });
                }
                continue;
            }
            other => {
                import.unmapped.push(Unmapped {
                    origin: origin(format!("permissions.{other}"), value.to_string()),
                    reason: "toolgate does not read this key".into(),
                });
                continue;
            }
        };
        let Some(list) = value.as_array() else {
            import.unmapped.push(Unmapped {
                origin: origin(format!("permissions.{key}"), value.to_string()),
                reason: "not a list of rules".into(),
            });
            continue;
        };
        for (i, entry) in list.iter().enumerate() {
            let key = format!("permissions.{key}[{i}]");
            let Some(text) = entry.as_str() else {
                import.unmapped.push(Unmapped {
                    origin: origin(key, entry.to_string()),
                    reason: "a rule must be a string".into(),
                });
                continue;
            };
            match claude_rule(text, decision, paths) {
                Ok(rules) => import
                    .rules
                    .extend(rules.into_iter().map(|rule| ImportedRule {
                        rule,
                        origin: origin(key.clone(), text.to_owned()),
                    })),
                Err(why) => import.unmapped.push(Unmapped {
                    origin: origin(key, text.to_owned()),
                    reason: why.reason().to_owned(),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn rules_modes_and_what_is_not_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&ws).unwrap();
        let ws = ws.canonicalize().unwrap();
        write(
            &home.join(".claude/settings.json"),
            r#"{"permissions": {"defaultMode": "acceptEdits", "deny": ["Read(~/.ssh/**)"]}}"#,
        );
        write(
            &ws.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(npm run test:*)", "Task", 3], "deny": ["Bash(git push:*)", "Read(./.env)"], "defaultMode": "dontAsk", "additionalDirectories": ["../docs"], "future": true}, "model": "x"}"#,
        );
        write(&ws.join(".claude/settings.local.json"), "{not json");
        let import = read(&ws, Some(&home), &|_, _| Trust::Recorded);
        let rules: Vec<String> = import
            .rules
            .iter()
            .map(|r| format!("{} <- {}", r.rule, r.origin.key))
            .collect();
        assert_eq!(
            rules,
            [
                "allow run_command command `npm run test` <- permissions.allow[0]",
                "deny * command `git push` <- permissions.deny[0]",
                "deny * path `**/.env` (read only) <- permissions.deny[1]",
            ]
        );
        let (mode, origin) = import.mode.clone().unwrap();
        assert_eq!(
            mode,
            ConfirmationMode::DontAsk,
            "the workspace file is more specific"
        );
        assert!(origin.file.ends_with(".claude/settings.json"));
        let unmapped: Vec<String> = import
            .unmapped
            .iter()
            .map(|u| format!("{} {}: {}", u.origin.key, u.origin.text, u.reason))
            .collect();
        let expect = [
            "permissions.deny[0] Read(~/.ssh/**): the path is outside the workspace",
            "permissions.additionalDirectories[0] ../docs: toolgate has no extra workspace directories",
            "permissions.allow[1] Task: no toolgate tool or rule corresponds",
            "permissions.allow[2] 3: a rule must be a string",
            "permissions.future true: toolgate does not read this key",
            " : the file is not valid JSON",
        ];
        assert_eq!(unmapped.len(), expect.len(), "{unmapped:#?}");
        for want in expect {
            assert!(
                unmapped.iter().any(|u| u.starts_with(want)),
                "{want}: {unmapped:#?}"
            );
        }

        // Untrusted workspace files apply nothing, and say so.
        let import = read(&ws, Some(&home), &|_, _| Trust::Untrusted);
        assert!(import.rules.is_empty());
        assert_eq!(
            import.mode.as_ref().unwrap().0,
            ConfirmationMode::AcceptEdits
        );
        assert_eq!(import.untrusted().count(), 2);
        assert!(
            import
                .unmapped
                .iter()
                .any(|u| u.reason.starts_with("the workspace file is not trusted"))
        );
    }
}
