//! What must never be written to memory: credentials, payment cards and
//! phone numbers (seed 002: "NO guarda credenciales, API keys, tokens,
//! teléfonos").
//!
//! Memory files are read back into prompts and search results for as long
//! as they exist, so a secret saved once leaks into every later session.
//! The checks here are deliberately eager: refusing a harmless fact costs
//! the model a rephrasing; saving a key costs a rotation.

use std::sync::LazyLock;

use regex::Regex;

/// Why a text was refused. The message names the kind of data, never the
/// data itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finding {
    /// A credential, key or token; the text says which kind.
    Credential(&'static str),
    /// A payment card number (13–19 digits that pass the Luhn check).
    Card,
    /// A phone number.
    Phone,
}

impl Finding {
    /// What was found, for a message to the model.
    pub(crate) fn describe(self) -> String {
        match self {
            Self::Credential(what) => format!("a credential ({what})"),
            Self::Card => "a payment card number".to_owned(),
            Self::Phone => "a phone number".to_owned(),
        }
    }
}

/// Credential patterns, each with what it finds.
static CREDENTIALS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
            "a private key",
        ),
        (
            r"\bsk-(?:proj-|ant-(?:api\d\d-)?|live-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
            "an API key (sk-…)",
        ),
        (
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
            "a Stripe key",
        ),
        (
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}",
            "a GitHub token",
        ),
        (r"\bglpat-[A-Za-z0-9_\-]{20,}", "a GitLab token"),
        (
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
            "an AWS access key",
        ),
        (r"\bAIza[0-9A-Za-z_\-]{35}", "a Google API key"),
        (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "a Slack token"),
        (
            r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
            "a JSON Web Token",
        ),
        (
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*",
            "a bearer token",
        ),
        (
            r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",
            "a password in a URL",
        ),
        // "password: x", "my wifi password is x", "contraseña es x".
        (
            r"(?i)\b(?:password|passwd|pwd|passcode|passphrase|contraseña|contrasena|clave)\b(?:\s*[:=]|\s+(?:is|es|was|era)\b)\s*\S+",
            "a password",
        ),
        // "PIN 1234", "pin code: 0000".
        (
            r"(?i)\bpin(?:\s*code)?\b\s*(?:[:=]|is|es)?\s*\d{3,}\b",
            "a PIN",
        ),
        // "api_key = x", "token: x", "client secret: x".
        (
            r"(?i)\b(?:api[_\- ]?key|apikey|secret(?:[_\- ]?key)?|client[_\- ]?secret|access[_\- ]?token|auth[_\- ]?token|refresh[_\- ]?token|token|private[_\- ]?key)\s*[:=]\s*\S+",
            "a key or token",
        ),
    ]
    .into_iter()
    .filter_map(|(pattern, what)| match Regex::new(pattern) {
        Ok(regex) => Some((regex, what)),
        Err(error) => {
            // A pattern of ours that does not compile is a bug; the tests
            // compile every one.
            tracing::error!(%error, "memory secret pattern does not compile");
            None
        }
    })
    .collect()
});

/// A run of characters that keys and tokens are made of.
static TOKEN: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/=_\-]{24,}").ok());

/// Digits with the separators phone numbers and card numbers are written
/// with.
static DIGITS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\+?\(?\d[\d \t().\-/]*\d\)?").ok());

/// Words that, just before a short number, say it is a phone number.
const PHONE_WORDS: &[&str] = &[
    "phone",
    "tel",
    "tlf",
    "teléfono",
    "telefono",
    "móvil",
    "movil",
    "mobile",
    "cell",
    "celular",
    "whatsapp",
    "call",
    "llamar",
    "número",
    "numero",
    "number",
    "contact",
    "contacto",
];

/// The first credential, card number or phone number in `text`.
///
/// # Rules
///
/// 1. Credentials: private-key blocks; provider keys and tokens by their
///    prefixes (`sk-…`, `sk_live_…`, `ghp_…`, `github_pat_…`, `glpat-…`,
///    `AKIA…`, `AIza…`, `xox?-…`); JSON Web Tokens (`eyJ….eyJ….…`);
///    `Bearer …`; a password in a URL (`scheme://user:pass@`); a password
///    or passphrase given a value (`password: x`, `my password is x`,
///    `contraseña es x`); a PIN (`PIN 1234`); a key, secret or token
///    assigned a value (`api_key=x`, `token: x`).
/// 2. A run of 24 or more key characters (letters, digits, `+/=_-`) with
///    upper case, lower case and digits, or 32 or more hexadecimal digits,
///    is taken for a key or token.
/// 3. A run of 13 to 19 digits (spaces and dashes allowed between them)
///    that passes the Luhn check is a payment card number.
/// 4. Phone numbers: a run of digits (not inside a word) and separators (space, `-`, `.`,
///    `/`, parentheses) holding 7 to 15 digits is a phone number when it
///    starts with `+`, or when it has separators and is not a date
///    (`2025-01-15`, `15/01/2025`), a range of years (`1990-2005`), an
///    IPv4 address or a number grouped in thousands with dots
///    (`1.500.000`). Without separators, 10 to 15 digits are a phone
///    number, and 7 to 9 are when a phone word (`phone`, `tel`,
///    `teléfono`, `móvil`, `whatsapp`, `number`, …) comes shortly before.
pub(crate) fn find(text: &str) -> Option<Finding> {
    for (regex, what) in CREDENTIALS.iter() {
        if regex.is_match(text) {
            return Some(Finding::Credential(what));
        }
    }
    if let Some(token) = TOKEN.as_ref() {
        for m in token.find_iter(text) {
            if looks_like_key(m.as_str()) {
                return Some(Finding::Credential("a key or token"));
            }
        }
    }
    let digits = DIGITS.as_ref()?;
    for m in digits.find_iter(text) {
        // Digits inside a word (`a716-4466…` in a UUID, `C1425`) are not
        // a number of their own.
        let word = |c: char| c.is_alphanumeric() || c == '_';
        if text[..m.start()].chars().next_back().is_some_and(word)
            || text[m.end()..].chars().next().is_some_and(word)
        {
            continue;
        }
        let candidate = m.as_str();
        if is_card(candidate) {
            return Some(Finding::Card);
        }
        if is_phone(candidate, &text[..m.start()]) {
            return Some(Finding::Phone);
        }
    }
    None
}

/// Rule 2.
fn looks_like_key(token: &str) -> bool {
    let token = token.trim_matches(|c| c == '-' || c == '_' || c == '=');
    let hex = token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit());
    let mixed = token.len() >= 24
        && token.chars().any(|c| c.is_ascii_uppercase())
        && token.chars().any(|c| c.is_ascii_lowercase())
        && token.chars().any(|c| c.is_ascii_digit());
    hex || mixed
}

/// Rule 3.
fn is_card(candidate: &str) -> bool {
    if candidate
        .chars()
        .any(|c| !(c.is_ascii_digit() || c == ' ' || c == '-'))
    {
        return false;
    }
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Rule 4; `before` is the text before the candidate.
fn is_phone(candidate: &str, before: &str) -> bool {
    let digits = candidate.chars().filter(char::is_ascii_digit).count();
    if !(7..=15).contains(&digits) {
        return false;
    }
    if candidate.starts_with('+') {
        return true;
    }
    let groups: Vec<&str> = candidate
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .collect();
    if groups.len() == 1 {
        return digits >= 10 || (digits >= 7 && phone_word_before(before));
    }
    let separators: Vec<char> = candidate.chars().filter(|c| !c.is_ascii_digit()).collect();
    let only = |sep: char| separators.iter().all(|c| *c == sep);
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let is_date = groups.len() == 3
        && ((lens[0] == 4 && lens[1] <= 2 && lens[2] <= 2)
            || (lens[0] <= 2 && lens[1] <= 2 && (lens[2] == 2 || lens[2] == 4)))
        && (only('-') || only('/') || only('.'));
    let is_year_range = lens == [4, 4]
        && groups
            .iter()
            .all(|g| g.starts_with("19") || g.starts_with("20"));
    let is_ipv4 = groups.len() == 4
        && only('.')
        && groups
            .iter()
            .all(|g| g.len() <= 3 && g.parse::<u16>().is_ok_and(|n| n <= 255));
    let is_thousands = only('.') && lens[0] <= 3 && lens[1..].iter().all(|l| *l == 3);
    !(is_date || is_year_range || is_ipv4 || is_thousands)
}

/// Whether a phone word ends shortly before a number.
fn phone_word_before(before: &str) -> bool {
    let start = before.char_indices().rev().nth(30).map_or(0, |(i, _)| i);
    let near = before[start..].to_lowercase();
    near.split(|c: char| !c.is_alphanumeric())
        .any(|word| PHONE_WORDS.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(CREDENTIALS.len(), 14);
        assert!(TOKEN.is_some() && DIGITS.is_some());
    }

    /// Real-looking spellings (made up: none of these is a live secret).
    #[test]
    fn refused_texts() {
        let cred = |what| Some(Finding::Credential(what));
        let cases: &[(&str, Option<Finding>)] = &[
            (
                "my key is sk-proj-Xa9bC3dE5fG7hJ2kL4mN6pQ8rS0tU1vW",
                cred("an API key (sk-…)"),
            ),
            (
                "OPENAI_API_KEY=sk-4f9KzR2mQ7vX1bN8cL3pT6wY0hJ5dG2s",
                cred("an API key (sk-…)"),
            ),
            (
                "anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                cred("an API key (sk-…)"),
            ),
            (
                "stripe: sk_live_51HqLyjWDarjtT1zdp7dcXYZab",
                cred("a Stripe key"),
            ),
            (
                "token ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU",
                cred("a GitHub token"),
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                cred("a GitHub token"),
            ),
            ("glpat-xR3kP9mQ2vB7nL5cT8wZ", cred("a GitLab token")),
            (
                "the AWS key AKIAIOSFODNN7EXAMPLE is for staging",
                cred("an AWS access key"),
            ),
            (
                "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
                cred("a Google API key"),
            ),
            (
                "slack bot xoxb-2644810351-2644810351-AbCdEfGhIjKl",
                cred("a Slack token"),
            ),
            (
                "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                cred("a JSON Web Token"),
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n",
                cred("a private key"),
            ),
            (
                "-----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA",
                cred("a private key"),
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----",
                cred("a private key"),
            ),
            (
                "Authorization: Bearer abcdef0123456789ABCDEF.xyz",
                cred("a bearer token"),
            ),
            (
                "db is postgres://admin:S3cret!@db.internal:5432/app",
                cred("a password in a URL"),
            ),
            ("password: hunter2", cred("a password")),
            ("Password=correcthorse", cred("a password")),
            ("the wifi password is sunflower", cred("a password")),
            ("mi contraseña es perro123", cred("a password")),
            ("clave: gato", cred("a password")),
            ("the door PIN 4821", cred("a PIN")),
            ("api_key = 1234abcd", cred("a key or token")),
            ("API key: live-value", cred("a key or token")),
            ("client secret: s3cr3t", cred("a key or token")),
            ("token: abc.def", cred("a key or token")),
            (
                "use Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2Rl as the header",
                cred("a key or token"),
            ),
            (
                "hex 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                cred("a key or token"),
            ),
            // Payment cards.
            ("card 4111 1111 1111 1111 exp 12/27", Some(Finding::Card)),
            ("5500-0000-0000-0004", Some(Finding::Card)),
            ("amex 378282246310005", Some(Finding::Card)),
            // International phone numbers.
            ("call +54 9 11 1234-5678", Some(Finding::Phone)),
            ("+1 (555) 123-4567", Some(Finding::Phone)),
            ("+44 20 7946 0958", Some(Finding::Phone)),
            ("+34 612 34 56 78", Some(Finding::Phone)),
            ("+4915112345678", Some(Finding::Phone)),
            ("+33 1 42 68 53 00", Some(Finding::Phone)),
            // Local phone numbers.
            ("her number is (555) 123-4567", Some(Finding::Phone)),
            ("555-123-4567", Some(Finding::Phone)),
            ("555.123.4567", Some(Finding::Phone)),
            ("011 4567-8901", Some(Finding::Phone)),
            ("15 1234 5678", Some(Finding::Phone)),
            ("612 345 678", Some(Finding::Phone)),
            ("612 34 56 78", Some(Finding::Phone)),
            ("0341 15-555-1234", Some(Finding::Phone)),
            ("1145678901", Some(Finding::Phone)),
            ("teléfono 45678901", Some(Finding::Phone)),
            ("whatsapp: 4567890", Some(Finding::Phone)),
            ("4567-8901", Some(Finding::Phone)),
        ];
        for (text, expected) in cases {
            assert_eq!(find(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn accepted_texts() {
        let cases: &[&str] = &[
            "The user's dog is called Rocky.",
            "The user prefers answers in Spanish.",
            // Dates, times, years, ranges.
            "The user's birthday is 1990-03-14.",
            "Flight on 15/01/2025 at 14:30.",
            "The meeting moved to 03.02.2026.",
            "Worked there 1990-2005.",
            "Born in 1987, moved in 2015 and again in 2019.",
            // Amounts, versions, addresses, codes.
            "The flat costs 1.500.000 pesos.",
            "Budget: 1,500,000 euros.",
            "Running version 1.2.3 of the app.",
            "The server is at 192.168.1.10.",
            "Lives at Calle Mayor 123, 28013 Madrid.",
            "Order number 12345.",
            "Postcode C1425 and floor 3.",
            // Ordinary words near secret ones.
            "The user forgot their password and reset it.",
            "The user keeps passwords in a password manager.",
            "The token expired yesterday.",
            "Wants to learn about API keys and OAuth.",
            "The user likes skiing and sk-8 boards.",
            // Identifiers that are not keys.
            "Commit abc1234 fixed the bug.",
            "The ticket id is 550e8400-e29b-41d4-a716-446655440000.",
            "The user works at ACME_CORPORATION_INTERNATIONAL.",
            "The user's blog is https://example.com/posts/2024/my-first-post",
            "Favourite video: https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        ];
        for text in cases {
            assert_eq!(find(text), None, "{text:?}");
        }
    }
}
