//! The terminal approver: asks on stderr, reads the answer from stdin.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, Budget, Line, PlanAnswer, PlanRequest, Role, fold,
};
use toolgate_policy::ConfirmationMode;

/// Asks a person at a terminal: `[y]es / [n]o / [a]bort / [s]ession-allow`,
/// and `[v]iew all` when the question does not fit a screen.
///
/// The prompt goes to stderr, so stdout keeps carrying only data. Build it
/// with [`PromptApprover::terminal`], which refuses when stdin is not a TTY:
/// answers must come from a person, never from a pipe a model might fill.
///
/// # Rules
///
/// 1. The question is the gate's [`ApprovalView`](toolgate_engine::ApprovalView)
///    as lines ([`ApprovalView::lines`](toolgate_engine::ApprovalView::lines)):
///    the same words the web UI shows, neutralised, the diff coloured on a
///    colour terminal.
/// 2. A question longer than a screen is folded to its start and end with
///    the exact size of what is left out ([`fold`]); `v` prints it whole.
///    Until the person has seen it whole, `y` and `s` are refused: nobody
///    allows what they were not shown.
/// 3. Three answers that are not answers, the end of input or a broken
///    terminal deny the call.
pub(crate) struct PromptApprover<R, W> {
    io: Arc<Mutex<(R, W)>>,
    color: bool,
    before: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl PromptApprover<std::io::BufReader<std::io::Stdin>, std::io::Stderr> {
    /// The approver over this process's terminal, if stdin is one.
    pub(crate) fn terminal() -> Option<Self> {
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let mut approver = Self::new(std::io::BufReader::new(stdin), std::io::stderr());
        approver.color = crate::render::stderr_color();
        Some(approver)
    }
}

impl<R: BufRead + Send + 'static, W: Write + Send + 'static> PromptApprover<R, W> {
    pub(crate) fn new(input: R, output: W) -> Self {
        Self {
            io: Arc::new(Mutex::new((input, output))),
            color: false,
            before: None,
        }
    }

    /// Calls `clear` before each question: whatever else draws on the
    /// terminal (a spinner) must stop before the person reads it.
    #[must_use]
    pub(crate) fn before_asking(mut self, clear: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.before = Some(clear);
        self
    }
}

/// The style of a line of the question.
fn style(role: Role) -> anstyle::Style {
    use anstyle::{AnsiColor, Color, Style};
    let fg = |c: AnsiColor| Style::new().fg_color(Some(Color::Ansi(c)));
    match role {
        Role::Title | Role::DiffHeader | Role::Command => Style::new().bold(),
        Role::Added => fg(AnsiColor::Green),
        Role::Removed => fg(AnsiColor::Red),
        Role::Hunk => fg(AnsiColor::Cyan),
        Role::Warning => fg(AnsiColor::Yellow).bold(),
        Role::Omitted => fg(AnsiColor::Magenta).bold(),
        Role::Detail => Style::new().dimmed(),
        _ => Style::new(),
    }
}

/// `lines` as text for the terminal (the lines are clean already).
fn render(lines: &[Line], color: bool) -> String {
    let mut text = String::new();
    for line in lines {
        let shown = if line.role == Role::Title {
            format!("toolgate: {}", line.text)
        } else {
            line.text.clone()
        };
        text.push_str(&crate::render::paint(style(line.role), &shown, color));
        text.push('\n');
    }
    text
}

/// Reads one answer; `None` when the line is not one.
fn parse_answer(line: &str) -> Option<Answer> {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Answer::Approval(Approval::Allow)),
        "n" | "no" => Some(Answer::Approval(Approval::Deny)),
        "a" | "abort" => Some(Answer::Approval(Approval::Abort)),
        "s" | "session" => Some(Answer::Approval(Approval::AllowForSession)),
        "v" | "view" => Some(Answer::View),
        _ => None,
    }
}

enum Answer {
    Approval(Approval),
    View,
}

fn ask<R: BufRead, W: Write>(
    input: &mut R,
    output: &mut W,
    lines: &[Line],
    color: bool,
) -> Approval {
    let folded = fold(lines, Budget::default());
    let mut seen_all = folded.hidden.is_none();
    let _ = write!(output, "\n{}", render(&folded.lines, color));
    if let Some(hidden) = folded.hidden {
        let note = format!("  ({hidden}: press v to see everything before you answer)");
        let _ = writeln!(
            output,
            "{}",
            crate::render::paint(style(Role::Omitted), &note, color)
        );
    }
    let mut wrong = 0;
    while wrong < 3 {
        let choices = if seen_all {
            "  [y]es / [n]o / [a]bort / [s]ession-allow: "
        } else {
            "  [v]iew all / [n]o / [a]bort (see everything before allowing): "
        };
        let _ = write!(output, "{choices}");
        let _ = output.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            // End of input or a broken terminal: nobody is there to say yes.
            Ok(0) | Err(_) => {
                let _ = writeln!(output);
                return Approval::Deny;
            }
            Ok(_) => {}
        }
        match parse_answer(&line) {
            Some(Answer::View) => {
                let _ = write!(output, "{}", render(lines, color));
                seen_all = true;
            }
            Some(Answer::Approval(Approval::Allow | Approval::AllowForSession)) if !seen_all => {
                let _ = writeln!(
                    output,
                    "  you have not seen all of what this call would do: press v first, or n"
                );
            }
            Some(Answer::Approval(answer)) => return answer,
            None => {
                wrong += 1;
                let _ = writeln!(output, "  please answer y, n, a, s or v");
            }
        }
    }
    Approval::Deny
}

/// Shows a model's plan and asks how the run goes on: `1`, `2`, … (or the
/// mode's name) for the request's modes, `k` to keep it planning, then a
/// line of feedback for the model. The plan is printed whole, as text (it
/// is neutralised already): it runs nothing itself, every call after it
/// still goes through the gate. Three answers that are not answers, the
/// end of input or a broken terminal keep the run planning.
fn ask_plan<R: BufRead, W: Write>(
    input: &mut R,
    output: &mut W,
    plan: &str,
    choices: &[ConfirmationMode],
    color: bool,
) -> PlanAnswer {
    let title = crate::render::paint(
        style(Role::Title),
        "toolgate: the model proposes this plan and asks to leave plan mode",
        color,
    );
    let _ = writeln!(output, "\n{title}\n");
    for line in plan.lines() {
        let _ = writeln!(output, "  {line}");
    }
    let _ = writeln!(output);
    let numbered: Vec<String> = choices
        .iter()
        .enumerate()
        .map(|(n, mode)| format!("[{}] {mode}", n + 1))
        .collect();
    let menu = format!(
        "  approve and go on in mode: {} / [k]eep planning: ",
        numbered.join(" ")
    );
    let mut wrong = 0;
    while wrong < 3 {
        let _ = write!(output, "{menu}");
        let _ = output.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => {
                let _ = writeln!(output);
                return PlanAnswer::KeepPlanning(String::new());
            }
            Ok(_) => {}
        }
        let answer = line.trim().to_ascii_lowercase();
        let chosen = answer
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|n| choices.get(n))
            .or_else(|| choices.iter().find(|m| m.as_str() == answer));
        if let Some(mode) = chosen {
            return PlanAnswer::Continue(*mode);
        }
        if answer == "k" || answer == "keep" {
            let _ = write!(
                output,
                "  what should the model change? (Enter for nothing): "
            );
            let _ = output.flush();
            let mut feedback = String::new();
            let _ = input.read_line(&mut feedback);
            return PlanAnswer::KeepPlanning(feedback.trim().to_owned());
        }
        wrong += 1;
        let _ = writeln!(
            output,
            "  please answer 1-{} (or the mode's name) or k",
            choices.len()
        );
    }
    PlanAnswer::KeepPlanning(String::new())
}

#[async_trait]
impl<R: BufRead + Send + 'static, W: Write + Send + 'static> Approver for PromptApprover<R, W> {
    fn kind(&self) -> &'static str {
        "terminal"
    }

    fn reviews_plans(&self) -> bool {
        true
    }

    async fn approve_plan(&self, request: &PlanRequest<'_>) -> PlanAnswer {
        if let Some(clear) = &self.before {
            clear();
        }
        let io = Arc::clone(&self.io);
        let color = self.color;
        let plan = request.plan.to_owned();
        let choices = request.choices.to_vec();
        let answer = tokio::task::spawn_blocking(move || {
            let mut guard = io.lock().unwrap_or_else(PoisonError::into_inner);
            let (input, output) = &mut *guard;
            ask_plan(input, output, &plan, &choices, color)
        })
        .await;
        answer.unwrap_or_else(|_| PlanAnswer::KeepPlanning(String::new()))
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let lines = request.view.lines();
        if let Some(clear) = &self.before {
            clear();
        }
        let io = Arc::clone(&self.io);
        let color = self.color;
        // Reading a terminal blocks: keep it off the async worker threads.
        let answer = tokio::task::spawn_blocking(move || {
            let mut guard = io.lock().unwrap_or_else(PoisonError::into_inner);
            let (input, output) = &mut *guard;
            ask(input, output, &lines, color)
        })
        .await;
        answer.unwrap_or(Approval::Deny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_core::{CommandClass, Effect, Effects, Sensitivity};
    use toolgate_engine::ApprovalView;

    fn short() -> Vec<Line> {
        let args = json!({"message": "hi"});
        ApprovalView::new(
            "echo",
            "1",
            &args,
            &Effects::none(),
            Sensitivity::Command(CommandClass::Dev),
        )
        .lines()
    }

    /// A command longer than the screen allows (its middle is folded).
    fn long() -> Vec<Line> {
        let command = format!("echo {}PAYLOAD-AT-THE-END", "x".repeat(5_000));
        let effects = Effects::known([Effect::command(command, None)]);
        ApprovalView::new(
            "run_command",
            "1",
            &json!({}),
            &effects,
            Sensitivity::Command(CommandClass::Dev),
        )
        .lines()
    }

    #[test]
    fn answers() {
        let cases: &[(&str, Approval)] = &[
            ("y\n", Approval::Allow),
            ("YES\n", Approval::Allow),
            ("n\n", Approval::Deny),
            ("a\n", Approval::Abort),
            ("s\n", Approval::AllowForSession),
            ("", Approval::Deny),
            ("what\nmaybe\ny\n", Approval::Allow),
            ("1\n2\n3\ny\n", Approval::Deny),
            // Viewing on a short question changes nothing.
            ("v\ny\n", Approval::Allow),
        ];
        for (typed, expected) in cases {
            let mut output = Vec::new();
            let answer = ask(&mut typed.as_bytes(), &mut output, &short(), false);
            assert_eq!(&answer, expected, "{typed:?}");
        }
    }

    #[test]
    fn a_folded_question_takes_no_yes_before_it_was_seen_whole() {
        let cases: &[(&str, Approval, bool)] = &[
            // y is refused, then the input ends: denied.
            ("y\n", Approval::Deny, false),
            ("s\n", Approval::Deny, false),
            ("y\ny\ny\ny\n", Approval::Deny, false),
            ("n\n", Approval::Deny, false),
            ("a\n", Approval::Abort, false),
            // Seen whole, then allowed.
            ("v\ny\n", Approval::Allow, true),
            ("y\nv\ns\n", Approval::AllowForSession, true),
        ];
        for (typed, expected, shown_whole) in cases {
            let mut output = Vec::new();
            let answer = ask(&mut typed.as_bytes(), &mut output, &long(), false);
            assert_eq!(&answer, expected, "{typed:?}");
            let text = String::from_utf8(output).unwrap();
            assert!(text.contains("not shown"), "{text}");
            assert_eq!(
                text.contains("PAYLOAD-AT-THE-END") && text.contains(&"x".repeat(5_000)),
                *shown_whole,
                "{typed:?}: {text}"
            );
        }
    }

    #[tokio::test]
    async fn prompt_names_the_tool_and_arguments_on_the_writer() {
        let output = SharedBuf::default();
        let approver = PromptApprover::new(&b"y\n"[..], output.clone());
        let args = json!({"message": "hi"});
        let effects = Effects::none();
        let view = ApprovalView::new(
            "echo",
            "1",
            &args,
            &effects,
            Sensitivity::Command(CommandClass::Dev),
        );
        let request = ApprovalRequest::new(
            &view,
            &args,
            &effects,
            Sensitivity::Command(CommandClass::Dev),
        );
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        let text = String::from_utf8(output.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains("toolgate: allow `echo`? command classified dev"),
            "{text}"
        );
        assert!(text.contains("\"message\": \"hi\""), "{text}");
        assert!(
            text.contains("[y]es / [n]o / [a]bort / [s]ession-allow"),
            "{text}"
        );
    }

    #[test]
    fn plan_answers() {
        use ConfirmationMode::{AcceptEdits, ConfirmSensitive, Yolo};
        let choices = [AcceptEdits, ConfirmSensitive, Yolo];
        let keep = |s: &str| PlanAnswer::KeepPlanning(s.to_owned());
        let cases: &[(&str, PlanAnswer)] = &[
            ("1\n", PlanAnswer::Continue(AcceptEdits)),
            ("2\n", PlanAnswer::Continue(ConfirmSensitive)),
            ("3\n", PlanAnswer::Continue(Yolo)),
            ("accept-edits\n", PlanAnswer::Continue(AcceptEdits)),
            ("k\nadd a test\n", keep("add a test")),
            ("keep\n\n", keep("")),
            ("", keep("")),
            ("4\nplan\ny\n", keep("")),
            ("0\n2\n", PlanAnswer::Continue(ConfirmSensitive)),
        ];
        for (typed, expected) in cases {
            let mut output = Vec::new();
            let answer = ask_plan(
                &mut typed.as_bytes(),
                &mut output,
                "1. a\n2. b",
                &choices,
                false,
            );
            assert_eq!(&answer, expected, "{typed:?}");
            let text = String::from_utf8(output).unwrap();
            assert!(text.contains("  1. a\n  2. b\n"), "{text}");
            assert!(
                text.contains("[1] accept-edits [2] confirm-sensitive [3] yolo / [k]eep planning"),
                "{text}"
            );
        }
    }

    #[derive(Clone, Default)]
    struct SharedBuf(Arc<Mutex<Vec<u8>>>);

    impl Write for SharedBuf {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
