//! `toolgate rules list | add | remove`: the persistent confirmation rules
//! in the user's own configuration file. The rules themselves are in
//! `toolgate_policy::ConfirmationRules`; the file editing in
//! `toolgate_host::UserRules`.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_host::{RulesFileError, UserRules};
use toolgate_policy::{Access, ConfirmationRule};

use crate::cli::{GlobalArgs, RulesAddArgs, RulesCommand};
use crate::render::{self, CliError, Exit};
use crate::{json_text, out, show};

pub(crate) fn rules(global: &GlobalArgs, cmd: &RulesCommand) -> Result<Exit, CliError> {
    let json = global.json && !global.no_json;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let mut file = UserRules::open_user(&env).map_err(file_error)?;
    match cmd {
        RulesCommand::List => list(&file, json),
        RulesCommand::Add(args) => add(&mut file, args, json),
        RulesCommand::Remove { number } => remove(&mut file, *number, json),
    }
}

fn list(file: &UserRules, json: bool) -> Result<Exit, CliError> {
    let rules = file.rules().map_err(file_error)?;
    if json {
        let list: Vec<Value> = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| numbered(i + 1, rule))
            .collect();
        return out(&json_text(&list)?);
    }
    if rules.is_empty() {
        render::note(&format!("no rules in {}", file.path().display()));
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    for (i, rule) in rules.iter().enumerate() {
        let _ = writeln!(text, "{}  {rule}", i + 1);
    }
    show(&text)
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
