//! The person's side: what is pending, approving, rejecting — and the text
//! `toolgate tools pending|approve|reject` prints.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_core::{neutralize, neutralize_line};
use toolgate_store::{DynamicToolRecord, DynamicToolStatus, DynamicToolStore, StatusChange};

use super::definition::{Draft, check};
use super::{DynamicConfig, DynamicError};

/// The tools waiting for review, oldest first.
pub async fn pending(store: &dyn DynamicToolStore) -> Result<Vec<DynamicToolRecord>, DynamicError> {
    store
        .list_dynamic_tools(Some(DynamicToolStatus::Pending))
        .await
        .map_err(DynamicError::Store)
}

/// Approves a tool and returns it as stored.
///
/// # Rules
///
/// 1. Only a tool that passes the checks it will be loaded with (under
///    `config`) can be approved: one that would never load is refused
///    with the reason ([`DynamicError::Invalid`]).
/// 2. A rejected tool cannot be approved ([`DynamicError::Rejected`]);
///    approving an approved tool changes nothing.
/// 3. Processes pick the approval up at their next
///    [`sync`](super::DynamicTools::sync); the tool is stored, so it is
///    there after a restart too.
pub async fn approve(
    store: &dyn DynamicToolStore,
    config: &DynamicConfig,
    id: i64,
) -> Result<DynamicToolRecord, DynamicError> {
    let record = store
        .dynamic_tool(id)
        .await
        .map_err(DynamicError::Store)?
        .ok_or(DynamicError::NotFound(id))?;
    if record.status == DynamicToolStatus::Rejected {
        return Err(DynamicError::Rejected {
            id,
            name: record.name,
        });
    }
    check(config, &Draft::of(&record)).map_err(|reason| DynamicError::Invalid {
        id,
        name: record.name.clone(),
        reason,
    })?;
    set(store, id, DynamicToolStatus::Approved).await
}

/// Rejects a tool (a pending one, or an approved one, which withdraws
/// it: no process runs it again, see [`DynamicTool`](super::DynamicTool)
/// rule 3) and returns it as stored. A rejected tool frees its name.
pub async fn reject(
    store: &dyn DynamicToolStore,
    id: i64,
) -> Result<DynamicToolRecord, DynamicError> {
    set(store, id, DynamicToolStatus::Rejected).await
}

async fn set(
    store: &dyn DynamicToolStore,
    id: i64,
    status: DynamicToolStatus,
) -> Result<DynamicToolRecord, DynamicError> {
    match store
        .set_dynamic_tool_status(id, status)
        .await
        .map_err(DynamicError::Store)?
    {
        StatusChange::Changed(record) => Ok(record),
        StatusChange::Final(record) => Err(DynamicError::Rejected {
            id,
            name: record.name,
        }),
        _ => Err(DynamicError::NotFound(id)),
    }
}

/// The text of `toolgate tools pending`: every tool with its source, its
/// schema and the static analysis's notes, and the commands to approve or
/// reject it; with `json`, an array of objects (see [`record_json`]).
///
/// Everything the agent wrote is shown neutralised, so that what the
/// reviewer reads is what would run: a terminal would otherwise let a
/// source hide lines (`\r`, escape sequences) or show them in another
/// order ("Trojan Source", CVE-2021-42574). Names, descriptions and notes
/// go through [`neutralize_line`]; the source, line by line, through
/// [`neutralize`], which keeps its tabs.
pub fn render_pending(records: &[DynamicToolRecord], json: bool) -> String {
    if json {
        let list: Vec<Value> = records.iter().map(record_json).collect();
        return format!("{}\n", Value::Array(list));
    }
    if records.is_empty() {
        return "no dynamic tools are pending review\n".to_owned();
    }
    let mut out = String::new();
    for record in records {
        let _ = writeln!(
            out,
            "#{} {} ({}{}, scope {}, by {}, {})",
            record.id,
            neutralize_line(&record.name),
            record.kind.as_str(),
            record
                .interpreter
                .as_deref()
                .map(|i| format!(" {}", neutralize_line(i)))
                .unwrap_or_default(),
            record.scope.as_str(),
            neutralize_line(&record.created_by),
            time(record.created),
        );
        let _ = writeln!(out, "  {}", neutralize_line(&record.description));
        let _ = writeln!(out, "  source:");
        for line in record.source.lines() {
            let _ = writeln!(out, "    | {}", neutralize(line));
        }
        let _ = writeln!(
            out,
            "  parameters: {}",
            neutralize_line(&record.parameters.to_string())
        );
        let findings = record
            .advice
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if findings.is_empty() {
            let _ = writeln!(out, "  notes: none");
        } else {
            let _ = writeln!(out, "  notes (advice, not a verdict):");
            for finding in findings {
                let field = |key: &str| finding.get(key).and_then(Value::as_str).unwrap_or("?");
                let line = finding.get("line").and_then(Value::as_u64).unwrap_or(0);
                let _ = writeln!(
                    out,
                    "    - line {line}: {}: {} (`{}`)",
                    neutralize_line(field("category")),
                    neutralize_line(field("reason")),
                    neutralize_line(field("matched")),
                );
            }
        }
        let _ = writeln!(
            out,
            "  toolgate tools approve {id}  |  toolgate tools reject {id}\n",
            id = record.id
        );
    }
    out
}

/// The text of `toolgate tools approve|reject`, after the change.
pub fn render_review(record: &DynamicToolRecord) -> String {
    let name = neutralize_line(&record.name);
    match record.status {
        DynamicToolStatus::Approved => format!(
            "approved dynamic tool #{} `{name}`: agents load it at their next step\n",
            record.id
        ),
        DynamicToolStatus::Rejected => format!(
            "rejected dynamic tool #{} `{name}`: it will not run, and its name is free again\n",
            record.id
        ),
        DynamicToolStatus::Pending => {
            format!("dynamic tool #{} `{name}` is pending review\n", record.id)
        }
    }
}

/// One tool as `pending --json` shows it.
///
/// # Wire format
///
/// `{"id", "name", "type": "command"|"script", "status":
/// "pending"|"approved"|"rejected", "source", "description", "interpreter":
/// str|null, "parameters": {…}, "scope": "agent"|"global", "created_by",
/// "session_id": str|null, "created": ms, "updated": ms, "advice": [{"category",
/// "reason", "matched", "line"}]}`. Strings are the stored text (JSON
/// escapes every control character).
pub fn record_json(record: &DynamicToolRecord) -> Value {
    json!({
        "id": record.id,
        "name": record.name,
        "type": record.kind.as_str(),
        "status": record.status.as_str(),
        "source": record.source,
        "description": record.description,
        "interpreter": record.interpreter,
        "parameters": record.parameters,
        "scope": record.scope.as_str(),
        "created_by": record.created_by,
        "session_id": record.session_id,
        "created": record.created,
        "updated": record.updated,
        "advice": record.advice,
    })
}

/// Milliseconds since the epoch as an RFC 3339 time (UTC, seconds).
fn time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(
        |_| ms.to_string(),
        |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `escape_controls`, the copy this module had, was tested for,
    /// in the spelling of the one neutraliser.
    #[test]
    fn controls_and_hiding_characters_are_escaped() {
        let cases: &[(&str, &str)] = &[
            ("plain text", "plain text"),
            ("tab\there", "tab\\there"),
            ("line\nbreak", "line\\nbreak"),
            ("ok\rrm -rf ~", "ok\\rrm -rf ~"),
            ("\u{1b}[2Khidden", "\\x1b[2Khidden"),
            ("a\u{202E}evil\u{202C}b", "a\\u{202E}evil\\u{202C}b"),
            ("zero\u{200B}width", "zero\\u{200B}width"),
            ("bom\u{FEFF}", "bom\\u{FEFF}"),
            ("café ñ 日本", "café ñ 日本"),
        ];
        for (text, shown) in cases {
            assert_eq!(neutralize_line(text), *shown, "{text:?}");
        }
    }

    #[test]
    fn what_the_agent_wrote_is_shown_neutralised() {
        let record = DynamicToolRecord {
            id: 7,
            name: "ok\u{1b}[2K".to_owned(),
            description: "two\nlines\u{202E}txt".to_owned(),
            kind: toolgate_store::DynamicToolKind::Script,
            interpreter: Some("sh\r".to_owned()),
            source: "echo ok\rrm -rf ~\n\tzero\u{200B}width\u{FEFF}\r\n".to_owned(),
            parameters: json!({"type": "object"}),
            scope: toolgate_store::DynamicToolScope::Agent,
            created_by: "agent\u{9B}31m".to_owned(),
            session_id: None,
            advice: json!([{"category": "c", "reason": "r\u{2066}", "matched": "m\n", "line": 1}]),
            status: DynamicToolStatus::Pending,
            created: 0,
            updated: 0,
        };
        let shown = render_pending(std::slice::from_ref(&record), false);
        #[rustfmt::skip]
        let lines: &[&str] = &[
            "#7 ok\\x1b[2K (script sh\\r, scope agent, by agent\\u{9B}31m, 1970-01-01T00:00:00Z)",
            "  two\\nlines\\u{202E}txt",
            "    | echo ok\\rrm -rf ~",
            "    | \tzero\\u{200B}width\\u{FEFF}",
            "    - line 1: c: r\\u{2066} (`m\\n`)",
        ];
        for line in lines {
            assert!(shown.lines().any(|l| l == *line), "{line:?} in\n{shown}");
        }
        assert!(toolgate_core::is_neutral(&shown), "{shown}");
        assert_eq!(
            render_review(&record),
            "dynamic tool #7 `ok\\x1b[2K` is pending review\n"
        );
    }
}
