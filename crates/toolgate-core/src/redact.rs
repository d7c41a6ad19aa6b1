//! Secrets taken out of text before it is shown, logged or reported.
//!
//! One function, [`redact`], for everything toolgate writes about itself
//! — `self_inspect`, reports, error messages, logs: an error body a model
//! server echoed with the request's headers, a base URL with a password in
//! it, a configuration file quoted in a message. Secrets the process knows
//! exactly (the API keys it read from the environment) are registered with
//! [`register_secret`] and replaced wherever they appear; the rest is
//! found by its shape. The rules are on [`redact`].

use std::borrow::Cow;
use std::sync::{OnceLock, PoisonError, RwLock};

use regex::{Captures, Match, Regex};

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secret values shorter than this, in characters after trimming, are not
/// registered (see [`register_secret`]).
pub const MIN_SECRET_CHARS: usize = 6;

/// `text` with the secrets in it replaced by [`REDACTED`]. Borrowed when
/// nothing was replaced; never panics, whatever the text.
///
/// # Rules
///
/// The rules apply in this order; each replaces a part of the text, never
/// more than its rule says, and a value that is already `[redacted]` is
/// left as it is. (Redacting the result again can still take a little
/// more, where one rule ended a value sooner than another would — at a
/// quote, or at a `#` comment — and the other now reads `[redacted]` and
/// what follows as one value.)
///
/// 1. **URL user information**: in `scheme://userinfo@host`, for any
///    scheme (`[a-z][a-z0-9+.-]*`), the whole user information — the user
///    name too, since `https://TOKEN@github.com` carries a token there:
///    `https://[redacted]@host/…`. It runs to the last `@` before the
///    host's `/`, `?`, `#`, a space or a quote, as a URL parser reads it.
/// 2. **Credential headers**, anywhere in the text (a log line, a curl
///    command, an error message): the value of `Authorization`,
///    `Proxy-Authorization`, `X-Api-Key`, `Api-Key`, `X-Auth-Token`,
///    `X-Goog-Api-Key`, `Cookie` and `Set-Cookie` (any case), up to the end
///    of the line or a quote. A known scheme (`Basic`, `Bearer`, `Token`,
///    `Digest`, `Negotiate`, `NTLM`, `ApiKey`, `AWS4-HMAC-SHA256`) is kept
///    in front of the redacted value: `Authorization: Basic [redacted]`.
/// 3. **Bearer tokens**, anywhere (a JSON string, a message): the token
///    after the word `Bearer`, when it looks like one — at least 8
///    characters of `[A-Za-z0-9._~+/=-]` with a digit or one of `._~+/=-`.
///    So `"Bearer sk-live-abc"` is redacted and "a Bearer token" is not.
/// 4. **Fields named like credentials** (see *Credential names* below),
///    the value replaced:
///    - JSON or Python-style keys with a string value, escaped JSON inside
///      a JSON string too: `"api_key": "[redacted]"`,
///      `{\"token\": \"[redacted]\"}`;
///    - `name: value` and `name = value` lines (YAML, TOML, `.env`, HTTP
///      headers, `export NAME=…`), when the value is quoted or one word,
///      optionally followed by a `#` comment: `password: [redacted]`;
///    - `name=value` anywhere — URL query and fragment parameters, form
///      bodies, cookies, shell assignments: `?token=[redacted]&page=2`,
///      `OPENAI_API_KEY=[redacted]`. The value runs up to a space, `&`,
///      `#`, `;`, `,`, a quote, `<`, `>`, a backslash, or an `=` that is
///      not trailing base64 padding: were `=` part of the value, every
///      `a=` of `a=a=a=…` would start a value running to the end of the
///      text, and reading them all would take time quadratic in its
///      length (tokens carry `=` only as padding).
/// 5. **Known key shapes**, anywhere, starting at a word boundary:
///    `sk-` and 20 or more of `[A-Za-z0-9_-]` (OpenAI, Anthropic),
///    `ghp_` `gho_` `ghs_` `ghu_` `ghr_` and 20 or more letters or digits,
///    `github_pat_` and 20 or more of `[A-Za-z0-9_]` (GitHub),
///    `xoxa-` `xoxb-` `xoxp-` `xoxr-` `xoxs-` and 10 or more of
///    `[A-Za-z0-9-]` (Slack), `AKIA` or `ASIA` and 16 of `[0-9A-Z]` (AWS
///    access key ids, long-lived and temporary), `AIza` and 35 of
///    `[0-9A-Za-z_-]` (Google API keys). The whole key is replaced.
/// 6. **Registered secrets** ([`register_secret`]): every occurrence,
///    wherever it is, longest secret first. This rule runs last, so no
///    other rule can leave a registered value behind by cutting it short;
///    if a replacement happens to form a registered value again, the rule
///    repeats, and if that still leaves one (a contrived text), the whole
///    text becomes `[redacted]`.
///
/// # Credential names
///
/// A name (a JSON key, a header, a parameter) is split into words — at
/// `_`, `-`, `.`, between lower and upper case (`apiKey`, `APIKey`) and
/// between letters and digits — and compared without case. It names a
/// credential when one of its words
///
/// - ends in `token`, `secret`, `secrets`, `password`, `passwd`,
///   `passphrase`, `credential` or `credentials` (`access_token`,
///   `accessToken`, `clientsecret`, `PGPASSWORD`, `X-Amz-Credential`), or
/// - is `key`, `apikey`, `accesskey`, `secretkey`, `privatekey`,
///   `signingkey`, `masterkey`, `pwd`, `pass`, `auth`, `authorization`,
///   `sig`, `signature`, `cookie`, `jwt`, `otp`, or a web framework's
///   session cookie: `sessionid`, `sessid`, `jsessionid`, `phpsessid`
///   (`api_key`, `x-api-key`, `AWS_SECRET_ACCESS_KEY`, `sig` of an Azure
///   shared access signature, `X-Amz-Signature`),
///
/// unless it has several words and the last one says the value is about
/// the credential rather than the credential itself: `type`, `count`,
/// `limit`, `length`, `len`, `size`, `max`, `min`, `budget`, `usage`,
/// `used`, `url`, `uri`, `endpoint`, `host`, `name`, `path`, `file`, `dir`,
/// `env`, `var`, `header`, `field`, `param`, `expires`, `expiry`,
/// `expiration`, `ttl`, `in`, `at`, `mode`, `method`, `scheme`, `kind`,
/// `enabled`, `required`, `provider` (`token_type`, `api_key_env`,
/// `password_file`, `token_url`, `expires_in`).
///
/// Kept on purpose: words that merely contain one of these (`keyword`,
/// `keyboard`, `monkey`, `hotkey`, `author`, `oauth`, `signal`, `design`,
/// `bypass`, `passthrough`); counts of model tokens (`max_tokens`,
/// `prompt_tokens`: `tokens` is not `token`); `keys` (`trust_only_keys`);
/// `session`, `session_id` and `sessionId`, because toolgate's own session
/// ids are plain identifiers a person needs to read in reports; and `code`,
/// because the error bodies of model servers name their error in a `code`
/// field (`"code": "invalid_api_key"`), though OAuth sends a short-lived
/// authorization code under that name.
///
/// Finding secrets by their shape is a net with holes: a password in prose
/// or under an unusual name passes. What must never leak is registered.
///
/// # Example
///
/// ```
/// use toolgate_core::{redact, register_secret};
///
/// let url = "http://user:PASS@localhost:8080/v1?token=abc&model=llama";
/// assert_eq!(
///     redact(url),
///     "http://[redacted]@localhost:8080/v1?token=[redacted]&model=llama"
/// );
///
/// let body = r#"{"error": "bad header Authorization: Bearer sk-live-4f9a1c"}"#;
/// assert_eq!(
///     redact(body),
///     r#"{"error": "bad header Authorization: Bearer [redacted]"}"#
/// );
///
/// register_secret("correct-horse-battery");
/// assert_eq!(redact("key correct-horse-battery was refused"), "key [redacted] was refused");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    redact_with(text, &secrets, None)
}

/// Registers a secret value: from now on [`redact`] replaces it wherever it
/// appears, in every thread. It is meant for the values of the
/// environment variables API keys are read from, registered where they
/// are read.
///
/// The value is trimmed. Values shorter than [`MIN_SECRET_CHARS`]
/// characters are ignored: replacing `admin`, `1234` or `true` everywhere
/// would blank out ordinary words and numbers, and show what the secret is
/// by where the text went missing — and such a value is no secret to hide
/// anyway. A value that is part of `[redacted]` itself (`redact`) is
/// ignored too: replacing it would only bring it back.
pub fn register_secret(value: &str) {
    let Some(value) = accepted(value) else {
        return;
    };
    let mut secrets = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    if !secrets.iter().any(|s| s == value) {
        secrets.push(value.to_owned());
        // Longest first: a secret that holds another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// [`redact`] with `secret` registered for this call only, for the fuzz
/// target: registering one secret per input would grow the registry
/// without end. Not part of the API.
#[doc(hidden)]
pub fn fuzz_redact<'t>(text: &'t str, secret: &str) -> Cow<'t, str> {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    redact_with(text, &secrets, accepted(secret))
}

/// The registered secrets, longest first.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// `value` as it is registered, or `None` when it is ignored.
fn accepted(value: &str) -> Option<&str> {
    let value = value.trim();
    (value.chars().count() >= MIN_SECRET_CHARS && !REDACTED.contains(value)).then_some(value)
}

/// The rules, then the registered `secrets` and `extra`.
fn redact_with<'t>(text: &'t str, secrets: &[String], extra: Option<&str>) -> Cow<'t, str> {
    let mut text = Cow::Borrowed(text);
    let mut lower = text.to_ascii_lowercase();
    for rule in &RULES {
        if !(rule.may_apply)(&text, &lower) {
            continue;
        }
        let Ok(regex) = rule.regex() else {
            // A pattern that does not compile (a test makes sure they all
            // do) must not let secrets through: nothing is shown.
            return Cow::Owned(REDACTED.to_owned());
        };
        if let Cow::Owned(replaced) = replace_all(regex, &text, rule.apply) {
            lower = replaced.to_ascii_lowercase();
            text = Cow::Owned(replaced);
        }
    }
    let all: Vec<&str> = extra
        .into_iter()
        .chain(secrets.iter().map(String::as_str))
        .collect();
    replace_secrets(text, &all)
}

/// Rule 6: every occurrence of `secrets` replaced, until none is left.
fn replace_secrets<'t>(mut text: Cow<'t, str>, secrets: &[&str]) -> Cow<'t, str> {
    // A replacement can form a secret again from `[redacted]` and the text
    // beside it (the secret `ed]abc` in `ed]abcabc`); each round consumes
    // text, so a few rounds settle any real text.
    for _ in 0..8 {
        let mut changed = false;
        for secret in secrets {
            if text.contains(secret) {
                text = Cow::Owned(text.replace(secret, REDACTED));
                changed = true;
            }
        }
        if !changed {
            return text;
        }
    }
    if secrets.iter().any(|s| text.contains(s)) {
        // No secret is part of `[redacted]` (see `accepted`).
        Cow::Owned(REDACTED.to_owned())
    } else {
        text
    }
}

/// A pattern, compiled on the first text it may change, and what a match
/// becomes (`None`: it stays).
struct Rule {
    pattern: &'static str,
    /// Whether the rule may change a text, given the text and its ASCII
    /// lower case: `false` only when no match could be replaced (the text
    /// lacks a literal every replaced match holds), so that most text is
    /// never searched and the pattern rarely compiled.
    may_apply: fn(&str, &str) -> bool,
    apply: fn(&Captures<'_>) -> Option<String>,
    regex: OnceLock<Result<Regex, regex::Error>>,
}

impl Rule {
    const fn new(
        pattern: &'static str,
        may_apply: fn(&str, &str) -> bool,
        apply: fn(&Captures<'_>) -> Option<String>,
    ) -> Self {
        Rule {
            pattern,
            may_apply,
            apply,
            regex: OnceLock::new(),
        }
    }

    fn regex(&self) -> &Result<Regex, regex::Error> {
        self.regex.get_or_init(|| Regex::new(self.pattern))
    }
}

/// Every credential's name holds one of these, in lower case: each word of
/// [`SECRET_WORDS`] and each ending of [`SECRET_ENDINGS`] holds one (a test
/// checks it), and so does each header name of rule 2.
const CREDENTIAL_NEEDLES: &[&str] = &[
    "key",
    "pwd",
    "pass",
    "auth",
    "sig",
    "cookie",
    "jwt",
    "otp",
    "sessid",
    "sessionid",
    "token",
    "secret",
    "credential",
];

/// Whether `lower` (a text in ASCII lower case) may hold a credential's
/// name (see [`credential_name`]).
fn may_name_credential(lower: &str) -> bool {
    CREDENTIAL_NEEDLES
        .iter()
        .any(|needle| lower.contains(needle))
}

/// Rules 1–5, in order.
static RULES: [Rule; 7] = [
    // 1. URL user information.
    Rule::new(
        r#"(?i)[a-z][a-z0-9+.\-]*://(?P<value>[^\s/?#"<>\\`{}|\^\[\]]+)@"#,
        |text, _| text.contains("://") && text.contains('@'),
        |caps| replace_group(caps, caps.name("value")?, REDACTED),
    ),
    // 2. Credential headers. Case-insensitive matching reaches beyond
    // ASCII (the Kelvin sign is a `k`): text that is not ASCII is
    // always searched.
    Rule::new(
        r#"(?i)(?-u:\b)(?:proxy-authorization|authorization|x-api-key|api-key|x-auth-token|x-goog-api-key|set-cookie|cookie)[ \t]*:[ \t]*(?P<value>[^\s"'\\][^\r\n"'\\]*)"#,
        |text, lower| !text.is_ascii() || may_name_credential(lower),
        redact_value_group,
    ),
    // 3. Bearer tokens.
    Rule::new(
        r"(?i)(?-u:\b)bearer[ \t]+(?P<value>[A-Za-z0-9_~+/\-]+(?:\.[A-Za-z0-9_~+/\-]+)*=*)",
        |text, lower| !text.is_ascii() || lower.contains("bearer"),
        |caps| {
            let value = caps.name("value")?;
            looks_like_token(value.as_str())
                .then(|| replace_group(caps, value, REDACTED))
                .flatten()
        },
    ),
    // 4a. JSON and Python-style fields, escaped JSON too.
    Rule::new(
        r#"\\?["'](?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)\\?["']\s*:\s*(?:\\"(?P<esc>.*?)\\"|"(?P<dq>(?:[^"\\\r\n]|\\.)*)"|'(?P<sq>(?:[^'\\\r\n]|\\.)*)')"#,
        |_, lower| may_name_credential(lower),
        redact_field,
    ),
    // 4b. `name: value` and `name = value` lines.
    Rule::new(
        r#"(?m)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*[:=][ \t]*(?:"(?P<dq>(?:[^"\\\r\n]|\\.)*)"|'(?P<sq>[^'\r\n]*)'|(?P<bare>[^\s"'#]\S*))[ \t]*(?:#[^\r\n]*)?\r?$"#,
        |_, lower| may_name_credential(lower),
        redact_field,
    ),
    // 4c. `name=value` anywhere.
    Rule::new(
        r#"(?:^|[^A-Za-z0-9_.])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)=(?:"(?P<dq>(?:[^"\\\r\n]|\\.)*)"|'(?P<sq>[^'\r\n]*)'|(?P<bare>[^\s&#"'<>\\,;=]+=*))"#,
        |_, lower| may_name_credential(lower),
        redact_field,
    ),
    // 5. Known key shapes.
    Rule::new(
        r"(?-u:\b)(?:sk-[A-Za-z0-9_\-]{20,}|gh[posur]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|A[KS]IA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35})",
        |text, _| {
            ["sk-", "gh", "github_pat_", "xox", "AKIA", "ASIA", "AIza"]
                .iter()
                .any(|prefix| text.contains(prefix))
        },
        |_| Some(REDACTED.to_owned()),
    ),
];

/// `text` with the matches of `regex` replaced by `apply`; borrowed when
/// nothing changed.
///
/// A match that stays is searched again from the character before its
/// value (the `=`, `:` or quote that can start a field), not from its end:
/// the value of a field that names no credential can hold one that does
/// (`"message": "… {\"token\": \"…\"}"`, `next=https://x/?token=…`).
/// Not from its second character: the name `a-a-…-a-token` would then be
/// read again from each `-`, in time quadratic in its length.
fn replace_all<'t>(
    regex: &Regex,
    text: &'t str,
    apply: fn(&Captures<'_>) -> Option<String>,
) -> Cow<'t, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(caps) = regex.captures_at(text, at) {
        let Some(whole) = caps.get(0) else {
            break;
        };
        match apply(&caps) {
            Some(new) if new != whole.as_str() && !whole.is_empty() => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                out.push_str(text.get(copied..whole.start()).unwrap_or_default());
                out.push_str(&new);
                copied = whole.end();
                at = whole.end();
            }
            _ => {
                let second = whole.start()
                    + text
                        .get(whole.start()..)
                        .and_then(|rest| rest.chars().next())
                        .map_or(1, char::len_utf8);
                at = value(&caps)
                    .map(|value| value.start().saturating_sub(1))
                    .filter(|&before| before >= second && text.is_char_boundary(before))
                    .unwrap_or(second);
            }
        }
        if at > text.len() {
            break;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(text.get(copied..).unwrap_or_default());
            Cow::Owned(out)
        }
    }
}

/// The value a rule matched: the group `value`, or whichever of the
/// quoted and bare forms of a field matched.
fn value<'t>(caps: &Captures<'t>) -> Option<Match<'t>> {
    ["value", "esc", "dq", "sq", "bare"]
        .iter()
        .find_map(|name| caps.name(name))
}

/// The whole match of `caps` with its part `group` replaced by `with`.
fn replace_group(caps: &Captures<'_>, group: Match<'_>, with: &str) -> Option<String> {
    let whole = caps.get(0)?;
    let text = whole.as_str();
    let start = group.start().checked_sub(whole.start())?;
    let end = group.end().checked_sub(whole.start())?;
    Some(format!("{}{with}{}", text.get(..start)?, text.get(end..)?))
}

/// Rules 2 and 4: the value of a credential, its scheme kept.
fn redact_value_group(caps: &Captures<'_>) -> Option<String> {
    let group = value(caps)?;
    let value = group.as_str().trim();
    if value.is_empty() || value == REDACTED {
        return None;
    }
    if let Some((scheme, rest)) = value.split_once([' ', '\t'])
        && SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme))
    {
        if rest.trim() == REDACTED {
            return None;
        }
        return replace_group(caps, group, &format!("{scheme} {REDACTED}"));
    }
    replace_group(caps, group, REDACTED)
}

/// Rule 4: a field's value, when its name names a credential.
fn redact_field(caps: &Captures<'_>) -> Option<String> {
    if !credential_name(caps.name("name")?.as_str()) {
        return None;
    }
    redact_value_group(caps)
}

/// Authorization schemes kept in front of a redacted value (rule 2).
const SCHEMES: &[&str] = &[
    "Basic",
    "Bearer",
    "Token",
    "Digest",
    "Negotiate",
    "NTLM",
    "ApiKey",
    "AWS4-HMAC-SHA256",
];

/// Whether the word after `Bearer` is a token rather than prose (rule 3).
fn looks_like_token(word: &str) -> bool {
    word.len() >= 8
        && word
            .chars()
            .any(|c| c.is_ascii_digit() || "._~+/=-".contains(c))
}

/// A word that is the end of a credential's name.
const SECRET_ENDINGS: &[&str] = &[
    "token",
    "secret",
    "secrets",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
];

/// A word that is a credential's name.
const SECRET_WORDS: &[&str] = &[
    "key",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "signingkey",
    "masterkey",
    "pwd",
    "pass",
    "auth",
    "authorization",
    "sig",
    "signature",
    "cookie",
    "jwt",
    "otp",
    "sessionid",
    "sessid",
    "jsessionid",
    "phpsessid",
];

/// A last word that makes a name about a credential, not one.
const DESCRIPTORS: &[&str] = &[
    "type",
    "count",
    "limit",
    "length",
    "len",
    "size",
    "max",
    "min",
    "budget",
    "usage",
    "used",
    "url",
    "uri",
    "endpoint",
    "host",
    "name",
    "path",
    "file",
    "dir",
    "env",
    "var",
    "header",
    "field",
    "param",
    "expires",
    "expiry",
    "expiration",
    "ttl",
    "in",
    "at",
    "mode",
    "method",
    "scheme",
    "kind",
    "enabled",
    "required",
    "provider",
];

/// Whether `name` names a credential (see *Credential names* on [`redact`]).
fn credential_name(name: &str) -> bool {
    let words = words(name);
    let Some(last) = words.last() else {
        return false;
    };
    if words.len() > 1 && DESCRIPTORS.contains(&last.as_str()) {
        return false;
    }
    words.iter().any(|word| {
        SECRET_WORDS.contains(&word.as_str()) || SECRET_ENDINGS.iter().any(|e| word.ends_with(e))
    })
}

/// `name` split into lower-case words: at anything but ASCII letters and
/// digits, between lower and upper case (`apiKey`), before the last capital
/// of a run followed by a small letter (`APIKey`), and between letters and
/// digits (`oauth2`).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = prev.is_some_and(|p| {
            p.is_ascii_alphanumeric()
                && ((c.is_ascii_uppercase() && (p.is_ascii_lowercase() || p.is_ascii_digit()))
                    || (c.is_ascii_uppercase()
                        && p.is_ascii_uppercase()
                        && next.is_some_and(|n| n.is_ascii_lowercase()))
                    || (c.is_ascii_digit() != p.is_ascii_digit()))
        });
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for rule in &RULES {
            assert!(rule.regex().is_ok(), "{:?}", rule.regex());
        }
    }

    #[test]
    fn every_credential_name_holds_a_needle() {
        for word in SECRET_WORDS.iter().chain(SECRET_ENDINGS) {
            assert!(may_name_credential(word), "`{word}` holds no needle");
        }
        for header in [
            "proxy-authorization",
            "authorization",
            "x-api-key",
            "api-key",
            "x-auth-token",
            "x-goog-api-key",
            "set-cookie",
            "cookie",
        ] {
            assert!(may_name_credential(header), "`{header}` holds no needle");
        }
    }

    #[test]
    fn a_rule_skipped_for_a_text_would_not_have_changed_it() {
        let samples = [
            "http://user:PASS@localhost:8080/v1?token=abc&model=llama",
            "git clone https://ghp_abcdefghijklmnopqrstuvwxyz012345@github.com/x/y",
            r#"{"error": "bad header Authorization: Bearer sk-live-4f9a1c"}"#,
            "X-Api-Key: abcdef123456\nCookie: session=abc123def",
            "curl -H 'authorization: Token 0123456789abcdef' https://x",
            "Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig-nature_123",
            r#"{"apiKey": "s3cr3t-value", "model": "m", "password": 'hunter22'}"#,
            r#"{\"client_secret\": \"abc123xyz\"}"#,
            "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nDB_PASSWORD: 'pw-123456'",
            "- sessionId: 'abcdef0123'\nJSESSIONID=0123456789abcdef",
            "next=https://x/?access_token=abcdef0123&sig=0123abcdef&otp=123456",
            "sk-abcdefghijklmnopqrstuvwxyz AKIAABCDEFGHIJKLMNOP xoxb-0123456789-abcdef",
            "AIzaSyA-0123456789abcdefghijklmnopqrstuv github_pat_0123456789abcdefghijABCDEFG",
            "api-\u{212a}ey: abcdef123456",
            "mode confirm-sensitive: `asks` tools ask; rules may allow",
            "2026-11-27T20:00:00+00:00 (UTC)",
        ];
        let mut changed_some = [false; 7];
        for text in samples {
            let lower = text.to_ascii_lowercase();
            for (i, rule) in RULES.iter().enumerate() {
                let Ok(regex) = rule.regex() else {
                    panic!("rule {i} does not compile");
                };
                let changed = matches!(replace_all(regex, text, rule.apply), Cow::Owned(_));
                assert!(
                    !changed || (rule.may_apply)(text, &lower),
                    "rule {i} would change {text:?} but is skipped for it"
                );
                changed_some[i] |= changed;
            }
        }
        // Every rule is tried on a text it changes.
        assert_eq!(changed_some, [true; 7]);
        // And text without the literals is never searched.
        let plain = "mode confirm-sensitive: `asks` tools ask; rules may allow";
        let lower = plain.to_ascii_lowercase();
        assert!(RULES.iter().all(|rule| !(rule.may_apply)(plain, &lower)));
    }

    #[test]
    fn names_split_into_words() {
        #[rustfmt::skip]
        let cases: &[(&str, &[&str])] = &[
            ("api_key", &["api", "key"]),
            ("apiKey", &["api", "key"]),
            ("APIKey", &["api", "key"]),
            ("X-Amz-Security-Token", &["x", "amz", "security", "token"]),
            ("oauth2Token", &["oauth", "2", "token"]),
            ("PHPSESSID", &["phpsessid"]),
            ("a..b", &["a", "b"]),
            ("", &[]),
        ];
        for &(name, expected) in cases {
            assert_eq!(words(name), expected, "{name:?}");
        }
    }

    #[test]
    fn credential_names() {
        #[rustfmt::skip]
        let cases: &[(&str, bool)] = &[
            ("token", true),
            ("access_token", true),
            ("refresh_token", true),
            ("id_token", true),
            ("accessToken", true),
            ("X-Amz-Security-Token", true),
            ("GITHUB_TOKEN", true),
            ("auth_token", true),
            ("api_key", true),
            ("apiKey", true),
            ("APIKey", true),
            ("apikey", true),
            ("x-api-key", true),
            ("key", true),
            ("OPENAI_API_KEY", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("client_secret", true),
            ("clientsecret", true),
            ("secret", true),
            ("password", true),
            ("PGPASSWORD", true),
            ("db_password", true),
            ("password2", true),
            ("password_confirm", true),
            ("passwd", true),
            ("passphrase", true),
            ("pwd", true),
            ("pass", true),
            ("auth", true),
            ("authorization", true),
            ("sig", true),
            ("signature", true),
            ("X-Amz-Signature", true),
            ("X-Amz-Credential", true),
            ("credentials", true),
            ("cookie", true),
            ("jwt", true),
            ("otp", true),
            ("sessionid", true),
            ("JSESSIONID", true),
            ("PHPSESSID", true),
            ("session_token", true),
            ("keyword", false),
            ("keyboard", false),
            ("monkey", false),
            ("hotkey", false),
            ("keys", false),
            ("trust_only_keys", false),
            ("author", false),
            ("authority", false),
            ("oauth", false),
            ("signal", false),
            ("design", false),
            ("signup", false),
            ("bypass", false),
            ("passthrough", false),
            ("max_tokens", false),
            ("prompt_tokens", false),
            ("tokens", false),
            ("token_type", false),
            ("token_count", false),
            ("token_url", false),
            ("token_budget", false),
            ("expires_in", false),
            ("api_key_env", false),
            ("auth_token_env", false),
            ("password_file", false),
            ("secret_dir", false),
            ("session", false),
            ("session_id", false),
            ("sessionId", false),
            ("code", false),
            ("status_code", false),
            ("model", false),
            ("page", false),
            ("q", false),
        ];
        for &(name, secret) in cases {
            assert_eq!(credential_name(name), secret, "{name:?}");
        }
    }

    /// One line per case: the text and what `redact` makes of it.
    #[rustfmt::skip]
    const CASES: &[(&str, &str)] = &[
        // 1. URL user information.
        ("https://user:pass@host/x", "https://[redacted]@host/x"),
        ("https://TOKEN@github.com/o/r.git", "https://[redacted]@github.com/o/r.git"),
        ("git+ssh://git@example.com:22/r", "git+ssh://[redacted]@example.com:22/r"),
        ("postgres://app:s3cr3t@db:5432/main", "postgres://[redacted]@db:5432/main"),
        ("HTTPS://u:p@ss@host", "HTTPS://[redacted]@host"),
        ("http://user:PASS@host:8080/v1?token=abc&api_key=def&model=x", "http://[redacted]@host:8080/v1?token=[redacted]&api_key=[redacted]&model=x"),
        // 2. Credential headers.
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"),
        ("authorization: token ghx_abc", "authorization: token [redacted]"),
        ("curl -H 'Authorization: sk-abc' https://x", "curl -H 'Authorization: [redacted]' https://x"),
        ("Proxy-Authorization: Digest abc", "Proxy-Authorization: Digest [redacted]"),
        ("-H \"x-api-key: abc123\" -H \"api-key: def456\"", "-H \"x-api-key: [redacted]\" -H \"api-key: [redacted]\""),
        ("X-Goog-Api-Key: AIza", "X-Goog-Api-Key: [redacted]"),
        ("Cookie: a=1; sessionid=xyz", "Cookie: [redacted]"),
        ("Authorization: Bearer [redacted]", "Authorization: Bearer [redacted]"),
        // 3. Bearer tokens.
        (r#"{"h": "Bearer sk-live-abc"}"#, r#"{"h": "Bearer [redacted]"}"#),
        ("bearer eyJhbGciOi.eyJzdWIi.SflKxw", "bearer [redacted]"),
        ("use Bearer abc123def here", "use Bearer [redacted] here"),
        // 4. Fields named like credentials.
        (r#"{"api_key": "abc", "model": "gpt"}"#, r#"{"api_key": "[redacted]", "model": "gpt"}"#),
        (r#"{"password":"p\"w","n":1}"#, r#"{"password":"[redacted]","n":1}"#),
        (r"{'client_secret': 'xyz'}", r"{'client_secret': '[redacted]'}"),
        (r#""{\"token\": \"abc\", \"x\": 1}""#, r#""{\"token\": \"[redacted]\", \"x\": 1}""#),
        (r#"{"Authorization": "Basic abc"}"#, r#"{"Authorization": "Basic [redacted]"}"#),
        (r#"{"token": 42, "api_key": null}"#, r#"{"token": 42, "api_key": null}"#),
        ("password: hunter2", "password: [redacted]"),
        ("llm:\n  api_key: \"abc\" # old\n  model: x", "llm:\n  api_key: \"[redacted]\" # old\n  model: x"),
        ("- token: abc\r\n", "- token: [redacted]\r\n"),
        ("api_key = 'abc'", "api_key = '[redacted]'"),
        ("export GITHUB_TOKEN=abc123", "export GITHUB_TOKEN=[redacted]"),
        ("OPENAI_API_KEY=abc\nHOME=/root", "OPENAI_API_KEY=[redacted]\nHOME=/root"),
        ("X-Api-Key: abc", "X-Api-Key: [redacted]"),
        ("https://x/cb#access_token=abc&token_type=bearer", "https://x/cb#access_token=[redacted]&token_type=bearer"),
        ("?sv=2022&sig=abc%2Bdef&se=2030", "?sv=2022&sig=[redacted]&se=2030"),
        ("curl -d client_secret=abc -d grant_type=x", "curl -d client_secret=[redacted] -d grant_type=x"),
        ("--password=abc", "--password=[redacted]"),
        ("s3?X-Amz-Credential=AK%2F&X-Amz-Signature=ff00", "s3?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]"),
        ("?token=[redacted]&page=2", "?token=[redacted]&page=2"),
        ("/login?next=https://x/?token=abc", "/login?next=https://x/?token=[redacted]"),
        (r#"{"message": "echo {\"api_key\": \"abc\"}"}"#, r#"{"message": "echo {\"api_key\": \"[redacted]\"}"}"#),
        // 5. Known key shapes.
        ("key sk-proj-0123456789abcdefghijKLMN end", "key [redacted] end"),
        ("sk-ant-api03-abcdefghij0123456789_-xyz", "[redacted]"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "[redacted]"),
        ("(gho_0123456789abcdefghij)", "([redacted])"),
        ("ghs_0123456789abcdefghij ghu_0123456789abcdefghij", "[redacted] [redacted]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "[redacted]"),
        ("xoxb-123456789012-abcdefghij", "[redacted]"),
        ("id AKIAIOSFODNN7EXAMPLE.", "id [redacted]."),
        ("ASIAIOSFODNN7EXAMPLE", "[redacted]"),
        ("AIzaSyA-0123456789abcdefghijklmnopqrstu", "[redacted]"),
        // Kept.
        ("keyboard", "keyboard"),
        ("monkey=1&keyword=rust&max_tokens=100", "monkey=1&keyword=rust&max_tokens=100"),
        ("https://example.com/search?q=rust&page=2#top", "https://example.com/search?q=rust&page=2#top"),
        ("mail me at someone@example.com", "mail me at someone@example.com"),
        ("send a Bearer", "send a Bearer"),
        ("a Bearer token in the Authorization header", "a Bearer token in the Authorization header"),
        ("the Bearer authentication scheme", "the Bearer authentication scheme"),
        ("The key to the design is a signal; the author has a token budget.", "The key to the design is a signal; the author has a token budget."),
        (r#"{"session": "s-42", "session_id": "s-42", "code": "invalid_api_key"}"#, r#"{"session": "s-42", "session_id": "s-42", "code": "invalid_api_key"}"#),
        ("api_key_env: OPENAI_API_KEY", "api_key_env: OPENAI_API_KEY"),
        ("token: \nkey:", "token: \nkey:"),
        ("sk-learn task-0123456789abcdefghijklmn", "sk-learn task-0123456789abcdefghijklmn"),
        ("base64 ZXZpbA== and a=b", "base64 ZXZpbA== and a=b"),
        (r#"{"base_url":"https://api.openai.com","contact":"me@example.com"}"#, r#"{"base_url":"https://api.openai.com","contact":"me@example.com"}"#),
        ("Note: the token expired at 12:00", "Note: the token expired at 12:00"),
        ("", ""),
    ];

    #[test]
    fn secrets_are_redacted_and_the_rest_is_kept() {
        for &(text, expected) in CASES {
            let out = redact_with(text, &[], None);
            assert_eq!(out, expected, "{text:?}");
            assert_eq!(
                matches!(out, Cow::Borrowed(_)),
                text == expected,
                "{text:?}"
            );
            assert_eq!(redact_with(&out, &[], None), out, "{text:?} twice");
        }
    }

    /// Each `a=` started a field whose value ran to the end of the text;
    /// each `-` of a long name started a name that was read again:
    /// quadratic both.
    #[test]
    fn a_long_chain_of_assignments_is_read_once() {
        let chain = "a=".repeat(50_000);
        assert_eq!(redact_with(&chain, &[], None), chain);
        let chain = format!("{}token=abc", "b=".repeat(50_000));
        assert!(redact_with(&chain, &[], None).ends_with("b=token=[redacted]"));
        let name = format!("{}token=abc", "a-".repeat(50_000));
        assert_eq!(
            redact_with(&name, &[], None),
            format!("{}token=[redacted]", "a-".repeat(50_000))
        );
    }

    #[test]
    fn a_model_server_error_echoing_the_key_is_redacted() {
        let body = concat!(
            r#"{"error":{"message":"Incorrect API key provided. Request headers: "#,
            r#"{\"Authorization\": \"Bearer sk-live-4f9a1c0b\", \"Content-Type\": \"application/json\"}","#,
            r#""type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        );
        let expected = concat!(
            r#"{"error":{"message":"Incorrect API key provided. Request headers: "#,
            r#"{\"Authorization\": \"Bearer [redacted]\", \"Content-Type\": \"application/json\"}","#,
            r#""type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        );
        assert_eq!(redact_with(body, &[], None), expected);
        let header = "400 Bad Request: \"Authorization: Bearer sk-live-4f9a1c0b\" rejected";
        assert_eq!(
            redact_with(header, &[], None),
            "400 Bad Request: \"Authorization: Bearer [redacted]\" rejected"
        );
    }

    #[test]
    fn registered_secrets_are_replaced_everywhere() {
        #[rustfmt::skip]
        let cases: &[(&[&str], &str, &str)] = &[
            (&["hunter22"], "pw hunter22, again hunter22.", "pw [redacted], again [redacted]."),
            (&["abcdef", "abcdefgh"], "abcdefgh abcdef", "[redacted] [redacted]"),
            (&["ed]abc"], "ed]abcabcabc", "[redact[redact[redacted]"),
            (&["hunter22"], "nothing here", "nothing here"),
        ];
        for &(secrets, text, expected) in cases {
            let mut secrets: Vec<String> = secrets.iter().map(|s| (*s).to_owned()).collect();
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            assert_eq!(redact_with(text, &secrets, None), expected, "{text:?}");
        }
    }

    #[test]
    fn short_and_marker_values_are_not_registered() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<&str>)] = &[
            ("  abcdef\n", Some("abcdef")),
            ("abcde", None),
            (" ab cd ", None),
            ("ééééé", None),
            ("éééééé", Some("éééééé")),
            ("redact", None),
            ("[redacted]", None),
            ("", None),
        ];
        for &(value, expected) in cases {
            assert_eq!(accepted(value), expected, "{value:?}");
        }
    }

    #[test]
    fn register_secret_reaches_redact() {
        register_secret("  toolgate-test-secret-9f2c  ");
        register_secret("1234");
        assert_eq!(
            redact("key=x toolgate-test-secret-9f2c 1234"),
            "key=[redacted] [redacted] 1234"
        );
        assert_eq!(
            fuzz_redact("a tg-extra-secret b", "tg-extra-secret"),
            "a [redacted] b"
        );
        assert_eq!(redact("a tg-extra-secret b"), "a tg-extra-secret b");
    }
}
