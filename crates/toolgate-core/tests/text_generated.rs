//! The fuzz targets' properties (`fuzz/fuzz_targets/neutralize.rs` and
//! `redact.rs`) over generated texts, so that every test run checks them
//! without a fuzzer: texts built from pieces that matter to the rules —
//! controls, escape sequences, bidirectional and invisible characters,
//! emoji, URLs, headers, field names, key prefixes, the marker itself.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::borrow::Cow;

use regex::Regex;
use toolgate_core::{
    MIN_SECRET_CHARS, REDACTED, fuzz_redact, is_neutral, neutralize, neutralize_line, redact,
};

#[path = "common/xorshift.rs"]
mod xorshift;

use xorshift::Rng;

const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "7",
    " ",
    "-",
    "_",
    ".",
    "/",
    "\n",
    "\t",
    "\r",
    "\r\n",
    "\0",
    "\x07",
    "\x08",
    "\x1b",
    "\x1b[2K",
    "\x1b]52;c;",
    "\x7f",
    "\u{80}",
    "\u{85}",
    "\u{9B}",
    "\u{9F}",
    "\u{A0}",
    "\u{AD}",
    "\u{34F}",
    "\u{61C}",
    "\u{115F}",
    "\u{17B4}",
    "\u{200B}",
    "\u{200D}",
    "\u{200E}",
    "\u{2028}",
    "\u{2029}",
    "\u{202E}",
    "\u{2060}",
    "\u{2066}",
    "\u{2069}",
    "\u{206F}",
    "\u{3164}",
    "\u{FE00}",
    "\u{FE0D}",
    "\u{FE0E}",
    "\u{FE0F}",
    "\u{FEFF}",
    "\u{FFA0}",
    "\u{FFFB}",
    "\u{110BD}",
    "\u{1343F}",
    "\u{E0001}",
    "\u{E0041}",
    "\u{E007F}",
    "\u{E0100}",
    "\u{E01EF}",
    "\u{E000}",
    "\u{301}",
    "é",
    "日本",
    "🎉",
    "❤",
    "👨",
    "\\",
    "\\x1b",
    "\\u{",
    "}",
    "://",
    "https://",
    "@",
    "?",
    "&",
    "#",
    "=",
    ":",
    ": ",
    ";",
    ",",
    "\"",
    "'",
    "\\\"",
    "Bearer ",
    "bearer ",
    "Authorization: ",
    "Basic ",
    "x-api-key: ",
    "Cookie: ",
    "token",
    "api_key",
    "apiKey",
    "password",
    "secret",
    "sig",
    "keyword",
    "max_tokens",
    "export ",
    "- ",
    "sk-",
    "ghp_",
    "github_pat_",
    "xoxb-",
    "AKIA",
    "AIza",
    "abcdefghij0123456789",
    REDACTED,
    "redacted",
    "ed]",
];

/// A text of up to `max` pieces.
fn text(rng: &mut Rng, max: usize) -> String {
    (0..rng.below(max + 1))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

/// Whether `c` must not reach a terminal (`\n` and `\t` aside), judged
/// without the crate's tables: Unicode Cc (std), Cf (`regex`), and the
/// other invisible characters the rules name.
fn replaced(cf: &Regex, c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || cf.is_match(c.encode_utf8(&mut [0; 4]))
        || matches!(
            c,
            '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{3164}'
                | '\u{FFA0}'
                | '\u{FE00}'..='\u{FE0D}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

#[test]
fn neutralized_text_holds_nothing_a_terminal_obeys() {
    let cf = Regex::new(r"^\p{Cf}$").unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..300_000 {
        let text = text(&mut rng, 12);
        let out = neutralize(&text);
        assert!(is_neutral(&out), "{text:?} -> {out:?}");
        assert!(
            !out.chars().any(|c| replaced(&cf, c)),
            "{text:?} -> {out:?}"
        );
        let clean = !text.chars().any(|c| replaced(&cf, c));
        assert_eq!(is_neutral(&text), clean, "{text:?}");
        assert_eq!(
            matches!(out, Cow::Borrowed(_)),
            clean,
            "{text:?} -> {out:?}"
        );
        assert_eq!(out == text, clean, "{text:?} -> {out:?}");
        assert!(
            matches!(neutralize(&out), Cow::Borrowed(_)),
            "{text:?} -> {out:?}"
        );

        let line = neutralize_line(&text);
        let breaks = |c: char| replaced(&cf, c) || c == '\n' || c == '\t';
        assert!(!line.chars().any(breaks), "{text:?} -> {line:?}");
        assert_eq!(
            matches!(line, Cow::Borrowed(_)),
            !text.chars().any(breaks),
            "{text:?} -> {line:?}"
        );
    }
}

#[test]
fn a_secret_never_survives_redaction() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    for _ in 0..200_000 {
        let secret = text(&mut rng, 8);
        let rest = text(&mut rng, 16);
        let out = redact(&rest);
        assert_eq!(
            matches!(out, Cow::Owned(_)),
            out != rest,
            "{rest:?} -> {out:?}"
        );

        let at = rest
            .char_indices()
            .map(|(at, _)| at)
            .nth(rng.below(rest.chars().count() + 1))
            .unwrap_or(rest.len());
        let (before, after) = rest.split_at(at);
        let with_secret = format!("{before}{secret}{after}");
        let out = fuzz_redact(&with_secret, &secret);
        assert_eq!(
            matches!(out, Cow::Owned(_)),
            out != with_secret,
            "{with_secret:?} -> {out:?}"
        );
        let secret = secret.trim();
        if secret.chars().count() >= MIN_SECRET_CHARS && !REDACTED.contains(secret) {
            assert!(
                !out.contains(secret),
                "{secret:?} survives in {with_secret:?} -> {out:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100_000, "only {checked} secrets checked");
}
