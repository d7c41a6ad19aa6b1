//! An [`ApprovalView`] as lines of text for people, and folding them to a
//! screen without hiding that something was left out.
//!
//! # Rules
//!
//! 1. [`ApprovalView::lines`] is the whole view: every byte of every command,
//!    diff, content and argument the view holds, each line tagged with a
//!    [`Role`] a front end may colour. Texts are neutralised
//!    ([`toolgate_core::neutralize_line`]): control characters, escape
//!    sequences, bidirectional and invisible characters are shown as
//!    visible escapes, never passed to a terminal.
//! 2. [`fold`] shortens the lines for a screen: the first and the last
//!    lines are kept, and a long line keeps its start and end; in between
//!    one [`Role::Omitted`] line says exactly how many lines and bytes are
//!    not shown. [`Folded::hidden`] tells a front end whether the person
//!    has seen everything; a front end must not take "allow" on a folded
//!    view before the person has seen the whole (the terminal's `v`, the
//!    web UI's expand).

use toolgate_core::neutralize_line;

use super::view::{Action, ApprovalView, bytes, count_grouped};

/// What a line of an approval is, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// The question: the tool and why it asks.
    Title,
    /// What one action does, in words.
    Summary,
    /// A command line as it will run.
    Command,
    /// A detail: class, programs, variables, origin.
    Detail,
    /// A warning the person should not miss (effects unknown).
    Warning,
    /// A diff's file header (`--- a/…`, `+++ b/…`).
    DiffHeader,
    /// A diff's hunk header (`@@ … @@`).
    Hunk,
    /// A line the call adds.
    Added,
    /// A line the call removes.
    Removed,
    /// A line of context, content or arguments.
    Text,
    /// Where [`fold`] left something out, and how much.
    Omitted,
}

impl Role {
    /// The role's name in JSON (`title`, `added`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Title => "title",
            Self::Summary => "summary",
            Self::Command => "command",
            Self::Detail => "detail",
            Self::Warning => "warning",
            Self::DiffHeader => "diff_header",
            Self::Hunk => "hunk",
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Text => "text",
            Self::Omitted => "omitted",
        }
    }
}

/// One line of an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// What the line is.
    pub role: Role,
    /// Its text, neutralised.
    pub text: String,
}

impl Line {
    fn new(role: Role, text: impl AsRef<str>) -> Self {
        Self {
            role,
            text: neutralize_line(text.as_ref()).into_owned(),
        }
    }
}

/// Lines after [`fold`], and what they leave out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    /// The lines to show.
    pub lines: Vec<Line>,
    /// What is not shown: `None` when every line is shown whole.
    pub hidden: Option<Hidden>,
}

/// How much a folded view leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hidden {
    /// Whole lines left out.
    pub lines: usize,
    /// Bytes left out, in those lines and in shortened ones.
    pub bytes: usize,
}

impl std::fmt::Display for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lines == 0 {
            write!(f, "{} not shown", bytes(self.bytes))
        } else {
            write!(
                f,
                "{} ({}) not shown",
                count_grouped(self.lines, "line", "lines"),
                bytes(self.bytes)
            )
        }
    }
}

/// How much of a view fits a screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Lines shown at most (the rest are folded in the middle).
    pub lines: usize,
    /// Bytes of one line shown at most (a longer one keeps its start and
    /// end).
    pub line_bytes: usize,
}

impl Default for Budget {
    /// 60 lines of at most 600 bytes: a terminal page and a bit.
    fn default() -> Self {
        Self {
            lines: 60,
            line_bytes: 600,
        }
    }
}

impl ApprovalView {
    /// The whole view as lines (see the rules atop `approval/render.rs`).
    pub fn lines(&self) -> Vec<Line> {
        let mut out = vec![Line::new(
            Role::Title,
            format!("allow `{}`? {}", self.tool, self.reason),
        )];
        match &self.origin {
            toolgate_core::ToolOrigin::Mcp { server, tool } => out.push(Line::new(
                Role::Detail,
                format!("tool `{tool}` of the MCP server `{server}`"),
            )),
            toolgate_core::ToolOrigin::Dynamic => {
                out.push(Line::new(Role::Detail, "a tool written by a model"));
            }
            _ => {}
        }
        if self.opaque {
            out.push(Line::new(
                Role::Warning,
                "toolgate cannot tell what this call does: it may do anything its author lets it",
            ));
        }
        for action in &self.actions {
            action_lines(action, &mut out);
        }
        if let Some(arguments) = &self.arguments {
            out.push(Line::new(Role::Summary, "with the arguments"));
            text_lines(arguments, Role::Text, "  ", &mut out);
        }
        out
    }

    /// The whole view as plain text, one line each (for MCP elicitation
    /// messages and reports).
    pub fn text(&self) -> String {
        let mut text = String::new();
        for line in self.lines() {
            text.push_str(&line.text);
            text.push('\n');
        }
        text
    }
}

fn action_lines(action: &Action, out: &mut Vec<Line>) {
    match action {
        Action::Command {
            summary,
            command,
            env,
            class,
            class_reason,
            programs,
            ..
        } => {
            out.push(Line::new(Role::Summary, summary));
            text_lines(command, Role::Command, "  $ ", out);
            if let Some(class) = class {
                let detail = match class_reason {
                    Some(why) => format!("  class {}: {why}", class.as_str()),
                    None => format!("  class {}", class.as_str()),
                };
                out.push(Line::new(Role::Detail, detail));
            }
            if !programs.is_empty() {
                out.push(Line::new(
                    Role::Detail,
                    format!("  programs {}", programs.join(", ")),
                ));
            }
            for (name, value) in env {
                out.push(Line::new(Role::Detail, format!("  env {name}={value}")));
            }
        }
        Action::Write {
            summary,
            path,
            diff,
            content,
            ..
        } => {
            out.push(Line::new(Role::Summary, format!("write {path}: {summary}")));
            if let Some(diff) = diff {
                diff_lines(diff, out);
            } else if let Some(content) = content {
                out.push(Line::new(Role::Detail, "  the new content:"));
                text_lines(content, Role::Added, "  ", out);
            }
        }
        Action::Delete { summary, path, .. } => {
            out.push(Line::new(
                Role::Summary,
                format!("delete {path}: {summary}"),
            ));
        }
        Action::Move { summary, .. }
        | Action::Network { summary, .. }
        | Action::Read { summary, .. } => out.push(Line::new(Role::Summary, summary)),
    }
}

fn text_lines(text: &str, role: Role, prefix: &str, out: &mut Vec<Line>) {
    if text.is_empty() {
        out.push(Line::new(role, prefix.trim_end()));
        return;
    }
    for line in text.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        out.push(Line::new(role, format!("{prefix}{line}")));
    }
}

fn diff_lines(diff: &str, out: &mut Vec<Line>) {
    if diff.is_empty() {
        out.push(Line::new(Role::Detail, "  (no change to the text)"));
        return;
    }
    for line in diff.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let role = if line.starts_with("+++") || line.starts_with("---") {
            Role::DiffHeader
        } else if line.starts_with("@@") {
            Role::Hunk
        } else if line.starts_with('+') {
            Role::Added
        } else if line.starts_with('-') {
            Role::Removed
        } else {
            Role::Text
        };
        out.push(Line::new(role, format!("  {line}")));
    }
}

/// `lines` shortened to `budget` (see the rules atop `approval/render.rs`).
pub fn fold(lines: &[Line], budget: Budget) -> Folded {
    let line_bytes = budget.line_bytes.max(40);
    let mut hidden = Hidden { lines: 0, bytes: 0 };
    let budget_lines = budget.lines.max(4);
    let mut shown: Vec<Line> = Vec::new();
    if lines.len() <= budget_lines {
        shown.extend(lines.iter().map(|l| shorten(l, line_bytes, &mut hidden)));
    } else {
        // The title and the start of what runs, then the end.
        let head = budget_lines * 2 / 3;
        let tail = budget_lines - head - 1;
        let middle = &lines[head..lines.len() - tail];
        shown.extend(
            lines[..head]
                .iter()
                .map(|l| shorten(l, line_bytes, &mut hidden)),
        );
        hidden.lines += middle.len();
        hidden.bytes += middle.iter().map(|l| l.text.len() + 1).sum::<usize>();
        shown.push(Line {
            role: Role::Omitted,
            text: format!(
                "  … {} in the middle not shown …",
                count_grouped(middle.len(), "line", "lines")
            ),
        });
        shown.extend(
            lines[lines.len() - tail..]
                .iter()
                .map(|l| shorten(l, line_bytes, &mut hidden)),
        );
    }
    Folded {
        lines: shown,
        hidden: (hidden.bytes > 0 || hidden.lines > 0).then_some(hidden),
    }
}

/// `line` kept to `max` bytes, its start and end, with the size of what
/// is left out in between (added to `hidden`).
fn shorten(line: &Line, max: usize, hidden: &mut Hidden) -> Line {
    if line.text.len() <= max {
        return line.clone();
    }
    let keep = max / 2;
    let head_end = floor_boundary(&line.text, keep);
    let tail_start = ceil_boundary(&line.text, line.text.len() - keep);
    let left_out = tail_start - head_end;
    hidden.bytes += left_out;
    Line {
        role: line.role,
        text: format!(
            "{} … [{} not shown] … {}",
            &line.text[..head_end],
            bytes(left_out),
            &line.text[tail_start..]
        ),
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, width: usize) -> Vec<Line> {
        (0..n)
            .map(|i| Line::new(Role::Text, format!("{i:0>width$}")))
            .collect()
    }

    #[test]
    fn a_short_view_is_shown_whole() {
        let all = lines(10, 5);
        let folded = fold(&all, Budget::default());
        assert_eq!(folded.lines, all);
        assert_eq!(folded.hidden, None);
    }

    #[test]
    fn a_long_view_keeps_head_and_tail_and_counts_the_rest() {
        let all = lines(100, 3);
        let folded = fold(
            &all,
            Budget {
                lines: 10,
                line_bytes: 600,
            },
        );
        assert_eq!(folded.lines.len(), 10);
        assert_eq!(folded.lines[0].text, "000");
        assert_eq!(folded.lines[9].text, "099");
        let hidden = folded.hidden.unwrap();
        assert_eq!(hidden.lines, 91);
        assert_eq!(hidden.bytes, 91 * 4);
        assert!(
            folded
                .lines
                .iter()
                .any(|l| l.role == Role::Omitted && l.text.contains("91 lines")),
            "{folded:?}"
        );
    }

    #[test]
    fn a_long_line_keeps_its_start_and_end_and_counts_the_middle() {
        let command = format!("echo start{}END", "x".repeat(20_000));
        let all = vec![Line::new(Role::Command, &command)];
        let folded = fold(&all, Budget::default());
        let shown = &folded.lines[0].text;
        assert!(shown.starts_with("echo start"), "{shown}");
        assert!(shown.ends_with("END"), "{shown}");
        let hidden = folded.hidden.unwrap();
        assert_eq!(hidden.lines, 0);
        assert_eq!(hidden.bytes, command.len() - 600);
        assert!(shown.contains(&format!("[{} not shown]", bytes(hidden.bytes))));
    }

    #[test]
    fn lines_are_neutralised() {
        let line = Line::new(Role::Text, "ok\u{1b}[8m\u{202E}x");
        assert!(toolgate_core::is_neutral(&line.text), "{:?}", line.text);
    }
}
