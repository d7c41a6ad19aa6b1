//! `toolgate rules list | add | remove`: the persistent confirmation rules
//! in the user's own configuration file. The rules themselves are in
//! `toolgate_policy::ConfirmationRules`; the file editing in
//! `toolgate_host::UserRules`.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_host::{RulesFileError, TrustPolicy, UserRules};
use toolgate_policy::{Access, ConfirmationRule};

use crate::cli::{GlobalArgs, ProviderArgs, RulesAddArgs, RulesCommand};
use crate::render::{self, CliError, Exit};
use crate::{json_text, out, show};

pub(crate) fn rules(global: &GlobalArgs, cmd: &RulesCommand) -> Result<Exit, CliError> {
    let json = global.json && !global.no_json;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let mut file = UserRules::open_user(&env).map_err(file_error)?;
    match cmd {
        RulesCommand::List => list(global, &file, json),
        RulesCommand::Add(args) => add(&mut file, args, json),
        RulesCommand::Remove { number } => remove(&mut file, *number, json),
    }
}

fn list(global: &GlobalArgs, file: &UserRules, json: bool) -> Result<Exit, CliError> {
    let rules = file.rules().map_err(file_error)?;
    let import = imported(global);
    if json {
        let mut list: Vec<Value> = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| numbered(i + 1, rule))
            .collect();
        let mut unmapped = Vec::new();
        if let Some(import) = &import {
            for (i, imported) in import.rules.iter().enumerate() {
                let mut value = numbered(rules.len() + i + 1, &imported.rule);
                if let Value::Object(map) = &mut value {
                    map.insert("origin".into(), json!(imported.origin));
                }
                list.push(value);
            }
            unmapped = import
                .unmapped
                .iter()
                .map(|u| json!({"origin": u.origin, "reason": u.reason}))
                .collect();
        }
        if import.is_none() {
            return out(&json_text(&list)?);
        }
        return out(&json_text(
            &json!({"rules": list, "not_imported": unmapped}),
        )?);
    }
    let mut text = String::new();
    if rules.is_empty() {
        render::note(&format!("no rules in {}", file.path().display()));
    }
    for (i, rule) in rules.iter().enumerate() {
        let _ = writeln!(text, "{}  {rule}", i + 1);
    }
    if let Some(import) = &import {
        if import.rules.is_empty() {
            text.push_str("no rules imported from Claude Code settings\n");
        } else {
            text.push_str("imported from Claude Code settings:\n");
        }
        for (i, imported) in import.rules.iter().enumerate() {
            let _ = writeln!(
                text,
                "{}  {}\n     from {}",
                rules.len() + i + 1,
                imported.rule,
                imported.origin
            );
        }
        if !import.unmapped.is_empty() {
            text.push_str("not imported:\n");
        }
        for entry in &import.unmapped {
            let at = if entry.origin.key.is_empty() {
                entry.origin.file.display().to_string()
            } else {
                entry.origin.to_string()
            };
            let _ = writeln!(text, "   {at}: {}", entry.reason);
        }
    }
    if text.is_empty() {
        return Ok(Exit::Success);
    }
    show(&text)
}

/// What `confirmation.import: [claude]` reads for this workspace, when it
/// is set; the workspace's settings are trusted as a command that does
/// not ask would trust them. A configuration that does not load shows
/// nothing here: every other command reports it.
fn imported(global: &GlobalArgs) -> Option<toolgate_host::claude::ClaudeImport> {
    let trust = if global.trust_workspace && !global.no_trust_workspace {
        TrustPolicy::ThisRun
    } else {
        TrustPolicy::StoreOnly
    };
    let host = crate::host_builder(global, &ProviderArgs::default(), trust)
        .ok()?
        .load()
        .ok()?;
    host.loaded().claude.clone()
}

fn add(file: &mut UserRules, args: &RulesAddArgs, json: bool) -> Result<Exit, CliError> {
    let access = match args.access.as_deref() {
        Some("read") => Some(Access::Read),
        Some("write") => Some(Access::Write),
        _ => None,
    };
    let rule = ConfirmationRule {
        tool: args.tool.clone(),
        command: args.command.clone(),
        path: args.path.clone(),
        access,
        domain: args.domain.clone(),
        exact: args.exact,
        except: args.except.clone(),
        decision: args.decision,
    };
    let number = file.add(&rule).map_err(file_error)?;
    file.save().map_err(file_error)?;
    if json {
        return out(&json_text(&json!({
            "file": file.path(),
            "added": numbered(number, &rule),
        }))?);
    }
    show(&format!(
        "added rule {number} to {}: {rule}\n",
        file.path().display()
    ))
}

fn remove(file: &mut UserRules, number: usize, json: bool) -> Result<Exit, CliError> {
    // Worded as `rules list` and `rules add` word it, when it reads as a
    // rule; else as the YAML it was.
    let worded = file
        .rules()
        .ok()
        .and_then(|rules| rules.get(number.wrapping_sub(1)).map(ToString::to_string));
    let removed = file.remove(number).map_err(file_error)?;
    file.save().map_err(file_error)?;
    if json {
        return out(&json_text(&json!({
            "file": file.path(),
            "removed": number,
        }))?);
    }
    show(&format!(
        "removed rule {number} from {}: {}\n",
        file.path().display(),
        worded.unwrap_or_else(|| removed.replace('\n', " "))
    ))
}

/// A rule as JSON, with its number first.
fn numbered(number: usize, rule: &ConfirmationRule) -> Value {
    let mut value = json!({ "number": number });
    if let (Value::Object(map), Ok(Value::Object(fields))) =
        (&mut value, serde_json::to_value(rule))
    {
        map.extend(fields);
    }
    value
}

fn file_error(error: RulesFileError) -> CliError {
    let exit = if error.is_io() {
        Exit::Failure
    } else {
        Exit::Usage
    };
    let hint = error.hint();
    let mut cli = CliError::new(exit, anyhow::Error::new(error));
    if let Some(hint) = hint {
        cli = cli.with_hint(hint);
    }
    cli
}
