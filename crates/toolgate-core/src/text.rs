//! Untrusted text made safe to show on a person's terminal.
//!
//! Whatever a model, a tool, an MCP server, a skill or a workspace file
//! wrote can carry characters that a terminal obeys instead of showing:
//! escape sequences that move the cursor, recolour, conceal or write the
//! clipboard, a carriage return that overwrites the line, bidirectional
//! controls that reorder it, invisible characters that hide words. Every
//! front end shows such text through [`neutralize`] (several lines) or
//! [`neutralize_line`] (one line), which replace those characters with a
//! visible escape; the rules are on [`neutralize`].

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// `text` with every character a terminal would obey, or that hides or
/// reorders text, replaced by a visible escape; line breaks and tabs are
/// kept. Borrowed when there is nothing to replace.
///
/// # Rules
///
/// 1. C0 controls (U+0000–U+001F) other than `\n` and `\t`, and DEL
///    (U+007F), become `\xNN` with two lower-case hex digits (ESC is
///    `\x1b`), except `\r`, which becomes `\r`. ESC starts every terminal
///    escape sequence: `ESC[2K` erases the line, `ESC[8m` conceals what
///    follows, `ESC]52;c;…BEL` (OSC 52) writes the person's clipboard,
///    and others retitle the window or make links. A lone `\r` sends the
///    cursor back to the start of the line, so what follows overwrites
///    what the person was meant to read (`ok\rrm -rf ~`). BEL, backspace
///    and the rest are no text either.
/// 2. C1 controls (U+0080–U+009F) become `\u{…}` with upper-case hex
///    without leading zeros (`\u{9B}`): many terminals take U+009B as CSI,
///    the one-character form of `ESC[`, and U+009D as OSC.
/// 3. Bidirectional controls — U+061C, U+200E, U+200F, U+202A–U+202E and
///    U+2066–U+2069 — become `\u{…}` (`\u{202E}`): they show text in an
///    order other than the one it is read and run in, so a line can say
///    something else than it does ("Trojan Source", CVE-2021-42574).
/// 4. Invisible characters become `\u{…}`: the whole Unicode general
///    category Cf ("format": zero-width space, joiners, the word joiner,
///    the byte order mark, soft hyphen, the tag characters that can smuggle
///    a whole hidden ASCII text, …; it includes the bidirectional controls
///    of rule 3), the fillers that show as nothing (U+115F, U+1160,
///    U+3164, U+FFA0), the invisible marks U+034F, U+17B4 and U+17B5, the
///    line and paragraph separators U+2028 and U+2029 (some programs break
///    the line there, others do not), and the variation selectors
///    U+FE00–U+FE0D and U+E0100–U+E01EF. Hidden characters let two texts
///    that look the same differ, a name impersonate another, or a text
///    carry instructions nobody sees.
/// 5. Everything else is kept byte for byte: printable ASCII, letters of
///    every script, CJK, combining marks, private use characters and
///    emoji — with the emoji presentation selectors U+FE0E and U+FE0F,
///    which are part of ordinary emoji (❤️ is U+2764 U+FE0F).
///
/// The price of rule 4: emoji built with the zero-width joiner (👨‍👩‍👧) show
/// as their parts joined by `\u{200D}`, and subdivision flags built with
/// tag characters show their tags.
///
/// The escapes are for reading, not a reversible encoding: a backslash is
/// kept as it is, so a text that spells `\x1b` shows like one that held an
/// ESC. What matters is that nothing reaches the terminal unseen; where
/// text must come back exactly, use JSON.
///
/// # Example
///
/// ```
/// use toolgate_core::{is_neutral, neutralize, neutralize_line};
///
/// let output = "\x1b[2K\r\x1b[32m✓ tests passed\nsee\u{202E}txt.exe";
/// assert_eq!(
///     neutralize(output),
///     "\\x1b[2K\\r\\x1b[32m✓ tests passed\nsee\\u{202E}txt.exe"
/// );
/// assert!(is_neutral(&neutralize(output)));
/// assert_eq!(neutralize_line("two\nlines"), "two\\nlines");
/// // Nothing to replace: the text itself, not a copy.
/// assert!(matches!(neutralize("café ❤️ 日本"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn neutralize(text: &str) -> Cow<'_, str> {
    replace(text, Context::Text)
}

/// `text` neutralised for a one-line context (a tool name, a file name, a
/// label): as [`neutralize`], and `\n` and `\t` are escaped too, as `\n`
/// and `\t`, so the text cannot break the line or its alignment.
/// Borrowed when there is nothing to replace.
pub fn neutralize_line(text: &str) -> Cow<'_, str> {
    replace(text, Context::Line)
}

/// Whether [`neutralize`] would leave `text` as it is: it holds nothing
/// that rules 1–4 replace (line breaks and tabs are allowed).
pub fn is_neutral(text: &str) -> bool {
    text.chars().all(|c| escape(c, Context::Text).is_none())
}

/// Where the text will be shown.
#[derive(Clone, Copy)]
enum Context {
    /// Several lines: `\n` and `\t` are kept.
    Text,
    /// One line: `\n` and `\t` are escaped too.
    Line,
}

/// The visible form of one replaced character.
enum Escape {
    /// `\n`, `\t`, `\r`.
    Short(&'static str),
    /// `\xNN`, for C0 controls and DEL (rule 1).
    Hex(char),
    /// `\u{…}`, for the rest (rules 2–4).
    Unicode(char),
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Escape::Short(text) => f.write_str(text),
            Escape::Hex(c) => write!(f, "\\x{:02x}", u32::from(*c)),
            Escape::Unicode(c) => write!(f, "\\u{{{:X}}}", u32::from(*c)),
        }
    }
}

/// How `c` is shown in `context`: `None` when it is kept.
fn escape(c: char, context: Context) -> Option<Escape> {
    match c {
        ' '..='~' => None,
        '\n' | '\t' if matches!(context, Context::Text) => None,
        '\n' => Some(Escape::Short("\\n")),
        '\t' => Some(Escape::Short("\\t")),
        '\r' => Some(Escape::Short("\\r")),
        '\0'..='\x1f' | '\x7f' => Some(Escape::Hex(c)),
        '\u{80}'..='\u{9f}' => Some(Escape::Unicode(c)),
        _ if within(FORMAT, c) || within(INVISIBLE, c) => Some(Escape::Unicode(c)),
        _ => None,
    }
}

/// `text` with the characters `context` replaces escaped.
fn replace(text: &str, context: Context) -> Cow<'_, str> {
    let Some(start) = text
        .char_indices()
        .find_map(|(at, c)| escape(c, context).map(|_| at))
    else {
        return Cow::Borrowed(text);
    };
    let (kept, rest) = text.split_at(start);
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(kept);
    for c in rest.chars() {
        match escape(c, context) {
            // Writing to a `String` cannot fail.
            Some(shown) => {
                let _ = write!(out, "{shown}");
            }
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` lies in one of the sorted, disjoint `ranges`.
fn within(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(first, last)| {
            if last < c {
                std::cmp::Ordering::Less
            } else if first > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The general category Cf ("Other, format"), as of Unicode 16.0.0
/// (`extracted/DerivedGeneralCategory.txt`). A test checks it against the
/// `regex` crate's `\p{Cf}`, so a newer Unicode shows up as a failure.
const FORMAT: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),   // soft hyphen
    ('\u{0600}', '\u{0605}'),   // Arabic number signs
    ('\u{061C}', '\u{061C}'),   // Arabic letter mark (bidirectional)
    ('\u{06DD}', '\u{06DD}'),   // Arabic end of ayah
    ('\u{070F}', '\u{070F}'),   // Syriac abbreviation mark
    ('\u{0890}', '\u{0891}'),   // Arabic pound and piastre marks above
    ('\u{08E2}', '\u{08E2}'),   // Arabic disputed end of ayah
    ('\u{180E}', '\u{180E}'),   // Mongolian vowel separator
    ('\u{200B}', '\u{200F}'),   // zero-width space, non-joiner, joiner; LRM, RLM
    ('\u{202A}', '\u{202E}'),   // bidirectional embeddings and overrides
    ('\u{2060}', '\u{2064}'),   // word joiner, invisible operators
    ('\u{2066}', '\u{206F}'),   // bidirectional isolates; deprecated format characters
    ('\u{FEFF}', '\u{FEFF}'),   // zero-width no-break space (byte order mark)
    ('\u{FFF9}', '\u{FFFB}'),   // interlinear annotation
    ('\u{110BD}', '\u{110BD}'), // Kaithi number sign
    ('\u{110CD}', '\u{110CD}'), // Kaithi number sign above
    ('\u{13430}', '\u{1343F}'), // Egyptian hieroglyph format controls
    ('\u{1BCA0}', '\u{1BCA3}'), // shorthand format controls
    ('\u{1D173}', '\u{1D17A}'), // musical symbol format controls
    ('\u{E0001}', '\u{E0001}'), // language tag
    ('\u{E0020}', '\u{E007F}'), // tag characters
];

/// Characters outside Cf that show as nothing or break a line unseen
/// (rule 4).
const INVISIBLE: &[(char, char)] = &[
    ('\u{034F}', '\u{034F}'),   // combining grapheme joiner
    ('\u{115F}', '\u{1160}'),   // Hangul choseong and jungseong fillers
    ('\u{17B4}', '\u{17B5}'),   // Khmer inherent vowels
    ('\u{2028}', '\u{2029}'),   // line and paragraph separators
    ('\u{3164}', '\u{3164}'),   // Hangul filler
    ('\u{FE00}', '\u{FE0D}'),   // variation selectors 1–14 (not the emoji ones, 15 and 16)
    ('\u{FFA0}', '\u{FFA0}'),   // halfwidth Hangul filler
    ('\u{E0100}', '\u{E01EF}'), // variation selectors 17–256
];

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per case: the text, `neutralize`, `neutralize_line`.
    #[rustfmt::skip]
    const CASES: &[(&str, &str, &str)] = &[
        // Rule 5: kept.
        ("plain ASCII ~!@#$%^&*()", "plain ASCII ~!@#$%^&*()", "plain ASCII ~!@#$%^&*()"),
        ("café ñ Ångström", "café ñ Ångström", "café ñ Ångström"),
        ("日本語 한국어 العربية", "日本語 한국어 العربية", "日本語 한국어 العربية"),
        ("❤\u{FE0F} ❤\u{FE0E} 🎉", "❤\u{FE0F} ❤\u{FE0E} 🎉", "❤\u{FE0F} ❤\u{FE0E} 🎉"),
        ("e\u{301} combining", "e\u{301} combining", "e\u{301} combining"),
        ("private \u{E000}", "private \u{E000}", "private \u{E000}"),
        ("back\\slash \\x1b", "back\\slash \\x1b", "back\\slash \\x1b"),
        ("", "", ""),
        // Rule 1: C0 controls and DEL.
        ("line\nbreak", "line\nbreak", "line\\nbreak"),
        ("tab\there", "tab\there", "tab\\there"),
        ("ok\rrm -rf ~", "ok\\rrm -rf ~", "ok\\rrm -rf ~"),
        ("crlf\r\n", "crlf\\r\n", "crlf\\r\\n"),
        ("nul\0", "nul\\x00", "nul\\x00"),
        ("bell\x07", "bell\\x07", "bell\\x07"),
        ("back\x08space", "back\\x08space", "back\\x08space"),
        ("vt\x0b ff\x0c", "vt\\x0b ff\\x0c", "vt\\x0b ff\\x0c"),
        ("\x0e\x1a\x1f", "\\x0e\\x1a\\x1f", "\\x0e\\x1a\\x1f"),
        ("del\x7f", "del\\x7f", "del\\x7f"),
        ("\x1b[2K\r\x1b[32m✓", "\\x1b[2K\\r\\x1b[32m✓", "\\x1b[2K\\r\\x1b[32m✓"),
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07", "\\x1b]52;c;ZXZpbA==\\x07"),
        ("\x1b[8mhidden\x1b[0m", "\\x1b[8mhidden\\x1b[0m", "\\x1b[8mhidden\\x1b[0m"),
        // Rule 2: C1 controls.
        ("\u{9B}31m red", "\\u{9B}31m red", "\\u{9B}31m red"),
        ("\u{80}\u{85}\u{9D}\u{9F}", "\\u{80}\\u{85}\\u{9D}\\u{9F}", "\\u{80}\\u{85}\\u{9D}\\u{9F}"),
        // Rule 3: bidirectional controls.
        ("a\u{202E}txt.exe\u{202C}b", "a\\u{202E}txt.exe\\u{202C}b", "a\\u{202E}txt.exe\\u{202C}b"),
        ("\u{202A}\u{202B}\u{202D}", "\\u{202A}\\u{202B}\\u{202D}", "\\u{202A}\\u{202B}\\u{202D}"),
        ("\u{2066}\u{2067}\u{2068}\u{2069}", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}"),
        ("\u{200E}\u{200F}\u{61C}", "\\u{200E}\\u{200F}\\u{61C}", "\\u{200E}\\u{200F}\\u{61C}"),
        // Rule 4: invisible characters.
        ("zero\u{200B}width", "zero\\u{200B}width", "zero\\u{200B}width"),
        ("\u{200C}\u{200D}", "\\u{200C}\\u{200D}", "\\u{200C}\\u{200D}"),
        ("\u{FEFF}bom", "\\u{FEFF}bom", "\\u{FEFF}bom"),
        ("word\u{2060}joiner", "word\\u{2060}joiner", "word\\u{2060}joiner"),
        ("soft\u{AD}hyphen", "soft\\u{AD}hyphen", "soft\\u{AD}hyphen"),
        ("tag\u{E0001}\u{E0069}\u{E007F}", "tag\\u{E0001}\\u{E0069}\\u{E007F}", "tag\\u{E0001}\\u{E0069}\\u{E007F}"),
        ("vs\u{FE00}\u{FE0D}\u{E0100}\u{E01EF}", "vs\\u{FE00}\\u{FE0D}\\u{E0100}\\u{E01EF}", "vs\\u{FE00}\\u{FE0D}\\u{E0100}\\u{E01EF}"),
        ("\u{115F}\u{1160}\u{3164}\u{FFA0}", "\\u{115F}\\u{1160}\\u{3164}\\u{FFA0}", "\\u{115F}\\u{1160}\\u{3164}\\u{FFA0}"),
        ("\u{34F}\u{17B4}\u{17B5}", "\\u{34F}\\u{17B4}\\u{17B5}", "\\u{34F}\\u{17B4}\\u{17B5}"),
        ("line\u{2028}sep\u{2029}", "line\\u{2028}sep\\u{2029}", "line\\u{2028}sep\\u{2029}"),
        ("\u{600}\u{6DD}\u{70F}\u{180E}", "\\u{600}\\u{6DD}\\u{70F}\\u{180E}", "\\u{600}\\u{6DD}\\u{70F}\\u{180E}"),
        ("\u{FFF9}\u{110BD}\u{13430}\u{1343F}", "\\u{FFF9}\\u{110BD}\\u{13430}\\u{1343F}", "\\u{FFF9}\\u{110BD}\\u{13430}\\u{1343F}"),
        ("\u{1BCA0}\u{1D173}\u{1D17A}", "\\u{1BCA0}\\u{1D173}\\u{1D17A}", "\\u{1BCA0}\\u{1D173}\\u{1D17A}"),
    ];

    #[test]
    fn every_class_is_escaped_and_text_is_kept() {
        for &(text, shown, line) in CASES {
            assert_eq!(neutralize(text), shown, "{text:?}");
            assert_eq!(neutralize_line(text), line, "{text:?}");
            assert_eq!(is_neutral(text), text == shown, "{text:?}");
            assert!(is_neutral(&neutralize(text)), "{text:?}");
            assert!(
                matches!(neutralize(text), Cow::Borrowed(_)) == (text == shown),
                "{text:?} is borrowed exactly when nothing is replaced"
            );
        }
    }

    #[test]
    fn every_control_character_is_escaped() {
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            if c.is_control() && c != '\n' && c != '\t' {
                assert!(!is_neutral(&c.to_string()), "{c:?}");
            }
        }
    }

    #[test]
    fn the_format_table_is_unicode_cf() {
        let cf = regex::Regex::new(r"^\p{Cf}$").unwrap();
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            assert_eq!(
                within(FORMAT, c),
                cf.is_match(c.encode_utf8(&mut [0; 4])),
                "{c:?}"
            );
        }
    }

    #[test]
    fn the_tables_are_sorted_and_disjoint() {
        for table in [FORMAT, INVISIBLE] {
            for &(first, last) in table {
                assert!(first <= last, "{first:?}..={last:?}");
            }
            for pair in table.windows(2) {
                assert!(pair[0].1 < pair[1].0, "{pair:?}");
            }
        }
        for c in ['\u{FE0E}', '\u{FE0F}'] {
            assert!(!within(FORMAT, c) && !within(INVISIBLE, c), "{c:?}");
        }
    }
}
