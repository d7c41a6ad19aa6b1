//! Text handling shared by the memory tools: comparing facts, cutting
//! documents into chunks, and reading the text of a session message.

use std::collections::HashSet;

use serde_json::Value;
use toolgate_store::MemoryChunk;
use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::is_combining_mark;

/// The longest chunk, in characters; longer paragraphs and messages are cut
/// at a word boundary into several chunks with the same position.
pub const MAX_CHUNK_CHARS: usize = 1000;

/// A fact reduced for comparison: lower case, accents and apostrophes
/// removed (`user's` is `users`), every run of other characters than
/// letters and digits a single space.
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        if matches!(c, '\'' | '\u{2019}' | '\u{02bc}') {
            continue;
        }
        if c.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

/// How alike two normalised facts are: the Jaccard index of their sets of
/// words (1.0 for the same words, 0.0 for none in common).
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let a: HashSet<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
    let b: HashSet<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    #[expect(clippy::cast_precision_loss, reason = "word counts are small")]
    let ratio = a.intersection(&b).count() as f64 / union as f64;
    ratio
}

/// A daily-log line's fact: the line without its list marker and its
/// `HH:MM` time.
pub(crate) fn fact_of_line(line: &str) -> &str {
    let line = strip_marker(line.trim());
    let bytes = line.as_bytes();
    let time = bytes.len() > 5
        && bytes[..2].iter().all(u8::is_ascii_digit)
        && bytes[2] == b':'
        && bytes[3..5].iter().all(u8::is_ascii_digit)
        && bytes[5] == b' ';
    if time { line[6..].trim_start() } else { line }
}

/// A line without its Markdown list marker (`- `, `* `, `+ `, `1. `) and
/// checkbox (`[ ] `, `[x] `).
fn strip_marker(line: &str) -> &str {
    let rest = if let Some(rest) = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
    {
        rest
    } else {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        match line[digits..].strip_prefix(". ") {
            Some(rest) if digits > 0 => rest,
            _ => return line,
        }
    };
    let rest = rest.trim_start();
    ["[ ] ", "[x] ", "[X] "]
        .iter()
        .find_map(|b| rest.strip_prefix(b))
        .unwrap_or(rest)
}

fn is_list_item(line: &str) -> bool {
    strip_marker(line) != line
}

/// Cuts a Markdown text into chunks for the memory index.
///
/// # Rules
///
/// 1. Every list item (`- `, `* `, `+ `, `1. `) is a chunk of its own
///    (a daily log's facts are list items), without its marker; so is every
///    heading, without its `#`s.
/// 2. Other consecutive non-blank lines form a paragraph: one chunk, its
///    lines joined by spaces.
/// 3. A chunk's position is its first line, counting from 1, so that
///    `memory_get` can show it in place.
/// 4. A chunk over [`MAX_CHUNK_CHARS`] is cut at word boundaries into
///    several chunks at the same position.
pub fn chunk_markdown(text: &str) -> Vec<MemoryChunk> {
    let mut chunks = Vec::new();
    let mut paragraph: Option<(u64, String)> = None;
    let flush = |paragraph: &mut Option<(u64, String)>, chunks: &mut Vec<MemoryChunk>| {
        if let Some((line, text)) = paragraph.take() {
            push_cut(chunks, line, &text);
        }
    };
    for (i, line) in text.lines().enumerate() {
        let number = i as u64 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            flush(&mut paragraph, &mut chunks);
        } else if trimmed.starts_with('#') {
            flush(&mut paragraph, &mut chunks);
            let heading = trimmed.trim_start_matches('#').trim();
            if !heading.is_empty() {
                push_cut(&mut chunks, number, heading);
            }
        } else if is_list_item(trimmed) {
            flush(&mut paragraph, &mut chunks);
            push_cut(&mut chunks, number, strip_marker(trimmed));
        } else if let Some((_, text)) = &mut paragraph {
            text.push(' ');
            text.push_str(trimmed);
        } else {
            paragraph = Some((number, trimmed.to_owned()));
        }
    }
    flush(&mut paragraph, &mut chunks);
    chunks
}

/// Adds `text` at `position`, cut into pieces of at most
/// [`MAX_CHUNK_CHARS`] characters at word boundaries.
pub(crate) fn push_cut(chunks: &mut Vec<MemoryChunk>, position: u64, text: &str) {
    let mut rest = text.trim();
    while !rest.is_empty() {
        let end = rest
            .char_indices()
            .nth(MAX_CHUNK_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        let cut = if end == rest.len() {
            end
        } else {
            // Back to the last space, unless the piece is one long word.
            rest[..end].rfind(char::is_whitespace).unwrap_or(end)
        };
        let cut = if cut == 0 { end } else { cut };
        chunks.push(MemoryChunk::new(position, rest[..cut].trim()));
        rest = rest[cut..].trim_start();
    }
}

/// The text of a session message worth remembering: what the user and the
/// assistant said. System prompts (the same in every session) and tool
/// results (file contents, command output) are left out.
pub(crate) fn message_text(message: &Value) -> Option<String> {
    let role = message.get("role").and_then(Value::as_str)?;
    if role != "user" && role != "assistant" {
        return None;
    }
    let text = match message.get("content")? {
        Value::String(text) => text.clone(),
        // Content parts (`[{"type": "text", "text": "…"}, …]`).
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn facts_normalise_for_comparison() {
        let cases: &[(&str, &str)] = &[
            ("The user's dog is Rocky.", "the users dog is rocky"),
            ("The user’s dog", "the users dog"),
            ("  Café   con LECHE!! ", "cafe con leche"),
            ("Ñandú — año 2024", "nandu ano 2024"),
            ("***", ""),
        ];
        for (text, expected) in cases {
            assert_eq!(normalize(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn similarity_of_word_sets() {
        let cases: &[(&str, &str, f64)] = &[
            ("the dog is rocky", "the dog is rocky", 1.0),
            ("the dog is rocky", "rocky is the dog", 1.0),
            ("user likes tea", "user likes coffee", 0.5),
            ("a b c d", "e f g h", 0.0),
        ];
        for (a, b, expected) in cases {
            assert!((similarity(a, b) - expected).abs() < 1e-9, "{a:?} {b:?}");
        }
    }

    #[test]
    fn facts_of_log_lines() {
        let cases: &[(&str, &str)] = &[
            ("- 14:32 The dog is Rocky.", "The dog is Rocky."),
            ("- The dog is Rocky.", "The dog is Rocky."),
            ("* 09:05   spaced", "spaced"),
            ("- 1:30 not a time", "1:30 not a time"),
            ("plain line", "plain line"),
        ];
        for (line, expected) in cases {
            assert_eq!(fact_of_line(line), *expected, "{line:?}");
        }
    }

    #[test]
    fn markdown_chunks() {
        let text = "# 2025-01-15\n\n- 14:32 The dog is Rocky.\n- [ ] a goal\n\nA paragraph\nover two lines.\n\n1. first\n## Heading\n";
        let chunks: Vec<(u64, String)> = chunk_markdown(text)
            .into_iter()
            .map(|c| (c.position, c.text))
            .collect();
        let expected: &[(u64, &str)] = &[
            (1, "2025-01-15"),
            (3, "14:32 The dog is Rocky."),
            (4, "a goal"),
            (6, "A paragraph over two lines."),
            (9, "first"),
            (10, "Heading"),
        ];
        let expected: Vec<(u64, String)> = expected
            .iter()
            .map(|(p, t)| (*p, (*t).to_owned()))
            .collect();
        assert_eq!(chunks, expected);
    }

    #[test]
    fn long_text_is_cut_at_words() {
        let text = "word ".repeat(450);
        let mut chunks = Vec::new();
        push_cut(&mut chunks, 7, &text);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.position == 7
            && c.text.chars().count() <= MAX_CHUNK_CHARS
            && c.text.split(' ').all(|w| w == "word")));
        let one_word = "x".repeat(2500);
        chunks.clear();
        push_cut(&mut chunks, 1, &one_word);
        assert_eq!(
            chunks.iter().map(|c| c.text.len()).collect::<Vec<_>>(),
            [1000, 1000, 500]
        );
    }

    #[test]
    fn message_texts() {
        let cases: &[(Value, Option<&str>)] = &[
            (
                json!({"role": "user", "content": "my dog is Rocky"}),
                Some("my dog is Rocky"),
            ),
            (
                json!({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}),
                Some("Noted."),
            ),
            (
                json!({"role": "system", "content": "You are an agent"}),
                None,
            ),
            (json!({"role": "tool", "content": "file contents"}), None),
            (
                json!({"role": "assistant", "content": null, "tool_calls": []}),
                None,
            ),
            (json!({"role": "assistant", "content": "  "}), None),
        ];
        for (message, expected) in cases {
            assert_eq!(message_text(message).as_deref(), *expected, "{message}");
        }
    }
}
