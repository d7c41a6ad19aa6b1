//! `toolgate rules list | add | remove`: the persistent confirmation rules
//! in the user's own configuration file. The rules themselves are in
//! `toolgate_policy::ConfirmationRules`; the file editing in
//! `toolgate_host::UserRules`. With a store several workers share
//! (`store.url`), rules can also be saved in it (`--store`): every worker
//! applies them.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_host::{RulesFileError, TrustPolicy, UserRules};
use toolgate_policy::{Access, ConfirmationRule};
use toolgate_store::SavedRule;

use crate::cli::{GlobalArgs, ProviderArgs, RulesAddArgs, RulesCommand};
use crate::render::{self, CliError, Exit};
use crate::{json_text, out, show};

pub(crate) async fn rules(global: &GlobalArgs, cmd: &RulesCommand) -> Result<Exit, CliError> {
    let json = global.json && !global.no_json;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let mut file = UserRules::open_user(&env).map_err(file_error)?;
    match cmd {
        RulesCommand::List => {
            let saved = match shared_store(global, false)? {
                Some(store) => Some(store.rules().await.map_err(store_error)?),
                None => None,
            };
            list(global, &file, saved.as_deref(), json)
        }
        RulesCommand::Add(args) if args.store => {
            let Some(store) = shared_store(global, true)? else {
                return Err(no_store());
            };
            add_stored(store.as_ref(), args, json).await
        }
        RulesCommand::Add(args) => add(&mut file, args, json),
        RulesCommand::Remove {
            number,
            store: true,
        } => {
            let Some(store) = shared_store(global, true)? else {
                return Err(no_store());
            };
            remove_stored(store.as_ref(), *number, json).await
        }
        RulesCommand::Remove { number, .. } => remove(&mut file, *number, json),
    }
}

/// The store of `store.url`, when the configuration names one: the store
/// several workers share. `None` without one (`SQLite`), or, unless
/// `needed`, when the configuration does not load (a bad rule in the file
/// must not keep the file's rules from being listed or removed).
fn shared_store(
    global: &GlobalArgs,
    needed: bool,
) -> Result<Option<std::sync::Arc<dyn toolgate_store::Store>>, CliError> {
    let host = crate::host_builder(global, &ProviderArgs::default(), trust_of(global))
        .and_then(toolgate_host::HostBuilder::load);
    let host = match host {
        Ok(host) => host,
        Err(error) if needed => return Err(error.into()),
        Err(_) => return Ok(None),
    };
    if host.config().store.url.is_none() {
        return Ok(None);
    }
    Ok(Some(host.store()?))
}

/// The workspace's settings are trusted as a command that does not ask
/// would trust them.
fn trust_of(global: &GlobalArgs) -> TrustPolicy {
    if global.trust_workspace && !global.no_trust_workspace {
        TrustPolicy::ThisRun
    } else {
        TrustPolicy::StoreOnly
    }
}

fn no_store() -> CliError {
    CliError::new(
        Exit::Usage,
        anyhow::anyhow!("--store needs a shared store, and the configuration names none"),
    )
    .with_hint("set `store.url: postgres://USER@HOST:PORT/DATABASE` (see docs/gateway.md), or leave out --store to use your config file")
}

fn store_error(error: toolgate_store::StoreError) -> CliError {
    CliError::new(
        Exit::Failure,
        anyhow::Error::new(error).context("the rules saved in the shared store cannot be reached"),
    )
    .with_hint("check that the PostgreSQL server of `store.url` is up (`toolgate store migrate` checks it)")
}

fn list(
    global: &GlobalArgs,
    file: &UserRules,
    saved: Option<&[SavedRule]>,
    json: bool,
) -> Result<Exit, CliError> {
    let rules = file.rules().map_err(file_error)?;
    let import = imported(global);
    if json {
        let mut list: Vec<Value> = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                // Without a shared store, every rule is the file's: the
                // list stays as it always was.
                let value = numbered(i + 1, rule);
                if saved.is_some() {
                    sourced(value, "file")
                } else {
                    value
                }
            })
            .collect();
        for rule in saved.unwrap_or_default() {
            list.push(stored(rule));
        }
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
    // With a shared store, each line says where its rule is: `file N` or
    // `store ID` (what `rules remove [--store]` takes).
    let label = if saved.is_some() { "file " } else { "" };
    for (i, rule) in rules.iter().enumerate() {
        let _ = writeln!(text, "{label}{}  {rule}", i + 1);
    }
    for saved in saved.unwrap_or_default() {
        let rule = serde_json::from_value::<ConfirmationRule>(saved.rule.clone())
            .map_or_else(|_| saved.rule.to_string(), |r| r.to_string());
        let _ = writeln!(
            text,
            "store {}  {rule}  (saved by {})",
            saved.id, saved.saved_by
        );
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
    let host = crate::host_builder(global, &ProviderArgs::default(), trust_of(global))
        .ok()?
        .load()
        .ok()?;
    host.loaded().claude.clone()
}

fn add(file: &mut UserRules, args: &RulesAddArgs, json: bool) -> Result<Exit, CliError> {
    let rule = rule_of(args);
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

async fn add_stored(
    store: &dyn toolgate_store::Store,
    args: &RulesAddArgs,
    json: bool,
) -> Result<Exit, CliError> {
    let rule = rule_of(args);
    let saved = toolgate_host::save_rule_in_store(store, &rule, "cli")
        .await
        .map_err(|error| match error {
            toolgate_host::SaveRuleError::Invalid(e) => {
                CliError::new(Exit::Usage, anyhow::Error::new(e))
            }
            toolgate_host::SaveRuleError::Store(e) => store_error(e),
            other => CliError::new(Exit::Failure, anyhow::Error::new(other)),
        })?;
    if json {
        return out(&json_text(
            &json!({"store": true, "added": stored(&saved)}),
        )?);
    }
    show(&format!(
        "added rule {} to the shared store: {rule}\n",
        saved.id
    ))
}

async fn remove_stored(
    store: &dyn toolgate_store::Store,
    id: usize,
    json: bool,
) -> Result<Exit, CliError> {
    let id = i64::try_from(id).unwrap_or(i64::MAX);
    if !store.remove_rule(id).await.map_err(store_error)? {
        return Err(CliError::new(
            Exit::Usage,
            anyhow::anyhow!("the shared store holds no saved rule {id}"),
        )
        .with_hint("`toolgate rules list` shows the store's rules as `store ID`"));
    }
    if json {
        return out(&json_text(&json!({"store": true, "removed": id}))?);
    }
    show(&format!("removed rule {id} from the shared store\n"))
}

/// The rule `rules add` was given.
fn rule_of(args: &RulesAddArgs) -> ConfirmationRule {
    let access = match args.access.as_deref() {
        Some("read") => Some(Access::Read),
        Some("write") => Some(Access::Write),
        _ => None,
    };
    ConfirmationRule {
        tool: args.tool.clone(),
        command: args.command.clone(),
        path: args.path.clone(),
        access,
        domain: args.domain.clone(),
        exact: args.exact,
        except: args.except.clone(),
        decision: args.decision,
    }
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

/// A listed rule's JSON, saying where it is (`file` or `store`).
fn sourced(mut value: Value, source: &str) -> Value {
    if let Value::Object(map) = &mut value {
        map.insert("source".into(), json!(source));
    }
    value
}

/// A rule saved in the store as JSON: its id, source, who and when.
fn stored(saved: &SavedRule) -> Value {
    let mut value = json!({"id": saved.id, "source": "store"});
    if let Value::Object(map) = &mut value {
        match &saved.rule {
            Value::Object(fields) => map.extend(fields.clone()),
            other => {
                map.insert("rule".into(), other.clone());
            }
        }
        map.insert("saved_by".into(), json!(saved.saved_by));
        map.insert("saved".into(), json!(saved.saved));
    }
    value
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
