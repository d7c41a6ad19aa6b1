//! A finished process as a tool result: the output a model reads and the
//! metadata front ends show, worded alike for `run_command`, the `process`
//! tool and dynamic tools.

use toolgate_core::ToolResult;

use crate::{Finished, LimitHit};

/// A finished process as a result: stdout, then stderr under `[stderr]`;
/// a success when it exited 0, else a failure saying how it ended (`what`
/// names it: "the command", "the tool"), and which limit it hit with the
/// key that raises it. Shared by `run_command` and
/// dynamic tools.
pub fn outcome(finished: &Finished, timeout: u64, what: &str) -> ToolResult {
    let mut output = finished.stdout.clone();
    if !finished.stderr.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str("[stderr]\n");
        output.push_str(&finished.stderr);
    }
    let limits = limit_notes(&finished.limits_hit, what);
    if finished.exit_code == Some(0) && !finished.timed_out {
        if output.is_empty() {
            "(no output; exit code 0)".clone_into(&mut output);
        }
        if !limits.is_empty() {
            if !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(&limits);
        }
        return ToolResult::success(output);
    }
    let mut ended = if finished.timed_out {
        format!("timed out after {timeout}s; {what} and everything it started were killed")
    } else if let Some(code) = finished.exit_code {
        format!("exit code {code}")
    } else {
        format!("killed by signal {}", finished.signal.unwrap_or(0))
    };
    if !limits.is_empty() {
        ended.push_str("; ");
        ended.push_str(&limits);
    }
    ToolResult::failure(ended).with_output(output)
}

/// "the command hit the process limit (512 per command; raise
/// commands.limits.processes)", one sentence per limit hit, joined with
/// "; ".
pub fn limit_notes(hits: &[LimitHit], what: &str) -> String {
    hits.iter()
        .map(|hit| {
            format!(
                "{what} {} the {} limit ({}; raise commands.limits.{})",
                if hit.certain() { "hit" } else { "may have hit" },
                hit.limit().name(),
                hit.value(),
                hit.limit().key()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `result` with how the process ran: exit code, whether it timed out, its
/// duration, whether lines were cut, and the keys of the limits it hit
/// (when it hit one).
pub fn with_run_metadata(result: ToolResult, finished: &Finished) -> ToolResult {
    let result = if finished.limits_hit.is_empty() {
        result
    } else {
        result.with_metadata(
            "limits_hit",
            finished
                .limits_hit
                .iter()
                .map(|hit| hit.limit().key())
                .collect::<Vec<_>>(),
        )
    };
    result
        .with_metadata("exit_code", finished.exit_code)
        .with_metadata("timed_out", finished.timed_out)
        .with_metadata(
            "duration_ms",
            u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX),
        )
        .with_metadata("lines_cut", finished.cut)
}
