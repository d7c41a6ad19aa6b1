//! `toolgate rewind [SESSION] [--to-step N] [--code|--conversation|--both]
//! [--force] [--undo]` and `toolgate checkpoints [SESSION]`.

use std::fmt::Write as _;

use toolgate_core::{ChangeKind, FileState, PathChange};
use toolgate_host::{RewindOptions, RewindOutcome};

use crate::Setup;
use crate::cli::{CheckpointsArgs, RewindArgs};
use crate::render::{self, CliError, Exit};

/// `toolgate checkpoints [SESSION]`: each step with the files it changed.
pub(crate) async fn checkpoints(setup: &Setup, args: &CheckpointsArgs) -> Result<Exit, CliError> {
    let session = setup
        .host
        .session_or_latest(args.session.as_deref())
        .await?;
    let list = setup.host.checkpoints(&session).await?;
    if setup.json {
        let v = serde_json::json!({ "session": session, "checkpoints": list });
        return crate::out(&crate::json_text(&v)?);
    }
    if list.is_empty() {
        render::note(&format!("session {session} has no checkpoints"));
        return Ok(Exit::Success);
    }
    let mut text = format!("session {session}\n");
    for c in &list {
        let mut head = format!("step {} (run {}, step {})", c.step, c.run, c.run_step);
        if let Some(id) = c.rewound_by {
            let _ = write!(head, " · rewound (rewind {id})");
        }
        if c.changes.is_empty() {
            let _ = writeln!(text, "{head}: no files changed");
        } else {
            let _ = writeln!(text, "{head}:");
            for change in &c.changes {
                let _ = writeln!(text, "  {}", change_line(change));
            }
        }
        if let Some(why) = &c.incomplete {
            let _ = writeln!(text, "  ! cannot be fully undone: {why}");
        }
    }
    crate::show(&text)
}

/// `toolgate rewind …`.
pub(crate) async fn rewind(setup: &Setup, args: &RewindArgs) -> Result<Exit, CliError> {
    let session = setup
        .host
        .session_or_latest(args.session.as_deref())
        .await?;
    let force = args.force && !args.no_force;
    let outcome = if args.undo && !args.no_undo {
        setup.host.undo_rewind(&session, force).await?
    } else {
        let options = RewindOptions {
            to_step: args.to_step,
            code: !args.conversation,
            conversation: args.conversation || args.both,
            force,
        };
        setup.host.rewind(&session, options).await?
    };
    let undo = args.undo && !args.no_undo;
    if setup.json {
        crate::out(&crate::json_text(&outcome)?)?;
    } else {
        crate::show(&describe(&outcome, undo))?;
    }
    if outcome.conflicts.is_empty() {
        return Ok(Exit::Success);
    }
    render::warning(
        &format!(
            "{} file(s) changed since by someone else were left as they are",
            outcome.conflicts.len()
        ),
        Some("look at them, then run the same command with --force to put them back too"),
    );
    Ok(Exit::Failure)
}

fn describe(o: &RewindOutcome, undo: bool) -> String {
    let mut text = if undo {
        format!("undid rewind {} of session {}\n", o.rewind_id, o.session_id)
    } else {
        format!(
            "rewound session {} to before step {} (rewind {}; undo with `toolgate rewind {} --undo`)\n",
            o.session_id, o.to_step, o.rewind_id, o.session_id
        )
    };
    if o.restored.is_empty() {
        text.push_str("no files needed putting back\n");
    }
    for c in &o.restored {
        let _ = writeln!(text, "  {}", change_line(c));
    }
    for c in &o.conflicts {
        let _ = writeln!(
            text,
            "  conflict {}: changed since ({}), left as it is",
            c.path,
            state_word(&c.found)
        );
    }
    for path in &o.lost {
        let _ = writeln!(
            text,
            "  lost {path}: its earlier content was too large to keep"
        );
    }
    if o.messages > 0 {
        let verb = if undo { "put back" } else { "removed" };
        let _ = writeln!(text, "  conversation: {} message(s) {verb}", o.messages);
    }
    text
}

/// `created a.txt`, `modified b (mode 644 → 755)`, `deleted d/`.
fn change_line(c: &PathChange) -> String {
    let dir = if c.before.is_dir() || c.after.is_dir() {
        "/"
    } else {
        ""
    };
    let mut line = format!("{:<8} {}{dir}", c.kind().as_str(), c.path);
    if c.kind() == ChangeKind::Modified {
        let (b, a) = (mode(&c.before), mode(&c.after));
        if b != a
            && let (Some(b), Some(a)) = (b, a)
        {
            let _ = write!(line, " (mode {b:o} → {a:o})");
        }
    }
    line
}

fn mode(s: &FileState) -> Option<u32> {
    match s {
        FileState::File { mode, .. } | FileState::Dir { mode } => Some(*mode),
        _ => None,
    }
}

fn state_word(s: &FileState) -> &'static str {
    match s {
        FileState::Absent => "now absent",
        FileState::File { .. } => "other content",
        FileState::Symlink { .. } => "now a symlink",
        FileState::Dir { .. } => "now a directory",
    }
}
