//! Arbitrary text through the terminal neutraliser. Nothing may panic, and:
//!
//! - what `neutralize` returns is `is_neutral`, and holds none of the
//!   characters its rules replace — judged here independently: std's
//!   `char::is_control` (Unicode Cc), the `regex` crate's `\p{Cf}`, and the
//!   short list of other invisible characters;
//! - a text that `is_neutral` comes back as it is, borrowed, and one that
//!   is not comes back changed;
//! - what `neutralize_line` returns holds no line break or tab either;
//! - neutralising twice changes nothing more.
//!
//!     cargo +nightly fuzz run neutralize -- -dict=neutralize.dict -max_total_time=300

#![no_main]

use std::borrow::Cow;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use regex::Regex;
use toolgate_core::{is_neutral, neutralize, neutralize_line};

fn cf(c: char) -> bool {
    static CF: OnceLock<Regex> = OnceLock::new();
    CF.get_or_init(|| Regex::new(r"^\p{Cf}$").expect("the pattern compiles"))
        .is_match(c.encode_utf8(&mut [0; 4]))
}

/// Whether `c` must not reach a terminal (`\n` and `\t` aside).
fn replaced(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || cf(c)
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

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let out = neutralize(text);
    assert!(is_neutral(&out), "{text:?} -> {out:?}");
    assert!(!out.chars().any(replaced), "{text:?} -> {out:?}");
    if is_neutral(text) {
        assert!(
            matches!(out, Cow::Borrowed(t) if t == text),
            "{text:?} -> {out:?}"
        );
    } else {
        assert!(
            text.chars().any(replaced),
            "{text:?} is not neutral, yet nothing in it is replaced"
        );
        assert!(
            matches!(out, Cow::Owned(_)) && out != text,
            "{text:?} -> {out:?}"
        );
    }
    assert!(
        matches!(neutralize(&out), Cow::Borrowed(_)),
        "{text:?} -> {out:?}"
    );

    let line = neutralize_line(text);
    assert!(is_neutral(&line), "{text:?} -> {line:?}");
    assert!(
        !line.chars().any(|c| replaced(c) || c == '\n' || c == '\t'),
        "{text:?} -> {line:?}"
    );
    assert_eq!(
        matches!(line, Cow::Borrowed(_)),
        !text.chars().any(|c| replaced(c) || c == '\n' || c == '\t'),
        "{text:?} -> {line:?}"
    );
});
