//! Arbitrary text through the redaction, with a secret taken from the
//! input and put back into it. Nothing may panic, and:
//!
//! - a secret as `register_secret` would take it (at least six characters
//!   once trimmed) never survives in what `redact` returns, wherever it
//!   was put, whatever surrounds it;
//! - the text comes back borrowed exactly when nothing was replaced.
//!
//! The secret goes through `fuzz_redact` (registered for the one call):
//! registering a new one for every input would grow the process-wide
//! registry without end.
//!
//! Input: the first byte says how many characters (6–37) of the text make
//! the secret, the second where in the rest it is put back.
//!
//!     cargo +nightly fuzz run redact -- -dict=redact.dict -max_total_time=300

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use toolgate_core::{MIN_SECRET_CHARS, REDACTED, fuzz_redact, redact};

fuzz_target!(|data: &[u8]| {
    let Some((&[length, place], text)) = data.split_first_chunk::<2>() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let out = redact(text);
    assert_eq!(
        matches!(out, Cow::Owned(_)),
        out != text,
        "{text:?} -> {out:?}"
    );

    let split = text
        .char_indices()
        .nth(6 + usize::from(length % 32))
        .map_or(text.len(), |(at, _)| at);
    let (secret, rest) = text.split_at(split);
    let at = rest
        .char_indices()
        .map(|(at, _)| at)
        .chain([rest.len()])
        .nth(usize::from(place))
        .unwrap_or(rest.len());
    let with_secret = format!("{}{secret}{}", &rest[..at], &rest[at..]);
    let out = fuzz_redact(&with_secret, secret);
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
    }
});
