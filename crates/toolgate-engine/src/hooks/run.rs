//! Running one hook process, through the sandbox's process runner.
//!
//! A hook runs like every process toolgate starts (`toolgate-sandbox`): in
//! the standard profile (it may write the workspace, not toolgate's policy
//! files; it cannot read secrets), with a built environment plus the
//! `TOOLGATE_*` variables, in a process group (or PID namespace) that is
//! killed whole on timeout and after it exits, so a `sleep &` left behind
//! neither runs on unowned nor holds the output pipes open.

use serde_json::{Map, Value};
use toolgate_sandbox::{Capture, RunOptions, Spawn};

use super::{Hook, HookDecision, HookEvent, HookExecutor, HookRun, OnFailure};

pub(super) async fn run(
    executor: &HookExecutor,
    hook: &Hook,
    event: HookEvent,
    payload: &Map<String, Value>,
    tool: Option<&str>,
    file: Option<&str>,
    files: &str,
) -> HookRun {
    let spec = &hook.spec;
    let mut run = HookRun {
        name: spec.name.clone(),
        decision: HookDecision::Allow,
        additional_context: None,
        updated_input: None,
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
    };
    let spawn = match (&spec.argv, &spec.command) {
        (Some(argv), _) => {
            let substituted: Vec<String> = argv
                .iter()
                .map(|a| a.replace("{file}", file.unwrap_or("")))
                .collect();
            let Some((program, args)) = substituted.split_first() else {
                return failed(hook, run, "has an empty `argv`");
            };
            Spawn::program(program, args)
        }
        (None, Some(line)) => {
            Spawn::shell(line.replace("{file}", &shell_quote(file.unwrap_or(""))))
        }
        (None, None) => return failed(hook, run, "has no command"),
    };
    let input = payload.get("tool_input").map(Value::to_string);
    let session = payload
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let spawn = spawn
        .cwd(&executor.root)
        .env("TOOLGATE_EVENT", event.as_str())
        .env("TOOLGATE_TOOL_NAME", tool.unwrap_or(""))
        .env("TOOLGATE_TOOL_INPUT", input.unwrap_or_default())
        .env("TOOLGATE_FILE", file.unwrap_or(""))
        .env("TOOLGATE_FILES", files)
        .env(
            "TOOLGATE_WORKSPACE",
            executor.root.to_string_lossy().into_owned(),
        )
        .env("TOOLGATE_SESSION_ID", session);
    let body = Value::Object(payload.clone()).to_string();
    let options = RunOptions::new(hook.timeout)
        .stdin(body.into_bytes())
        .capture(Capture::Bytes(executor.output_cap));
    let finished = match executor.sandbox.run(&spawn, &options).await {
        Ok(finished) => finished,
        Err(error) => {
            let what = format!("could not start: {}", toolgate_core::error_chain(&error));
            return failed(hook, run, &what);
        }
    };
    run.stdout = finished.stdout;
    run.stderr = finished.stderr;
    if finished.timed_out {
        let reason = format!("timed out after {}s", hook.timeout.as_secs_f64());
        return failed(hook, run, &reason);
    }
    let code = finished.exit_code;
    run.exit_code = code;
    match code {
        Some(0) => {
            read_json(&mut run);
            run
        }
        Some(2) => {
            let reason = run.stderr.trim();
            let reason = if reason.is_empty() {
                "exit 2 (no reason given on stderr)".to_owned()
            } else {
                reason.to_owned()
            };
            run.decision = HookDecision::Block(reason);
            run
        }
        Some(n) => failed(hook, run, &format!("exit {n}")),
        None => failed(hook, run, "killed by a signal"),
    }
}

/// A failure: a block with `on_failure: block`, else a warning.
fn failed(hook: &Hook, mut run: HookRun, what: &str) -> HookRun {
    let output = [run.stderr.trim(), run.stdout.trim()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    run.decision = match hook.spec.on_failure {
        OnFailure::Block => HookDecision::Block(if output.is_empty() {
            format!("hook failed ({what})")
        } else {
            format!("hook failed ({what}): {output}")
        }),
        OnFailure::Allow => {
            let head = format!("[Hook {}: FAILED ({what})]", hook.spec.name);
            HookDecision::FailedAllowed(if output.is_empty() {
                head
            } else {
                format!("{head} {output}")
            })
        }
    };
    run
}

/// Reads `additionalContext`, `updatedInput` and `decision`/`reason` from a
/// JSON object on stdout, flat or under `hookSpecificOutput`. Anything else on
/// stdout is ignored.
fn read_json(run: &mut HookRun) {
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(run.stdout.trim()) else {
        return;
    };
    let nested = top.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |key: &str| {
        nested
            .and_then(|n| n.get(key))
            .or_else(|| top.get(key))
            .cloned()
    };
    if let Some(Value::String(context)) = field("additionalContext")
        && !context.is_empty()
    {
        run.additional_context = Some(context);
    }
    if let Some(input @ Value::Object(_)) = field("updatedInput") {
        run.updated_input = Some(input);
    }
    let decision = field("decision").or_else(|| field("permissionDecision"));
    if matches!(
        decision.as_ref().and_then(Value::as_str),
        Some("block" | "deny")
    ) {
        let reason = field("reason")
            .or_else(|| field("permissionDecisionReason"))
            .and_then(|r| r.as_str().map(str::to_owned))
            .unwrap_or_else(|| "blocked (no reason given)".to_owned());
        run.decision = HookDecision::Block(reason);
    }
}

/// `s` as one shell word: single quotes, with each `'` spelled `'\''`.
pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        let cases = [
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
            ("$(x)", "'$(x)'"),
        ];
        for (input, want) in cases {
            assert_eq!(shell_quote(input), want);
        }
    }
}
