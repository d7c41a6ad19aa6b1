//! `toolgate trust`, and the people-facing side of workspace trust: the
//! terminal prompt and the warning about ignored keys. The rules are in
//! `toolgate_host::trust`.

use std::fmt::Write as _;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use serde_json::json;

use toolgate_host::trust::{ReviewItem, TrustError, TrustStore};
use toolgate_host::{ProjectFile, ProjectStatus, TrustPolicy};

use crate::cli::{GlobalArgs, TrustArgs};
use crate::render::{self, CliError, Exit};
use crate::{json_text, out, show};

/// How a command may settle an untrusted workspace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Ask on the terminal when there is one (stdin and stderr are TTYs).
    Terminal,
    /// Never ask: the command reads data from stdin (`mcp serve` over
    /// stdio, `call TOOL -`), or only inspects (`config check`, `classify`).
    Never,
}

/// How an untrusted workspace file is settled for a command that may
/// (`Ask::Terminal`) or may not ask: on a terminal (stdin and stderr are
/// TTYs) the person is asked, and a yes is recorded by the host.
pub(crate) fn policy(ask: Ask) -> TrustPolicy {
    let terminal = io::stdin().is_terminal() && io::stderr().is_terminal();
    if ask == Ask::Never || !terminal {
        return TrustPolicy::StoreOnly;
    }
    TrustPolicy::Ask(Box::new(prompt))
}

/// Shows what the file would run and set, and asks. Only a `y`/`yes` line
/// trusts; anything else, end of input included, does not.
fn prompt(project: &ProjectFile) -> bool {
    let text = format!(
        "\ntoolgate: the workspace configuration {} is not trusted.\n\
         Trusting it lets it run these programs and set these keys:\n{}\
         Its other keys apply either way. A yes is recorded for this content of the file \
         (`toolgate trust --revoke` undoes it).\n\
         Trust this configuration? [y/N] ",
        project.path.display(),
        review_text(&project.review()),
    );
    // The workspace file is anyone's: what it would run is shown
    // neutralised, like every other text a person decides on.
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_all(render::clean(&text).as_bytes());
    let _ = stderr.flush();
    drop(stderr);
    let mut line = String::new();
    match io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => {
            let _ = writeln!(io::stderr());
            false
        }
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

/// The trust-only keys and what they would run, one block per key:
///
/// ```text
///   hooks.pre_tool_use:
///     marker: sh -c 'echo {file} >> hook.log'
///   confirmation.mode: "yolo"
/// ```
fn review_text(items: &[ReviewItem]) -> String {
    let mut text = String::new();
    for item in items {
        match &item.value {
            Some(value) if item.programs.is_empty() => {
                let _ = writeln!(text, "  {}: {value}", item.key);
            }
            _ => {
                let _ = writeln!(text, "  {}:", item.key);
                for program in &item.programs {
                    let _ = writeln!(text, "    {}: {}", program.name, program.run);
                }
            }
        }
    }
    text
}

/// The one warning about the keys an untrusted workspace file could not
/// set, with the command that trusts it.
pub(crate) fn warn_ignored(status: &ProjectStatus, global: &GlobalArgs, workspace: &Path) {
    let ignored = status.ignored();
    if ignored.is_empty() {
        return;
    }
    render::warning(
        &format!(
            "ignoring {} in {}: the workspace configuration is not trusted",
            ignored.join(", "),
            status.file.display()
        ),
        Some(&format!(
            "run `{}` to apply them, or pass --trust-workspace for this run only",
            trust_command(global, workspace)
        )),
    );
}

/// The one warning about Claude Code settings that did not apply: the
/// untrusted workspace files, and how many entries could not be mapped.
pub(crate) fn warn_claude(
    import: &toolgate_host::claude::ClaudeImport,
    global: &GlobalArgs,
    workspace: &Path,
) {
    let untrusted: Vec<String> = import
        .untrusted()
        .map(|f| f.path.display().to_string())
        .collect();
    if !untrusted.is_empty() {
        render::warning(
            &format!(
                "not applying the Claude Code settings in {}: the workspace's settings are not trusted",
                untrusted.join(", ")
            ),
            Some(&format!(
                "run `{}` to apply them, or pass --trust-workspace for this run only",
                trust_command(global, workspace)
            )),
        );
    }
    let unmapped = import
        .unmapped
        .iter()
        .filter(|u| !u.origin.key.is_empty())
        .count();
    if unmapped > 0 {
        render::warning(
            &format!("{unmapped} Claude Code setting(s) could not be applied"),
            Some("`toolgate rules list` shows each one with the reason"),
        );
    }
}

/// `toolgate trust`, spelled for this invocation's file.
fn trust_command(global: &GlobalArgs, workspace: &Path) -> String {
    if let Some(file) = &global.config {
        return format!("toolgate --config {} trust", file.display());
    }
    let here = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .is_ok_and(|d| d == workspace);
    if here {
        "toolgate trust".to_owned()
    } else {
        format!("toolgate trust {}", workspace.display())
    }
}

fn store_error(error: TrustError) -> CliError {
    let hint = error.hint();
    CliError::usage(anyhow!(error)).with_hint(hint)
}

fn open_store() -> Result<TrustStore, CliError> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let path =
        toolgate_host::trust_store_path(&env).ok_or_else(|| store_error(TrustError::NoPlace))?;
    TrustStore::open(path).map_err(store_error)
}

/// `toolgate trust [DIR]`, `--revoke`, `--list`.
pub(crate) fn trust(global: &GlobalArgs, args: &TrustArgs) -> Result<Exit, CliError> {
    let json = global.json && !global.no_json;
    let mut store = open_store()?;
    if args.list {
        return list(&store, json);
    }
    let workspace = crate::resolve_workspace(args.dir.as_deref().or(global.workspace.as_deref()))?;
    let file = global
        .config
        .clone()
        .unwrap_or_else(|| workspace.join("toolgate.yaml"));
    if args.revoke {
        let canonical = file
            .canonicalize()
            .unwrap_or_else(|_| std::path::absolute(&file).unwrap_or(file));
        let mut was_trusted = store.revoke(&canonical);
        if global.config.is_none() {
            for path in toolgate_host::claude::workspace_files(&workspace) {
                if let Ok(path) = path.canonicalize() {
                    was_trusted |= store.revoke(&path);
                }
            }
        }
        if was_trusted {
            store.save().map_err(store_error)?;
        }
        if json {
            return out(&json_text(
                &json!({"file": canonical, "was_trusted": was_trusted}),
            )?);
        }
        if !was_trusted {
            render::note(&format!("{} was not trusted", canonical.display()));
            return Ok(Exit::Success);
        }
        return show(&format!("no longer trusted: {}\n", canonical.display()));
    }
    // Claude Code's settings in the workspace, read by
    // `confirmation.import: [claude]`, are trusted with it.
    let claude = if global.config.is_none() {
        trust_claude_files(&mut store, &workspace)?
    } else {
        Vec::new()
    };
    if !file.is_file() && !claude.is_empty() {
        store.save().map_err(store_error)?;
        if json {
            return out(&json_text(
                &json!({"claude_settings": claude, "store": store.path()}),
            )?);
        }
        let mut text = String::new();
        trusted_lines(&mut text, &claude);
        text.push_str("a change to a file makes it untrusted again\n");
        return show(&text);
    }
    if !file.is_file() {
        return Err(CliError::usage(anyhow!(
            "there is no configuration file to trust at {}",
            file.display()
        ))
        .with_hint("trust a workspace that has a toolgate.yaml or .claude/settings.json, or name the file with --config"));
    }
    let project = ProjectFile::read(&file).map_err(toolgate_host::HostError::from)?;
    store.trust(project.path.clone(), project.sha256.clone());
    store.save().map_err(store_error)?;
    let review = project.review();
    if json {
        return out(&json_text(&json!({
            "file": project.path,
            "sha256": project.sha256,
            "store": store.path(),
            "trust_only_keys": review,
            "claude_settings": claude,
        }))?);
    }
    let mut text = format!(
        "trusted {} (sha256 {})\n",
        project.path.display(),
        &project.sha256[..12]
    );
    trusted_lines(&mut text, &claude);
    if review.is_empty() {
        text.push_str("it has no keys that need trust: all of it applied already\n");
    } else {
        text.push_str("it may now run these programs and set these keys:\n");
        text.push_str(&review_text(&review));
        text.push_str("a change to the file makes it untrusted again\n");
    }
    show(&text)
}

/// Records the workspace's Claude Code settings files that exist, as they
/// are now: their canonical paths and hashes.
fn trust_claude_files(
    store: &mut TrustStore,
    workspace: &Path,
) -> Result<Vec<(PathBuf, String)>, CliError> {
    let mut trusted = Vec::new();
    for path in toolgate_host::claude::workspace_files(workspace) {
        if !path.is_file() {
            continue;
        }
        let read = |e: io::Error| {
            CliError::usage(anyhow!(e).context(format!("could not read {}", path.display())))
        };
        let canonical = path.canonicalize().map_err(read)?;
        let bytes = std::fs::read(&canonical).map_err(read)?;
        let sha256 = toolgate_host::trust::sha256_hex(&bytes);
        store.trust(canonical.clone(), sha256.clone());
        trusted.push((canonical, sha256));
    }
    Ok(trusted)
}

/// Whether a trusted file is as it was when trusted.
fn state(path: &PathBuf, sha256: &str) -> &'static str {
    match std::fs::read(path) {
        Ok(bytes) if toolgate_host::trust::sha256_hex(&bytes) == sha256 => "unchanged",
        Ok(_) => "changed",
        Err(_) => "missing",
    }
}

fn list(store: &TrustStore, json: bool) -> Result<Exit, CliError> {
    if json {
        let files: Vec<_> = store
            .files()
            .iter()
            .map(|f| {
                json!({
                    "file": f.path,
                    "sha256": f.sha256,
                    "trusted_at": f.trusted_at,
                    "state": state(&f.path, &f.sha256),
                })
            })
            .collect();
        return out(&json_text(&files)?);
    }
    if store.files().is_empty() {
        render::note("no workspace configuration is trusted");
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    for f in store.files() {
        let _ = writeln!(
            text,
            "{}  {}  trusted {}",
            f.path.display(),
            state(&f.path, &f.sha256),
            f.trusted_at
        );
    }
    show(&text)
}

/// One "trusted FILE (sha256 PREFIX)" line for each file.
fn trusted_lines<'a>(
    text: &mut String,
    files: impl IntoIterator<Item = &'a (std::path::PathBuf, String)>,
) {
    for (path, sha256) in files {
        let prefix = sha256.get(..12).unwrap_or(sha256);
        let _ = writeln!(text, "trusted {} (sha256 {prefix})", path.display());
    }
}
