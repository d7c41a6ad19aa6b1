//! Response bodies as text a model can read: HTML to Markdown-like text,
//! JSON pretty-printed, text as it is, binary refused.

use std::borrow::Cow;

use super::nesting;

/// How many bytes at the start of a body are searched for a NUL byte when
/// deciding whether it is binary.
const BINARY_SNIFF: usize = 8 * 1024;

/// The width HTML text is wrapped to (wide: the reader is a model, and
/// narrow columns only cost tokens).
const HTML_WIDTH: usize = 120;

/// What a body is, from its `Content-Type` and its first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// HTML or XHTML: converted to text.
    Html,
    /// JSON: pretty-printed.
    Json,
    /// Other text (plain, Markdown, CSV, XML, …): kept as it is.
    Text,
    /// Anything else, named by its media type: refused.
    Binary(String),
}

/// A parsed `Content-Type`: the media type (lower-case) and its charset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ContentType {
    pub(crate) media: String,
    pub(crate) charset: Option<String>,
}

impl ContentType {
    pub(crate) fn parse(header: &str) -> Self {
        let mut parts = header.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let charset = parts.find_map(|p| {
            let (key, value) = p.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_owned())
        });
        Self { media, charset }
    }
}

/// Media types outside `text/*` that are text.
const TEXT_TYPES: &[&str] = &[
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "application/rss+xml",
    "application/atom+xml",
    "image/svg+xml",
];

/// What a body is (see [`BodyKind`]).
///
/// # Rules
///
/// 1. A body with a NUL byte in its first 8 KiB is binary, whatever its
///    `Content-Type` says.
/// 2. `text/html` and `application/xhtml+xml` are HTML; `application/json`,
///    `text/json` and any `+json` type are JSON; `text/*`, any `+xml` type
///    and the types of [`TEXT_TYPES`] are text; every other declared type
///    (images, audio, video, fonts, PDF, archives, `application/octet-stream`)
///    is binary.
/// 3. Without a `Content-Type` the body is sniffed: a document starting with
///    `<!doctype html` or `<html` is HTML, one that parses as a JSON object
///    or array is JSON, valid UTF-8 is text, anything else binary.
pub(crate) fn kind_of(content_type: Option<&ContentType>, body: &[u8]) -> BodyKind {
    let head = &body[..body.len().min(BINARY_SNIFF)];
    let media = content_type.map(|c| c.media.as_str()).unwrap_or_default();
    if head.contains(&0) {
        let named = if media.is_empty() {
            "unknown type"
        } else {
            media
        };
        return BodyKind::Binary(named.to_owned());
    }
    if media.is_empty() {
        return sniff(body);
    }
    if media == "text/html" || media == "application/xhtml+xml" {
        BodyKind::Html
    } else if media == "application/json" || media == "text/json" || media.ends_with("+json") {
        BodyKind::Json
    } else if media.starts_with("text/") || media.ends_with("+xml") || TEXT_TYPES.contains(&media) {
        BodyKind::Text
    } else {
        BodyKind::Binary(media.to_owned())
    }
}

fn sniff(body: &[u8]) -> BodyKind {
    let start = body
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(body)
        .trim_ascii_start();
    let lower: Vec<u8> = start.iter().take(16).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        return BodyKind::Html;
    }
    if matches!(start.first(), Some(b'{' | b'['))
        && serde_json::from_slice::<serde_json::Value>(body).is_ok()
    {
        return BodyKind::Json;
    }
    if std::str::from_utf8(body).is_ok() {
        BodyKind::Text
    } else {
        BodyKind::Binary("unknown type".to_owned())
    }
}

/// Decodes a body with its declared charset (UTF-8 when none is declared
/// or the label is unknown), replacing malformed sequences. A BOM wins over
/// the label, as in browsers.
pub(crate) fn decode(body: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// HTML as readable text: headings, lists, emphasis and tables kept in a
/// Markdown-like form, links numbered with their targets listed at the
/// end, scripts and styles dropped. A page nested deeper than any real one
/// is flattened first (see [`nesting`]), which keeps its text but not its
/// structure.
pub(crate) fn html_to_text(html: &str) -> Result<String, String> {
    let flat;
    let html = if nesting::measure(html).too_deep() {
        flat = nesting::flatten(html);
        &flat
    } else {
        html
    };
    html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), HTML_WIDTH)
        .map(|text| tidy(&text))
        .map_err(|e| format!("the page's HTML could not be converted to text ({e})"))
}

/// The text of the page's `<title>`, if it has one.
pub(crate) fn html_title(html: &str) -> Option<String> {
    let head = &html[..floor_char_boundary(html, 64 * 1024)];
    let lower = head.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = fragment_text(&head[start..end], 300);
    (!title.is_empty()).then_some(title)
}

/// An HTML fragment (a search result's title or snippet, with `<strong>`
/// and entities) as one line of plain text, at most `max_chars` long.
pub(crate) fn fragment_text(html: &str, max_chars: usize) -> String {
    // Tags go first (a fragment's `<hr>` or table would be drawn); what is
    // left is text and entities.
    let flat = nesting::flatten(html);
    let text = html2text::config::plain_no_decorate()
        .allow_width_overflow()
        .string_from_read(format!("<p>{flat}</p>").as_bytes(), 200)
        .unwrap_or_else(|_| html.to_owned());
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match truncate_chars(&line, max_chars) {
        (kept, true) => format!("{kept}…"),
        (kept, false) => kept.into_owned(),
    }
}

/// JSON pretty-printed, or the text as it is when it does not parse (a
/// body cut short, say).
pub(crate) fn pretty_json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// Trailing spaces removed from every line, runs of blank lines collapsed
/// to one, and the whole trimmed.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// The largest char boundary of `text` at or before `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// `text` cut to at most `max_chars` characters (at a line end when one
/// is near), and whether it was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> (Cow<'_, str>, bool) {
    let Some((cut, _)) = text.char_indices().nth(max_chars) else {
        return (Cow::Borrowed(text), false);
    };
    // Prefer ending at a line break within the last tenth of the budget.
    let window = text[..cut].len() / 10;
    let end = text[..cut]
        .rfind('\n')
        .filter(|&nl| nl + window >= cut)
        .unwrap_or(cut);
    (Cow::Borrowed(&text[..end]), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let html = b"<!DOCTYPE html><html><body>hi</body></html>";
        // (content type, body, expected)
        let cases: &[(Option<&str>, &[u8], BodyKind)] = &[
            (
                Some("text/html; charset=utf-8"),
                b"<p>x</p>",
                BodyKind::Html,
            ),
            (Some("TEXT/HTML"), b"<p>x</p>", BodyKind::Html),
            (Some("application/xhtml+xml"), b"<p/>", BodyKind::Html),
            (Some("application/json"), b"{}", BodyKind::Json),
            (Some("application/ld+json"), b"{}", BodyKind::Json),
            (Some("application/problem+json"), b"{}", BodyKind::Json),
            (Some("text/plain"), b"hello", BodyKind::Text),
            (Some("text/markdown"), b"# hi", BodyKind::Text),
            (Some("text/csv"), b"a,b", BodyKind::Text),
            (Some("application/xml"), b"<a/>", BodyKind::Text),
            (Some("application/rss+xml"), b"<rss/>", BodyKind::Text),
            (Some("image/svg+xml"), b"<svg/>", BodyKind::Text),
            (
                Some("image/png"),
                b"\x89PNG\r\n",
                BodyKind::Binary("image/png".into()),
            ),
            (
                Some("application/pdf"),
                b"%PDF-1.7",
                BodyKind::Binary("application/pdf".into()),
            ),
            (
                Some("application/octet-stream"),
                b"hello",
                BodyKind::Binary("application/octet-stream".into()),
            ),
            (
                Some("application/zip"),
                b"PK\x03\x04",
                BodyKind::Binary("application/zip".into()),
            ),
            (
                Some("video/mp4"),
                b"....",
                BodyKind::Binary("video/mp4".into()),
            ),
            // Rule 1: a NUL byte makes it binary whatever the header says.
            (
                Some("text/html"),
                b"<p>\0</p>",
                BodyKind::Binary("text/html".into()),
            ),
            (
                Some("text/plain"),
                b"a\0b",
                BodyKind::Binary("text/plain".into()),
            ),
            // Rule 3: sniffed.
            (None, html, BodyKind::Html),
            (None, b"\xef\xbb\xbf  <html><body>x", BodyKind::Html),
            (None, b"{\"a\": 1}", BodyKind::Json),
            (None, b"[1, 2]", BodyKind::Json),
            (None, b"{not json", BodyKind::Text),
            (None, b"plain words", BodyKind::Text),
            (
                None,
                b"\xff\xfe\xfd",
                BodyKind::Binary("unknown type".into()),
            ),
            (None, b"\0\0\0", BodyKind::Binary("unknown type".into())),
        ];
        for (header, body, expected) in cases {
            let content_type = header.map(ContentType::parse);
            assert_eq!(
                kind_of(content_type.as_ref(), body),
                *expected,
                "{header:?} {:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn content_type_and_charset() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("text/html", "text/html", None),
            (
                "text/html; charset=ISO-8859-1",
                "text/html",
                Some("ISO-8859-1"),
            ),
            ("Text/HTML;Charset=\"utf-8\"", "text/html", Some("utf-8")),
            (
                "application/json ; foo=bar; charset=utf-16",
                "application/json",
                Some("utf-16"),
            ),
            ("", "", None),
        ];
        for (header, media, charset) in cases {
            let parsed = ContentType::parse(header);
            assert_eq!(parsed.media, *media, "{header}");
            assert_eq!(parsed.charset.as_deref(), *charset, "{header}");
        }
    }

    #[test]
    fn decoding() {
        let cases: &[(&[u8], Option<&str>, &str)] = &[
            (b"caf\xc3\xa9", None, "café"),
            (b"caf\xc3\xa9", Some("utf-8"), "café"),
            (b"caf\xe9", Some("iso-8859-1"), "café"),
            (b"caf\xe9", Some("windows-1252"), "café"),
            (b"caf\xe9", None, "caf\u{fffd}"),
            (b"caf\xc3\xa9", Some("no-such-charset"), "café"),
            (b"\xef\xbb\xbfcaf\xc3\xa9", Some("iso-8859-1"), "café"),
        ];
        for (bytes, charset, expected) in cases {
            assert_eq!(decode(bytes, *charset), *expected, "{charset:?}");
        }
    }

    #[test]
    fn html_becomes_readable_text() {
        let html = r#"<!doctype html><html><head><title>The  Title &amp; more</title>
            <style>body { color: red }</style><script>alert("x")</script></head>
            <body><h1>Heading</h1><p>Some <b>bold</b> text and a <a href="https://example.com/a">link</a>.</p>
            <ul><li>one</li><li>two</li></ul>
            <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
            </body></html>"#;
        let text = html_to_text(html).unwrap();
        for expected in [
            "# Heading",
            "**bold**",
            "[link][1]",
            "[1]: https://example.com/a",
            "* one",
            "* two",
            "k",
            "a",
        ] {
            assert!(text.contains(expected), "{expected:?} missing in:\n{text}");
        }
        for absent in ["alert", "color: red", "<b>", "<p>"] {
            assert!(!text.contains(absent), "{absent:?} present in:\n{text}");
        }
        assert_eq!(html_title(html).as_deref(), Some("The Title & more"));
        assert_eq!(html_title("<p>no title</p>"), None);
        assert_eq!(
            html_title("<title>A <hr> <table><tr><td>B</table> &lt;C&gt;</title>").as_deref(),
            Some("A B <C>")
        );
    }

    /// A page nested far deeper than any real one converts without
    /// overflowing the stack.
    #[test]
    fn deeply_nested_html_converts() {
        for tag in [
            "div",
            "blockquote",
            "ul><li",
            "table><tr><td",
            "b",
            "span",
            "dl><dd",
        ] {
            let close: String = tag.split('>').rev().fold(String::new(), |mut close, t| {
                close.push_str("</");
                close.push_str(t.trim_start_matches('<'));
                close.push('>');
                close
            });
            let depth = 10_000;
            let html = format!(
                "{}deep{}",
                format!("<{tag}>").repeat(depth),
                close.repeat(depth)
            );
            let text = html_to_text(&html);
            assert!(text.is_ok_and(|t| t.contains("deep")), "{tag}");
        }
    }

    #[test]
    fn json_is_pretty_printed() {
        assert_eq!(
            pretty_json(r#"{"a":[1,2],"b":{"c":null}}"#),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": null\n  }\n}"
        );
        assert_eq!(pretty_json(r#"{"cut": "sho"#), r#"{"cut": "sho"#);
    }

    #[test]
    fn truncation_counts_characters() {
        let cases: &[(&str, usize, &str, bool)] = &[
            ("hello", 10, "hello", false),
            ("hello", 5, "hello", false),
            ("hello", 4, "hell", true),
            ("ééééé", 3, "ééé", true),
            ("", 0, "", false),
            ("abc", 0, "", true),
            // A line break in the last tenth of the budget is preferred.
            ("0123456789abcdefgh\nij", 20, "0123456789abcdefgh", true),
            ("0123456789abcdefghij\nxy", 21, "0123456789abcdefghij", true),
            // One far earlier is not.
            (
                "a\nbcdefghijklmnopqrstuvwxyz",
                20,
                "a\nbcdefghijklmnopqrs",
                true,
            ),
        ];
        for (text, max, expected, cut) in cases {
            let (got, was_cut) = truncate_chars(text, *max);
            assert_eq!((got.as_ref(), was_cut), (*expected, *cut), "{text:?} {max}");
        }
    }
}
