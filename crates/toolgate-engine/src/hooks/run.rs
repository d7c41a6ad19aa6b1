//! Running one hook process.
//!
//! The hook runs in a process group of its own (`process_group(0)`), so a
//! timeout can kill everything it started — a `sh -c` wrapper, a `sleep`
//! grandchild — with one `kill(-pgid, SIGKILL)`. Killing only the direct
//! child would leave the grandchildren running with our pipes open, and the
//! reads below would never see end-of-file. The same holds after a normal
//! exit with a background job left behind, so the group is killed then too.
//! See `kill(2)` and
//! <https://docs.rs/tokio/latest/tokio/process/struct.Command.html#method.process_group>.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Hook, HookDecision, HookEvent, HookExecutor, HookRun, OnFailure};

/// How long the readers may take to finish after the group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

pub(super) async fn run(
    executor: &HookExecutor,
    hook: &Hook,
    event: HookEvent,
    payload: &Map<String, Value>,
    tool: Option<&str>,
    file: Option<&str>,
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
    let mut command = match (&spec.argv, &spec.command) {
        (Some(argv), _) => {
            let substituted: Vec<String> = argv
                .iter()
                .map(|a| a.replace("{file}", file.unwrap_or("")))
                .collect();
            let Some((program, args)) = substituted.split_first() else {
                return failed(hook, run, "has an empty `argv`");
            };
            let mut c = Command::new(program);
            c.args(args);
            c
        }
        (None, Some(line)) => {
            let line = line.replace("{file}", &shell_quote(file.unwrap_or("")));
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
        (None, None) => return failed(hook, run, "has no command"),
    };
    let input = payload.get("tool_input").map(Value::to_string);
    let session = payload
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    command
        .current_dir(&executor.root)
        .env("TOOLGATE_EVENT", event.as_str())
        .env("TOOLGATE_TOOL_NAME", tool.unwrap_or(""))
        .env("TOOLGATE_TOOL_INPUT", input.unwrap_or_default())
        .env("TOOLGATE_FILE", file.unwrap_or(""))
        .env("TOOLGATE_WORKSPACE", &executor.root)
        .env("TOOLGATE_SESSION_ID", session)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return failed(hook, run, &format!("could not start: {error}")),
    };
    let pid = child.id();
    let body = Value::Object(payload.clone()).to_string();
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that never reads stdin closes the pipe: that is fine.
        tokio::spawn(async move {
            let _ = stdin.write_all(body.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let cap = executor.output_cap;
    let stdout = child
        .stdout
        .take()
        .map(|s| tokio::spawn(read_capped(s, cap)));
    let stderr = child
        .stderr
        .take()
        .map(|s| tokio::spawn(read_capped(s, cap)));
    let status = tokio::time::timeout(hook.timeout, child.wait()).await;
    let timed_out = status.is_err();
    // On a timeout the whole group goes. After a normal exit too: anything
    // the hook left running in the background (`cmd &`) would hold our pipes
    // open and keep running unowned; `run_command` treats leftovers alike.
    kill_group(pid);
    if timed_out {
        let _ = child.kill().await;
    }
    run.stdout = collect(stdout).await;
    run.stderr = collect(stderr).await;
    if timed_out {
        let reason = format!("timed out after {}s", hook.timeout.as_secs_f64());
        return failed(hook, run, &reason);
    }
    let code = match status {
        Ok(Ok(status)) => status.code(),
        Ok(Err(error)) => return failed(hook, run, &format!("could not be waited for: {error}")),
        Err(_) => None,
    };
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

fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // The group id is the child's pid: it was made a group leader at spawn.
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

async fn collect(task: Option<tokio::task::JoinHandle<Vec<u8>>>) -> String {
    let Some(task) = task else {
        return String::new();
    };
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    }
}

/// Reads up to `cap` bytes, then drains the rest so the writer never blocks.
async fn read_capped(mut reader: impl AsyncRead + Unpin, cap: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0_u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
            }
        }
    }
    kept
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
