//! Watching a streamed reply as it arrives: one that starts repeating
//! itself, or runs past its token cap, is cut off.
//!
//! # Rules
//!
//! 1. Text repeats when its last lines are one block of 1 to
//!    [`MAX_BLOCK_LINES`] lines written [`REPEATS`] times in a row, and the
//!    block holds at least [`MIN_BLOCK_CHARS`] characters besides
//!    whitespace (a run of short lines such as `}` or blank lines is not a
//!    loop). The reply keeps the text up to the end of the block's first
//!    copy. A line ends at a newline, or at a newline written as a JSON
//!    escape (`\n`): a reply held to a JSON schema writes a file's lines
//!    inside one string, and a loop there is the same loop.
//! 2. Tool calls repeat when one call (same tool, same arguments) is
//!    complete [`REPEATS`] times in the reply.
//! 3. A reply whose text and call arguments pass `cap` tokens, estimated at
//!    4 bytes a token (fewer tokens than most servers count, so the
//!    server's own `max_tokens` stops it first when it honours it), is cut.

use std::collections::VecDeque;

/// How many copies in a row make a repeat.
pub(crate) const REPEATS: usize = 4;

/// The longest block of lines that is watched for repeats.
pub(crate) const MAX_BLOCK_LINES: usize = 16;

/// The fewest characters besides whitespace a repeated block holds.
pub(crate) const MIN_BLOCK_CHARS: usize = 40;

/// Watches one streamed reply (see the [rules](self)).
#[derive(Debug)]
pub(crate) struct StreamWatch {
    /// The last complete lines: (byte offset of their end in the reply's
    /// text, the line).
    lines: VecDeque<(usize, String)>,
    /// Where the line being written starts.
    line_start: usize,
    /// Tokens the reply may take; `None`: no cap.
    cap: Option<u32>,
}

impl StreamWatch {
    /// A watch with a cap of `cap` tokens.
    pub(crate) fn new(cap: Option<u32>) -> Self {
        Self {
            lines: VecDeque::new(),
            line_start: 0,
            cap,
        }
    }

    /// Looks at `text`, the reply's text so far; when its tail repeats
    /// (rule 1), the length to cut it to and why.
    pub(crate) fn text(&mut self, text: &str) -> Option<(usize, String)> {
        let mut found = None;
        while let Some((end, width)) = text.get(self.line_start..).and_then(line_end) {
            let end = self.line_start + end;
            let line = text[self.line_start..end].trim_end().to_owned();
            self.line_start = end + width;
            self.lines.push_back((end + width, line));
            if self.lines.len() > MAX_BLOCK_LINES * REPEATS {
                self.lines.pop_front();
            }
            if found.is_none() {
                found = self.repeating();
            }
        }
        found
    }

    /// Rule 1 on the lines so far.
    fn repeating(&self) -> Option<(usize, String)> {
        let n = self.lines.len();
        for block in 1..=MAX_BLOCK_LINES {
            if n < block * REPEATS {
                break;
            }
            let line = |i: usize| &self.lines[i].1;
            let chars: usize = (n - block..n)
                .map(|i| line(i).chars().filter(|c| !c.is_whitespace()).count())
                .sum();
            if chars < MIN_BLOCK_CHARS {
                continue;
            }
            let same = (1..REPEATS)
                .all(|copy| (0..block).all(|k| line(n - 1 - k) == line(n - 1 - k - copy * block)));
            if same {
                let first_end = self.lines[n - 1 - (REPEATS - 1) * block].0;
                let first = (n - block..n)
                    .map(line)
                    .find(|l| !l.trim().is_empty())
                    .map_or_else(String::new, |l| l.trim().chars().take(80).collect());
                return Some((
                    first_end,
                    format!(
                        "it repeated the same {block}-line block {REPEATS} times in a row \
                         (`{first}`)"
                    ),
                ));
            }
        }
        None
    }

    /// Rule 3: whether `bytes` bytes of text and arguments pass the cap.
    pub(crate) fn over_cap(&self, bytes: usize) -> Option<String> {
        let cap = self.cap?;
        let tokens = bytes / 4;
        (tokens > cap as usize).then(|| {
            format!("it passed the cap of {cap} tokens for one reply (about {tokens} tokens)")
        })
    }
}

/// Where the first line of `text` ends (rule 1): its offset and the width
/// of the line end, a newline (1) or a newline written as a JSON string
/// escape (2: a backslash not itself escaped, then `n`).
fn line_end(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut backslashes = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' => return Some((i, 1)),
            b'n' if backslashes % 2 == 1 => return Some((i - 1, 2)),
            b'\\' => {
                backslashes += 1;
                continue;
            }
            _ => {}
        }
        backslashes = 0;
    }
    None
}

/// Rule 2 on the calls so far, as (name, arguments); `complete`: how
/// many of them are finished (the last may still be arriving).
pub(crate) fn repeated_call<'a>(
    calls: impl Iterator<Item = (&'a str, &'a str)>,
    complete: usize,
) -> Option<String> {
    let done: Vec<(&str, &str)> = calls.take(complete).collect();
    for (i, call) in done.iter().enumerate() {
        let copies = done[i..].iter().filter(|c| *c == call).count();
        if copies >= REPEATS {
            return Some(format!(
                "it made the same call `{}` {REPEATS} times",
                call.0
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// The start of a reply held to a JSON schema.
    const JSON_START: &str = "{\"arguments\":{\"content\":\"";
    /// A function as a JSON string holds it: newlines escaped.
    const FUNCTION: &str =
        "def multiply(first, second):\\n    return first * second  # the product\\n";

    /// Feeds `text` in pieces of `step` bytes; where it was cut.
    fn feed(text: &str, step: usize) -> Option<(usize, String)> {
        let mut w = StreamWatch::new(None);
        let mut end = 0;
        while end < text.len() {
            end = (end + step).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            if let Some(cut) = w.text(&text[..end]) {
                return Some(cut);
            }
        }
        None
    }

    #[test]
    fn repeats_case_table() {
        let call = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}</tool_call>\n";
        let pair = format!(
            "{call}<tool_call>{{\"name\": \"search_code\", \"arguments\": {{\"pattern\": \"x\"}}}}</tool_call>\n\n"
        );
        let code = "fn main() {\n    let x = compute_something_long(1);\n}\n";
        // (text, cut where: None = not cut)
        let cases: Vec<(String, Option<usize>)> = vec![
            (call.repeat(3), None),
            (call.repeat(4), Some(call.len())),
            (
                format!("Let me look.\n{}", call.repeat(80)),
                Some(13 + call.len()),
            ),
            (pair.repeat(80), Some(pair.len())),
            // Short lines repeated are not a loop.
            ("}\n".repeat(50), None),
            ("\n".repeat(50), None),
            // Different lines each time.
            (
                (0..40).fold(String::new(), |mut s, i| {
                    let _ = writeln!(s, "line {i} of a long list of distinct things");
                    s
                }),
                None,
            ),
            // Code with a repeated line here and there.
            (code.repeat(3), None),
            // A reply held to a JSON schema: a file's lines inside one
            // string, its newlines escaped. The first line carries the
            // JSON's start, so the loop found is (return, def) from the
            // first copy's second line; the cut keeps one copy of it.
            (
                format!("{JSON_START}{}", FUNCTION.repeat(6)),
                Some(JSON_START.len() + FUNCTION.len() + FUNCTION.find("\\n").unwrap() + 2),
            ),
            // An escaped backslash before `n` is no line end.
            (
                format!(
                    "{{\"content\":\"{}\"}}",
                    "C:\\\\new folder and more text that is long enough to count\\\\n".repeat(8)
                ),
                None,
            ),
        ];
        for (text, expected) in cases {
            for step in [1, 7, 1000] {
                let got = feed(&text, step).map(|(at, _)| at);
                assert_eq!(got, expected, "{text:?} in pieces of {step}");
            }
        }
    }

    #[test]
    fn calls_and_cap() {
        let w = StreamWatch::new(Some(100));
        let a = ("read_file", "{\"path\":\"a\"}");
        let b = ("search_code", "{\"pattern\":\"a\"}");
        assert!(repeated_call([a, b, a, b, a].into_iter(), 5).is_none());
        assert!(repeated_call([a, b, a, b, a, a].into_iter(), 5).is_none());
        assert!(repeated_call([a, b, a, b, a, a].into_iter(), 6).is_some());
        assert!(w.over_cap(400).is_none());
        assert!(w.over_cap(404).is_some_and(|r| r.contains("100 tokens")));
        assert!(StreamWatch::new(None).over_cap(1 << 30).is_none());
    }
}
