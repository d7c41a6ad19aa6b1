//! A guard against HTML nested deep enough to make conversion slow or huge.
//!
//! A spec-following HTML parser (html5ever, under `html2text`) checks the
//! stack of open elements for most start tags, so parsing takes time
//! proportional to tags × depth: 20,000 nested `<div>`s took seconds, and a
//! 2 MiB page of them would take minutes of CPU. And the text renderer
//! indents each nested quote, list and table, so 500 nested `<blockquote>`s
//! around many short paragraphs would turn 2 MiB of HTML into hundreds of
//! MiB of indentation. No real page nests more than a few hundred elements
//! or a few dozen quotes and lists. [`measure`] gauges both with a linear
//! scan; a page deeper than [`MAX_DEPTH`] or [`MAX_INDENT`] is [`flatten`]ed
//! (tags dropped, block boundaries kept as line breaks) before conversion,
//! so its text still comes through.

use memchr::memchr;

/// The deepest nesting converted as it is.
pub(crate) const MAX_DEPTH: usize = 512;

/// The deepest nesting of indenting elements ([`INDENTING`]) converted as
/// it is.
pub(crate) const MAX_INDENT: usize = 32;

/// Elements the text renderer indents or lays out within their parent.
const INDENTING: &[&str] = &["blockquote", "dd", "dl", "ol", "ul", "table", "menu", "dir"];

/// Elements that never have content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "basefont", "bgsound", "frame",
];

/// Elements whose content is raw text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Elements that end a paragraph (`<p>` has an optional end tag).
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "dialog",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
];

/// Elements that start a new line when a page is flattened.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
    "ul",
];

/// One markup item found by [`Scanner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item<'a> {
    /// `<name …>`; `self_closing` for `<name …/>`.
    Start { name: &'a str, self_closing: bool },
    /// `</name …>`.
    End { name: &'a str },
    /// A comment, doctype, processing instruction, or a raw-text
    /// element's content: no element.
    Other,
}

/// A linear scan over the tags of an HTML text: every byte is looked at a
/// bounded number of times, whatever the markup.
struct Scanner<'a> {
    html: &'a str,
    at: usize,
    /// The raw-text element whose end tag is looked for next.
    raw: Option<&'a str>,
}

impl<'a> Scanner<'a> {
    fn new(html: &'a str) -> Self {
        Self {
            html,
            at: 0,
            raw: None,
        }
    }

    /// The next item and the byte range of the text before it and of the
    /// item itself.
    fn next_item(&mut self) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>, Item<'a>)> {
        let bytes = self.html.as_bytes();
        let text_start = self.at;
        if let Some(raw) = self.raw.take() {
            // Raw text ends at `</raw`, in any case.
            let mut i = self.at;
            while let Some(offset) = memchr(b'<', &bytes[i..]) {
                let lt = i + offset;
                let after = lt + 2 + raw.len();
                if bytes.get(lt + 1) == Some(&b'/')
                    && after <= bytes.len()
                    && bytes[lt + 2..after].eq_ignore_ascii_case(raw.as_bytes())
                {
                    self.at = lt;
                    return Some((text_start..text_start, text_start..lt, Item::Other));
                }
                i = lt + 1;
            }
            self.at = bytes.len();
            return Some((text_start..text_start, text_start..bytes.len(), Item::Other));
        }
        let mut i = self.at;
        loop {
            let lt = i + memchr(b'<', &bytes[i..])?;
            let rest = &bytes[lt..];
            let (end, item) = if rest.starts_with(b"<!--") {
                let close = find(&bytes[lt + 4..], b"-->").map_or(bytes.len(), |o| lt + 4 + o + 3);
                (close, Item::Other)
            } else if matches!(rest.get(1), Some(b'!' | b'?')) {
                let close = memchr(b'>', &rest[1..]).map_or(bytes.len(), |o| lt + 1 + o + 1);
                (close, Item::Other)
            } else if rest.get(1) == Some(&b'/') && rest.get(2).is_some_and(u8::is_ascii_alphabetic)
            {
                let name_end = lt + 2 + name_len(&rest[2..]);
                let close =
                    memchr(b'>', &bytes[name_end..]).map_or(bytes.len(), |o| name_end + o + 1);
                (
                    close,
                    Item::End {
                        name: &self.html[lt + 2..name_end],
                    },
                )
            } else if rest.get(1).is_some_and(u8::is_ascii_alphabetic) {
                let name_end = lt + 1 + name_len(&rest[1..]);
                let close = tag_end(bytes, name_end);
                let self_closing =
                    close >= 2 && bytes[close - 1] == b'>' && bytes[close - 2] == b'/';
                let name = &self.html[lt + 1..name_end];
                if RAW_TEXT.iter().any(|r| r.eq_ignore_ascii_case(name)) {
                    self.raw = Some(name);
                }
                (close, Item::Start { name, self_closing })
            } else {
                i = lt + 1;
                continue;
            };
            self.at = end;
            return Some((text_start..lt, lt..end, item));
        }
    }
}

/// The length of the tag name at the start of `bytes`.
fn name_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':')))
        .unwrap_or(bytes.len())
}

/// Where a start tag whose name ends at `from` ends (after its `>`),
/// skipping quoted attribute values.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'>' => return i + 1,
            quote @ (b'"' | b'\'') if i > 0 && bytes[i - 1] == b'=' => {
                i = memchr(quote, &bytes[i + 1..]).map_or(bytes.len(), |o| i + 1 + o + 1);
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

fn is(list: &[&str], name: &str) -> bool {
    list.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Whether a start tag `new` ends the open element `open` (optional end
/// tags, as the HTML parser closes them).
fn implicitly_closes(open: &str, new: &str) -> bool {
    let pair = |a: &[&str], b: &[&str]| is(a, open) && is(b, new);
    pair(&["p"], CLOSES_P)
        || pair(&["li"], &["li"])
        || pair(&["dt", "dd"], &["dt", "dd"])
        || pair(&["option"], &["option", "optgroup"])
        || pair(
            &["td", "th"],
            &["td", "th", "tr", "tbody", "thead", "tfoot"],
        )
        || pair(&["tr"], &["tr", "tbody", "thead", "tfoot"])
        || pair(&["thead", "tbody", "tfoot"], &["thead", "tbody", "tfoot"])
        || pair(&["rb", "rt", "rp", "rtc"], &["rb", "rt", "rp", "rtc"])
}

/// How deep a page nests, at most.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// Open elements.
    pub(crate) depth: usize,
    /// Open [`INDENTING`] elements.
    pub(crate) indent: usize,
}

impl Nesting {
    /// Whether the page is to be flattened before conversion.
    pub(crate) fn too_deep(self) -> bool {
        self.depth > MAX_DEPTH || self.indent > MAX_INDENT
    }
}

/// How deep `html` nests, at most: end tags close only the element on top
/// (a stray end tag closes nothing, as in a parser), and optional end tags
/// are implied where the parser implies them. Linear time.
pub(crate) fn measure(html: &str) -> Nesting {
    let mut open: Vec<&str> = Vec::new();
    let mut indent = 0;
    let mut deepest = Nesting::default();
    let pop = |open: &mut Vec<&str>, indent: &mut usize| {
        if open.pop().is_some_and(|name| is(INDENTING, name)) {
            *indent -= 1;
        }
    };
    let mut scanner = Scanner::new(html);
    while let Some((_, _, item)) = scanner.next_item() {
        match item {
            Item::Start { name, self_closing } => {
                if self_closing || is(VOID, name) {
                    continue;
                }
                while open.last().is_some_and(|top| implicitly_closes(top, name)) {
                    pop(&mut open, &mut indent);
                }
                open.push(name);
                if is(INDENTING, name) {
                    indent += 1;
                }
                deepest.depth = deepest.depth.max(open.len());
                deepest.indent = deepest.indent.max(indent);
            }
            Item::End { name } => {
                if open
                    .last()
                    .is_some_and(|top| top.eq_ignore_ascii_case(name))
                {
                    pop(&mut open, &mut indent);
                }
            }
            Item::Other => {}
        }
    }
    deepest
}

/// `html` without its tags: text and entities kept, block elements as
/// `<br>`, scripts, styles and comments dropped. Linear time, and the
/// result does not nest at all.
pub(crate) fn flatten(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut scanner = Scanner::new(html);
    let mut last = 0;
    // A raw-text element's content comes as an `Other` item of its own,
    // after its start tag: like comments, it is not copied.
    while let Some((text, tag, item)) = scanner.next_item() {
        out.push_str(&html[text]);
        last = tag.end;
        match item {
            Item::Start { name, .. } | Item::End { name } if is(BLOCK, name) => {
                out.push_str("<br>");
            }
            Item::Start { .. } | Item::End { .. } | Item::Other => {}
        }
    }
    out.push_str(&html[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_estimates() {
        let cases: &[(&str, usize)] = &[
            ("plain", 0),
            ("<p>one<p>two<p>three", 1),
            ("<div><p>a</p><p>b</p></div>", 2),
            ("<ul><li>a<li>b<li>c</ul>", 2),
            ("<table><tr><td>a<td>b<tr><td>c</table>", 3),
            ("<dl><dt>a<dd>b<dt>c<dd>d</dl>", 2),
            ("<select><option>a<option>b</select>", 2),
            ("<br><img src=x><hr><input>", 0),
            ("<div/><span/>", 0),
            ("<DIV><div></DIV></div>", 2),
            ("<div></span><div></span><div>", 3),
            ("<script>for(i=0;i<9;i++){'<div>'}</script>", 1),
            ("<SCRIPT>'<div><div>'</script ><div>", 1),
            ("<style>a<b{}</style>", 1),
            ("<!-- <div><div> --><div>", 1),
            ("<a title='x>y'><b>t</b></a>", 2),
            ("<a title=\"<div>\">t</a>", 1),
            ("a < b and c<d", 1),
            ("<", 0),
            ("<div", 1),
            ("<!doctype html><html><body><div>x</div></body></html>", 3),
        ];
        for (html, depth) in cases {
            assert_eq!(measure(html).depth, *depth, "{html}");
        }
        let depth = |html: &str| measure(html).depth;
        assert_eq!(depth(&"<div>".repeat(100_000)), 100_000);
        assert_eq!(depth(&"<div></x>".repeat(1000)), 1000);
        assert_eq!(depth(&"<li>x".repeat(100_000)), 1);
        assert_eq!(depth(&"<div>x</div>".repeat(100_000)), 1);
    }

    #[test]
    fn indent_estimates() {
        // (html, depth, indent, flattened)
        let cases: &[(&str, usize, usize, bool)] = &[
            ("<blockquote><p>q</p></blockquote>", 2, 1, false),
            ("<ul><li><ul><li>x</ul></ul>", 4, 2, false),
            (
                "<table><tr><td><table><tr><td>x</table></table>",
                6,
                2,
                false,
            ),
            (
                "<div><blockquote>a</blockquote><blockquote>b</blockquote></div>",
                2,
                1,
                false,
            ),
        ];
        for (html, depth, indent, flat) in cases {
            let nesting = measure(html);
            assert_eq!(
                (nesting.depth, nesting.indent, nesting.too_deep()),
                (*depth, *indent, *flat),
                "{html}"
            );
        }
        let quotes = |n: usize| format!("{}<p>x</p>", "<blockquote>".repeat(n));
        assert!(!measure(&quotes(MAX_INDENT)).too_deep());
        assert!(measure(&quotes(MAX_INDENT + 1)).too_deep());
        let divs = |n: usize| "<div>".repeat(n);
        assert!(!measure(&divs(MAX_DEPTH)).too_deep());
        assert!(measure(&divs(MAX_DEPTH + 1)).too_deep());
    }

    #[test]
    fn flattening_keeps_the_text() {
        let cases: &[(&str, &str)] = &[
            ("plain &amp; simple", "plain &amp; simple"),
            ("<div><b>bold</b> text</div>", "<br>bold text<br>"),
            ("he<i>ll</i>o", "hello"),
            ("<p>a<p>b", "<br>a<br>b"),
            ("x<script>alert('<div>')</script>y", "xy"),
            ("x<STYLE>p{}</Style>y", "xy"),
            ("x<!-- c -->y", "xy"),
            ("x<title>T</title>y", "xy"),
            ("a < b", "a < b"),
            ("<div", "<br>"),
        ];
        for (html, flat) in cases {
            assert_eq!(flatten(html), *flat, "{html}");
        }
    }
}
