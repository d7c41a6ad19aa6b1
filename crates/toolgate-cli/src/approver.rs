//! The terminal approver: asks on stderr, reads the answer from stdin.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use toolgate_engine::{Approval, ApprovalRequest, Approver};

/// Asks a person at a terminal: `[y]es / [n]o / [a]bort / [s]ession-allow`.
///
/// The prompt goes to stderr, so stdout keeps carrying only data. Build it
/// with [`PromptApprover::terminal`], which refuses when stdin is not a TTY:
/// answers must come from a person, never from a pipe a model might fill.
pub(crate) struct PromptApprover<R, W> {
    io: Arc<Mutex<(R, W)>>,
}

impl PromptApprover<std::io::BufReader<std::io::Stdin>, std::io::Stderr> {
    /// The approver over this process's terminal, if stdin is one.
    pub(crate) fn terminal() -> Option<Self> {
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        Some(Self::new(std::io::BufReader::new(stdin), std::io::stderr()))
    }
}

impl<R: BufRead + Send + 'static, W: Write + Send + 'static> PromptApprover<R, W> {
    pub(crate) fn new(input: R, output: W) -> Self {
        Self {
            io: Arc::new(Mutex::new((input, output))),
        }
    }
}

/// The question, on as many lines as it needs.
fn question(request: &ApprovalRequest<'_>) -> String {
    const MAX: usize = 2000;
    let (tool, args, why) = (request.tool, request.args, request.reason());
    let mut args = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
    if args.len() > MAX {
        let mut end = MAX;
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        args.truncate(end);
        args.push_str("\n… (truncated)");
    }
    let args = args
        .lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n");
    format!("\ntoolgate: run `{tool}`? ({why})\n{args}\n")
}

/// Reads one answer; `None` at end of input.
fn parse_answer(line: &str) -> Option<Approval> {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Approval::Allow),
        "n" | "no" => Some(Approval::Deny),
        "a" | "abort" => Some(Approval::Abort),
        "s" | "session" => Some(Approval::AllowForSession),
        _ => None,
    }
}

fn ask<R: BufRead, W: Write>(input: &mut R, output: &mut W, text: &str) -> Approval {
    let _ = write!(output, "{text}");
    for _ in 0..3 {
        let _ = write!(output, "  [y]es / [n]o / [a]bort / [s]ession-allow: ");
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
        if let Some(answer) = parse_answer(&line) {
            return answer;
        }
        let _ = writeln!(output, "  please answer y, n, a or s");
    }
    Approval::Deny
}

#[async_trait]
impl<R: BufRead + Send + 'static, W: Write + Send + 'static> Approver for PromptApprover<R, W> {
    fn kind(&self) -> &'static str {
        "terminal"
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let text = question(request);
        let io = Arc::clone(&self.io);
        // Reading a terminal blocks: keep it off the async worker threads.
        let answer = tokio::task::spawn_blocking(move || {
            let mut guard = io.lock().unwrap_or_else(PoisonError::into_inner);
            let (input, output) = &mut *guard;
            ask(input, output, &text)
        })
        .await;
        answer.unwrap_or(Approval::Deny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_core::{CommandClass, Sensitivity};

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
        ];
        for (typed, expected) in cases {
            let mut output = Vec::new();
            let answer = ask(&mut typed.as_bytes(), &mut output, "q\n");
            assert_eq!(&answer, expected, "{typed:?}");
        }
    }

    #[tokio::test]
    async fn prompt_names_the_tool_and_arguments_on_the_writer() {
        let output = SharedBuf::default();
        let approver = PromptApprover::new(&b"y\n"[..], output.clone());
        let args = json!({"message": "hi"});
        let request = ApprovalRequest {
            tool: "echo",
            args: &args,
            effects: &toolgate_core::Effects::none(),
            sensitivity: Sensitivity::Command(CommandClass::Dev),
            call_id: "1",
            rule: None,
        };
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        let text = String::from_utf8(output.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains("run `echo`? (command classified dev)"),
            "{text}"
        );
        assert!(text.contains("\"message\": \"hi\""), "{text}");
        assert!(
            text.contains("[y]es / [n]o / [a]bort / [s]ession-allow"),
            "{text}"
        );
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
