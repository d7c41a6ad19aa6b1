//! Paged reads for `read_file`: numbered lines from an open file, streamed,
//! bounded in bytes.
//!
//! # Rules
//!
//! 1. The file is read through a small buffer, once, front to back: the
//!    lines before `offset` are skipped without being kept, the page is
//!    kept, and the rest is only counted (for `total_lines`). Memory stays
//!    at the buffer plus the page, whatever the file's size or the length
//!    of its lines.
//! 2. One page holds at most `limit` lines and at most `budget` bytes of
//!    output (line numbers, tabs and newlines included). A line that does
//!    not fit ends the page before it, and the closing note says where to
//!    continue; but the first line of a page is never left out: if it alone
//!    is over the budget, it is cut at the budget (on a character boundary,
//!    at least one character shown), and a note under it says how long the
//!    line is and which `offset` and `column` read on from the cut.
//! 3. `column` (1-based, in bytes) starts the page inside its first line,
//!    as the cut note asks; a position inside a multi-byte character moves
//!    on to the next character. A column past the end of the line is an
//!    error.
//! 4. A NUL byte in the first 8 KiB makes the file binary and refused, as
//!    for whole reads; a line shown that is not UTF-8 is refused, naming
//!    the line (lines skipped or only counted are not decoded).
//! 5. `\n` ends a line and a `\r` before it is dropped; a last line without
//!    `\n` is still a line. An empty file has no lines and `offset` 1 shows
//!    nothing; any other `offset` past the last line is an error.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read};

use super::{BINARY_SNIFF, human_size, is_binary};

/// The buffer a paged read streams through.
const BUFFER: usize = 64 * 1024;

/// One page to read.
pub(super) struct PageRequest<'a> {
    /// The file, for messages.
    pub(super) display: &'a str,
    /// First line, from 1.
    pub(super) offset: usize,
    /// First byte of the first line, from 1.
    pub(super) column: usize,
    /// Most lines.
    pub(super) limit: usize,
    /// Most bytes of output.
    pub(super) budget: usize,
}

/// A line cut short because it alone was over the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cut {
    /// The line's number.
    pub(super) line: usize,
    /// The column the next read starts at (1-based, bytes).
    pub(super) next_column: u64,
    /// The whole line's length in bytes, without its line ending.
    pub(super) line_bytes: u64,
}

/// What a paged read returned.
#[derive(Debug)]
pub(super) struct Page {
    /// The numbered lines, then a closing note if the file goes on.
    pub(super) text: String,
    /// The first and last line shown (`last < first` when none was).
    pub(super) first: usize,
    pub(super) last: usize,
    /// Lines in the whole file.
    pub(super) total: usize,
    /// The cut line, if the page ends inside one.
    pub(super) cut: Option<Cut>,
    /// Whether the byte budget, not `limit` or the end of the file, ended
    /// the page.
    pub(super) truncated: bool,
}

/// How reading a piece of a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// At a `\n`, consumed.
    Newline,
    /// At the end of the file.
    Eof,
    /// The caller's byte count was reached first; the line goes on.
    Full,
}

/// A file read line by line without ever holding a whole line.
struct Lines<R> {
    reader: R,
    /// The number of the line the reader is in.
    line: usize,
    /// Whether bytes of that line were consumed already.
    mid: bool,
}

impl<R: BufRead> Lines<R> {
    /// Moves through the current line, keeping up to `max` bytes in `keep`
    /// (when given) and counting all it passes, until its end or `max`
    /// bytes.
    fn advance(&mut self, max: u64, mut keep: Option<&mut Vec<u8>>) -> io::Result<(End, u64)> {
        let mut passed = 0u64;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if buf.is_empty() {
                return Ok((End::Eof, passed));
            }
            let room = usize::try_from(max - passed).unwrap_or(usize::MAX);
            let window = buf.get(..room.min(buf.len())).unwrap_or(buf);
            let newline = memchr::memchr(b'\n', window);
            let piece = newline.map_or(window, |at| window.get(..at).unwrap_or(window));
            if let Some(keep) = keep.as_deref_mut() {
                keep.extend_from_slice(piece);
            }
            passed += piece.len() as u64;
            if !piece.is_empty() {
                self.mid = true;
            }
            if let Some(at) = newline {
                self.reader.consume(at + 1);
                self.line += 1;
                self.mid = false;
                return Ok((End::Newline, passed));
            }
            let used = piece.len();
            self.reader.consume(used);
            if passed == max {
                return Ok((End::Full, passed));
            }
        }
    }

    /// Skips to the end of the current line; its remaining byte count.
    fn skip_line(&mut self) -> io::Result<(End, u64)> {
        self.advance(u64::MAX, None)
    }

    /// Skips UTF-8 continuation bytes at the reader's position (never a
    /// `\n`); how many.
    fn skip_continuation_bytes(&mut self) -> io::Result<u64> {
        let mut skipped = 0;
        loop {
            let buf = self.reader.fill_buf()?;
            let n = buf.iter().take_while(|b| (**b & 0xC0) == 0x80).count();
            if n == 0 {
                return Ok(skipped);
            }
            let at_end = n == buf.len();
            self.reader.consume(n);
            skipped += n as u64;
            if !at_end {
                return Ok(skipped);
            }
        }
    }

    /// Counts the lines from here to the end of the file; the total number
    /// of lines in the file.
    fn count_to_end(&mut self) -> io::Result<usize> {
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if buf.is_empty() {
                return Ok(if self.mid { self.line } else { self.line - 1 });
            }
            let newlines = memchr::memchr_iter(b'\n', buf).count();
            self.line += newlines;
            self.mid = buf.last() != Some(&b'\n');
            let used = buf.len();
            self.reader.consume(used);
        }
    }
}

/// Reads one page of `file`; see the [module docs](self).
pub(super) fn read_page(mut file: impl Read, request: &PageRequest<'_>) -> Result<Page, String> {
    let display = request.display;
    let io_error = |error: io::Error| format!("cannot read `{display}`: {error}");
    let mut head = Vec::with_capacity(BINARY_SNIFF);
    (&mut file)
        .take(BINARY_SNIFF as u64)
        .read_to_end(&mut head)
        .map_err(io_error)?;
    if is_binary(&head) {
        return Err(format!(
            "`{display}` is a binary file; this tool only works on UTF-8 text"
        ));
    }
    let mut lines = Lines {
        reader: BufReader::with_capacity(BUFFER, io::Cursor::new(head).chain(file)),
        line: 1,
        mid: false,
    };
    let offset = request.offset.max(1);
    let past_end =
        |total: usize| format!("`{display}` has {total} lines; offset {offset} is past the end");
    while lines.line < offset {
        if lines.skip_line().map_err(io_error)?.0 == End::Eof {
            let total = lines.count_to_end().map_err(io_error)?;
            return Err(past_end(total));
        }
    }
    let mut start_column = 1u64;
    if request.column > 1 {
        let want = request.column as u64 - 1;
        let (end, skipped) = lines.advance(want, None).map_err(io_error)?;
        if end != End::Full {
            let line_bytes = skipped;
            if end == End::Eof && line_bytes == 0 && !lines.mid {
                let total = lines.count_to_end().map_err(io_error)?;
                return Err(past_end(total));
            }
            return Err(format!(
                "line {offset} of `{display}` is {line_bytes} bytes long; column {} is past its end",
                request.column
            ));
        }
        start_column = request.column as u64 + lines.skip_continuation_bytes().map_err(io_error)?;
    }

    let mut text = String::new();
    let mut shown = 0usize;
    let mut cut = None;
    let mut truncated = false;
    let mut bytes = Vec::new();
    while shown < request.limit.max(1) {
        let number = lines.line;
        let at_start = !lines.mid;
        let prefix = format!("{number:>6}\t");
        let used = text.len() + prefix.len() + 1;
        let room = request.budget.saturating_sub(used);
        // The first line of a page always shows something (rule 2); a
        // character is at most 4 bytes.
        let room = if shown == 0 { room.max(4) } else { room } as u64;
        bytes.clear();
        let (end, taken) = lines
            .advance(room.saturating_add(1), Some(&mut bytes))
            .map_err(io_error)?;
        if end == End::Eof && taken == 0 && at_start {
            break; // No such line: the file ended.
        }
        if end == End::Full {
            if shown > 0 {
                // Does not fit: the page ends before it.
                truncated = true;
                break;
            }
            // Alone over the budget: cut it (rule 2).
            bytes.truncate(usize::try_from(room).unwrap_or(usize::MAX));
            let line = cut_utf8(bytes, display, number)?;
            let kept = line.len() as u64;
            let (_, rest) = lines.skip_line().map_err(io_error)?;
            let next_column = start_column + kept;
            let line_bytes = next_column - 1 + (taken - kept) + rest;
            let _ = writeln!(text, "{prefix}{line}");
            let _ = writeln!(
                text,
                "… line {number} is {line_bytes} bytes long; this page shows bytes {start_column}–{} of it \
                 (the {} per-call limit); read on with offset={number} column={next_column}",
                next_column - 1,
                human_size(request.budget as u64),
            );
            cut = Some(Cut {
                line: number,
                next_column,
                line_bytes,
            });
            shown += 1;
            truncated = true;
            break;
        }
        if end == End::Newline && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let line =
            String::from_utf8(std::mem::take(&mut bytes)).map_err(|_| not_utf8(display, number))?;
        let _ = writeln!(text, "{prefix}{line}");
        shown += 1;
        start_column = 1;
        if end == End::Eof {
            break;
        }
    }
    let last = offset + shown - 1;
    let total = lines.count_to_end().map_err(io_error)?;
    if shown == 0 && offset > total.max(1) {
        return Err(past_end(total));
    }
    if cut.is_none() && last < total {
        let _ = write!(text, "… lines {offset}–{last} of {total}");
        if truncated {
            let _ = write!(
                text,
                " (the {} per-call limit)",
                human_size(request.budget as u64)
            );
        }
        let _ = write!(text, "; continue with offset={}", last + 1);
    }
    Ok(Page {
        text,
        first: offset,
        last,
        total,
        cut,
        truncated,
    })
}

/// Decodes the kept part of a cut line, dropping a character the cut split.
fn cut_utf8(mut bytes: Vec<u8>, display: &str, number: usize) -> Result<String, String> {
    match std::str::from_utf8(&bytes) {
        Ok(_) => {}
        // Only an incomplete character at the very end is the cut's doing.
        Err(error) if error.error_len().is_none() => bytes.truncate(error.valid_up_to()),
        Err(_) => return Err(not_utf8(display, number)),
    }
    String::from_utf8(bytes).map_err(|_| not_utf8(display, number))
}

fn not_utf8(display: &str, number: usize) -> String {
    format!("`{display}` is not valid UTF-8 (line {number}); this tool only works on UTF-8 text")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(content: &str, offset: usize, column: usize, limit: usize, budget: usize) -> Page {
        read_page(
            content.as_bytes(),
            &PageRequest {
                display: "f",
                offset,
                column,
                limit,
                budget,
            },
        )
        .unwrap()
    }

    #[test]
    fn totals_count_lines_like_str_lines() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("a", 1),
            ("a\n", 1),
            ("a\nb", 2),
            ("a\nb\n", 2),
            ("\n", 1),
            ("\n\n", 2),
            ("a\r\nb\r\n", 2),
        ];
        for (content, total) in cases {
            assert_eq!(content.lines().count(), *total, "{content:?}");
            assert_eq!(page(content, 1, 1, 1, 100).total, *total, "{content:?}");
        }
    }

    #[test]
    fn small_buffers_and_boundaries() {
        // A reader that hands out one byte at a time exercises every
        // buffer boundary.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                if out.is_empty() {
                    return Ok(0);
                }
                out[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        let content = "one\r\ntwo\nthree\n";
        let request = PageRequest {
            display: "f",
            offset: 2,
            column: 1,
            limit: 5,
            budget: 100,
        };
        let page = read_page(Trickle(content.as_bytes()), &request).unwrap();
        assert_eq!(page.text, "     2\ttwo\n     3\tthree\n");
        assert_eq!((page.first, page.last, page.total), (2, 3, 3));
    }

    #[test]
    fn cuts_on_character_boundaries() {
        // "é" is two bytes: a budget that ends inside one drops it.
        let line = "é".repeat(10);
        let got = page(&line, 1, 1, 1, 7 + 5 + 1);
        assert!(got.text.starts_with("     1\téé\n"), "{}", got.text);
        assert_eq!(
            got.cut,
            Some(Cut {
                line: 1,
                next_column: 5,
                line_bytes: 20
            })
        );
        // Reading on from column 5 starts at the third character; from 6
        // (inside it), at the fourth.
        assert!(
            page(&line, 1, 5, 1, 100)
                .text
                .starts_with("     1\téééééééé\n")
        );
        assert!(
            page(&line, 1, 6, 1, 100)
                .text
                .starts_with("     1\tééééééé\n")
        );
    }
}
