//! `toolgate classify WORDS`: how the gate would classify a command line,
//! and the global switches written after its words.

use super::{Setup, json_text, out};
use crate::cli::GlobalArgs;
use crate::render;
use crate::render::{CliError, Exit};

/// `toolgate classify`: the verdict on a command line, as `run_command`
/// would judge it with this configuration.
/// Global switches written after `classify`'s words (`classify ls -la
/// --json`) are toolgate's, as after any other command, unless the words
/// came after `--` (`classify -- ls --json` classifies `ls --json`).
pub(super) fn absorb_trailing_flags(words: &mut Vec<String>, global: &mut GlobalArgs) {
    if std::env::args_os().any(|a| a == "--") {
        return;
    }
    while words.len() > 1 {
        let Some(last) = words.last() else { break };
        let flag = match last.as_str() {
            "--json" => &mut global.json,
            "--no-json" => &mut global.no_json,
            "--dry-run" => &mut global.dry_run,
            "--no-dry-run" => &mut global.no_dry_run,
            "--allow-commands" => &mut global.allow_commands,
            "--no-commands" => &mut global.no_commands,
            "--trust-workspace" => &mut global.trust_workspace,
            "--no-trust-workspace" => &mut global.no_trust_workspace,
            _ => break,
        };
        *flag = true;
        words.pop();
    }
}

/// The words of `classify` as one command line: a single argument as it
/// is (`'ls -la'`), several joined with the shell quoting each needs.
pub(super) fn command_line(words: &[String]) -> String {
    if let [one] = words {
        return one.clone();
    }
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

pub(super) async fn classify(setup: &Setup, words: &[String]) -> Result<Exit, CliError> {
    let command = command_line(words);
    let judged = setup.host.judge_command(&command).await?;
    let verdict = &judged.verdict;
    if setup.json {
        let value = serde_json::json!({
            "command": command,
            "class": judged.label(),
            "reason": judged.guardrail.as_deref().unwrap_or(verdict.reason()),
            "classifier": verdict,
            "guardrail": judged.guardrail,
        });
        return out(&json_text(&value)?);
    }
    let color = render::stdout_color();
    let label = judged.label();
    let mut text = render::paint(render::class_style(label), label, color);
    text.push('\n');
    out(&text)?;
    match &judged.guardrail {
        Some(reason) if !verdict.is_blocked() => render::note(&format!(
            "run_command would refuse it: guardrail: {reason} (the classifier alone says {}: {})",
            verdict.label(),
            verdict.reason()
        )),
        _ if !verdict.reason().is_empty() => render::note(verdict.reason()),
        _ => {}
    }
    Ok(Exit::Success)
}
