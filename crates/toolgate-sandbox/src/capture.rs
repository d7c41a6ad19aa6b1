//! Keeping a process's output within bounds: the first and last lines of a
//! long stream ([`HeadTail`]), or its first bytes ([`Capped`]).

use std::collections::VecDeque;
use std::fmt::Write as _;

/// The longest line kept, in bytes; longer lines are cut with a marker.
const MAX_LINE: usize = 2000;

/// Keeps the first `head` and the last `tail` lines of a stream, with
/// bounded memory however much is written.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_max: usize,
    tail_max: usize,
    head: Vec<String>,
    tail: VecDeque<String>,
    partial: Vec<u8>,
    lines: usize,
    bytes: usize,
}

impl HeadTail {
    pub(crate) fn new(max_lines: usize) -> Self {
        let head_max = max_lines.div_ceil(2).max(1);
        Self {
            head_max,
            tail_max: max_lines.saturating_sub(head_max).max(1),
            head: Vec::new(),
            tail: VecDeque::new(),
            partial: Vec::new(),
            lines: 0,
            bytes: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len();
        for &byte in chunk {
            if byte == b'\n' {
                self.finish_line();
            } else if self.partial.len() < MAX_LINE + 4 {
                self.partial.push(byte);
            }
        }
    }

    fn finish_line(&mut self) {
        let mut line = String::from_utf8_lossy(&self.partial).into_owned();
        if self.partial.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push_str(" …[line cut]");
        }
        self.partial.clear();
        self.lines += 1;
        if self.head.len() < self.head_max {
            self.head.push(line);
        } else {
            if self.tail.len() == self.tail_max {
                self.tail.pop_front();
            }
            self.tail.push_back(line);
        }
    }

    /// The kept text, with a marker where lines were dropped, and how many
    /// were dropped.
    pub(crate) fn finish(mut self) -> (String, usize) {
        if !self.partial.is_empty() {
            self.finish_line();
        }
        let dropped = self.lines - self.head.len() - self.tail.len();
        let mut text = self.head.join("\n");
        if dropped > 0 {
            let _ = write!(
                text,
                "\n… [{dropped} lines cut: {} lines, {} bytes in all; showing the first {} and last {}]",
                self.lines,
                self.bytes,
                self.head.len(),
                self.tail.len()
            );
        }
        if !self.tail.is_empty() {
            text.push('\n');
            text.push_str(&Vec::from(self.tail).join("\n"));
        }
        (text, dropped)
    }
}

/// Keeps the first `cap` bytes of a stream and counts the rest.
#[derive(Debug)]
pub(crate) struct Capped {
    cap: usize,
    kept: Vec<u8>,
    dropped: usize,
}

impl Capped {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            kept: Vec::new(),
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        let take = room.min(chunk.len());
        self.kept
            .extend_from_slice(chunk.get(..take).unwrap_or_default());
        self.dropped += chunk.len() - take;
    }

    pub(crate) fn finish(self) -> (String, usize) {
        (
            String::from_utf8_lossy(&self.kept).into_owned(),
            self.dropped,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_are_kept_with_a_marker() {
        let mut kept = HeadTail::new(4);
        for i in 1..=10 {
            kept.push(format!("line {i}\n").as_bytes());
        }
        let (text, dropped) = kept.finish();
        assert_eq!(dropped, 6);
        assert_eq!(
            text,
            "line 1\nline 2\n… [6 lines cut: 10 lines, 71 bytes in all; showing the first 2 and last 2]\nline 9\nline 10"
        );
    }

    #[test]
    fn short_output_is_untouched_and_partial_lines_count() {
        let mut kept = HeadTail::new(10);
        kept.push(b"a\nb");
        kept.push(b"c");
        assert_eq!(kept.finish(), ("a\nbc".to_owned(), 0));
    }

    #[test]
    fn long_lines_are_cut_and_memory_stays_bounded() {
        let mut kept = HeadTail::new(2);
        kept.push(&vec![b'x'; 1_000_000]);
        kept.push(b"\n");
        for _ in 0..100_000 {
            kept.push(b"y\n");
        }
        assert!(kept.partial.capacity() < 10_000);
        let (text, dropped) = kept.finish();
        assert!(text.starts_with(&"x".repeat(MAX_LINE)));
        assert!(text.contains("…[line cut]"));
        assert_eq!(dropped, 99_999);
    }

    #[test]
    fn capped_keeps_the_first_bytes() {
        let mut kept = Capped::new(5);
        kept.push(b"abc");
        kept.push(b"defgh");
        assert_eq!(kept.finish(), ("abcde".to_owned(), 3));
    }
}
