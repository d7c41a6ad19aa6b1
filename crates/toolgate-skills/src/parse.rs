//! The SKILL.md format: frontmatter parsing, validation and rendering.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use crate::error::{NameRule, Problem, SkillError, SkillWarning};

/// The longest skill name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility`, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The largest SKILL.md read, in bytes (256 KiB). The format recommends
/// bodies under 500 lines; this only stops a runaway file.
pub const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// The name of the file that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The keys the format defines. Any other key is a warning.
const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// A parsed and validated SKILL.md.
///
/// # Rules
///
/// 1. The file may start with a UTF-8 byte-order mark; line ends may be
///    `\n`, `\r\n` or `\r`. Line numbers count lines as an editor does.
/// 2. The first line is `---`; the frontmatter runs to the next line that
///    is `---` (trailing spaces allowed on both); everything after is the
///    body, with leading blank lines and trailing whitespace removed.
/// 3. The frontmatter is YAML and a mapping (empty frontmatter is an empty
///    mapping).
/// 4. `name` is required: a string of 1 to 64 lowercase ASCII letters,
///    digits and hyphens, neither first nor last a hyphen, no `--`
///    ([`validate_name`]). [`parse`](Self::parse) also requires it to be
///    the name of the directory holding the file.
/// 5. `description` is required: a string of 1 to 1024 characters, not
///    only whitespace.
/// 6. `license` is an optional string; `compatibility` an optional string
///    of at most 500 characters. Empty means absent.
/// 7. `metadata` is an optional mapping. Keys and values must be strings,
///    but numbers and booleans are taken as written in their canonical
///    form (`version: 1.0` is `"1.0"`), because real skills write them
///    unquoted; a null value is the empty string.
/// 8. `allowed-tools` is an optional string of tool names separated by
///    whitespace, or a list of such strings; duplicates are dropped.
/// 9. A key may be null (`license:`), which means absent — except `name`
///    and `description`, which are then empty (rule 4, 5).
/// 10. Any other key is kept out of the result and reported as a
///     [`SkillWarning`].
///
/// An error's line is the line of the offending key when there is one,
/// the line of the opening `---` for a missing key or a frontmatter that
/// is not a mapping, the line of the second occurrence for a key written
/// twice, and for any other YAML error the line the parser reports,
/// counted from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file it was parsed from (for a download, its URL).
    pub path: PathBuf,
    /// The skill's name.
    pub name: String,
    /// What the skill is for and when to use it.
    pub description: String,
    /// The license, if the skill names one.
    pub license: Option<String>,
    /// What the skill needs from its environment, if it says.
    pub compatibility: Option<String>,
    /// Free-form key-value pairs.
    pub metadata: BTreeMap<String, String>,
    /// Tools the skill's instructions use, in the order written.
    pub allowed_tools: Vec<String>,
    /// The Markdown instructions after the frontmatter.
    pub body: String,
    /// Keys this version does not know, and other oddities.
    pub warnings: Vec<SkillWarning>,
}

impl SkillFile {
    /// Parses the text of the SKILL.md at `path`, checking that its name is
    /// the name of the directory holding `path`.
    ///
    /// `path` is only used for messages and for that check; nothing is
    /// read. A `path` with no directory (`SKILL.md`) skips the check.
    pub fn parse(path: &Path, text: &str) -> Result<Self, SkillError> {
        let dir = path
            .parent()
            .and_then(Path::file_name)
            .map(|name| name.to_string_lossy());
        parse(path, text, dir.as_deref())
    }

    /// Parses a SKILL.md that is not in its skill directory yet (a
    /// download, a file about to be installed): every rule but the
    /// directory name is checked. `source` names it in messages.
    pub fn parse_unplaced(source: &Path, text: &str) -> Result<Self, SkillError> {
        parse(source, text, None)
    }

    /// Reads and parses the SKILL.md at `path` (see [`parse`](Self::parse)).
    /// Refuses anything but a regular file of at most
    /// [`MAX_SKILL_FILE_BYTES`], and text that is not UTF-8.
    pub fn read(path: &Path) -> Result<Self, SkillError> {
        let text = read_text(path)?;
        Self::parse(path, &text)
    }

    /// Reads a SKILL.md not in its skill directory (see
    /// [`parse_unplaced`](Self::parse_unplaced)).
    pub fn read_unplaced(path: &Path) -> Result<Self, SkillError> {
        let text = read_text(path)?;
        Self::parse_unplaced(path, &text)
    }

    /// The SKILL.md text for this skill: frontmatter (every string quoted,
    /// except a name, which needs no quotes) and body. Parsing it gives back
    /// the same name, description, license, compatibility, metadata,
    /// allowed tools and body.
    pub fn render(&self) -> String {
        let mut out = String::from("---\n");
        let _ = writeln!(out, "name: {}", yaml_string(&self.name));
        let _ = writeln!(out, "description: {}", yaml_string(&self.description));
        if let Some(license) = &self.license {
            let _ = writeln!(out, "license: {}", yaml_string(license));
        }
        if let Some(compatibility) = &self.compatibility {
            let _ = writeln!(out, "compatibility: {}", yaml_string(compatibility));
        }
        if !self.metadata.is_empty() {
            out.push_str("metadata:\n");
            for (key, value) in &self.metadata {
                let _ = writeln!(out, "  {}: {}", yaml_string(key), yaml_string(value));
            }
        }
        if !self.allowed_tools.is_empty() {
            let tools = self.allowed_tools.join(" ");
            let _ = writeln!(out, "allowed-tools: {}", yaml_string(&tools));
        }
        out.push_str("---\n");
        if !self.body.is_empty() {
            out.push('\n');
            out.push_str(&self.body);
            out.push('\n');
        }
        out
    }
}

/// Checks a skill name against the format's rules, in the order of
/// [`NameRule`].
///
/// ```
/// use toolgate_skills::{NameRule, validate_name};
///
/// assert_eq!(validate_name("pdf-forms"), Ok(()));
/// assert_eq!(validate_name("PDF"), Err(NameRule::Characters));
/// assert_eq!(validate_name("-pdf"), Err(NameRule::EdgeHyphen));
/// assert_eq!(validate_name("pdf--forms"), Err(NameRule::DoubleHyphen));
/// ```
pub fn validate_name(name: &str) -> Result<(), NameRule> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(NameRule::Length);
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(NameRule::Characters);
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(NameRule::EdgeHyphen);
    }
    if name.contains("--") {
        return Err(NameRule::DoubleHyphen);
    }
    Ok(())
}

/// Reads a SKILL.md as UTF-8 text, within the size limit.
fn read_text(path: &Path) -> Result<String, SkillError> {
    let meta = fs::metadata(path).map_err(|e| SkillError::io("read", path, e))?;
    if !meta.is_file() {
        return Err(SkillError::io(
            "read",
            path,
            std::io::Error::other("not a regular file"),
        ));
    }
    let too_large = |size| SkillError::TooLarge {
        file: path.to_owned(),
        size,
        max: MAX_SKILL_FILE_BYTES,
    };
    if meta.len() > MAX_SKILL_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let file = fs::File::open(path).map_err(|e| SkillError::io("read", path, e))?;
    // The file may have grown since the size was read: never read more
    // than one byte past the limit.
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkillError::io("read", path, e))?;
    if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        SkillError::Invalid {
            file: path.to_owned(),
            line: 1 + line_breaks(good),
            problem: Problem::NotUtf8,
        }
    })
}

/// Line breaks in `bytes`, counted as rule 1 counts them (`\r\n` once).
fn line_breaks(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut previous = 0u8;
    for &b in bytes {
        if b == b'\n' && previous != b'\r' || b == b'\r' {
            count += 1;
        }
        previous = b;
    }
    count
}

/// The frontmatter and body of a SKILL.md, split at the `---` lines.
struct Split<'t> {
    /// The lines between the `---` lines, each without its `\n`.
    front_lines: Vec<&'t str>,
    /// The frontmatter text as YAML sees it.
    front: &'t str,
    /// The body as written.
    body: &'t str,
}

/// The 1-based file line of the opening `---` (rule 2: always the first).
const OPEN_LINE: usize = 1;

fn split<'t>(
    text: &'t str,
    fail: &dyn Fn(usize, Problem) -> SkillError,
) -> Result<Split<'t>, SkillError> {
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or("");
    if !is_delimiter(opening) {
        return Err(fail(OPEN_LINE, Problem::NoFrontmatter));
    }
    let front_start = opening.len();
    let mut offset = front_start;
    let mut front_lines = Vec::new();
    for line in lines {
        if is_delimiter(line) {
            return Ok(Split {
                front_lines,
                front: &text[front_start..offset],
                body: &text[offset + line.len()..],
            });
        }
        front_lines.push(line.strip_suffix('\n').unwrap_or(line));
        offset += line.len();
    }
    Err(fail(OPEN_LINE, Problem::Unterminated))
}

/// Whether a line (with or without its `\n`) is `---`, trailing spaces allowed.
fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches(['\n', ' ', '\t']) == "---"
}

fn parse(path: &Path, text: &str, dir: Option<&str>) -> Result<SkillFile, SkillError> {
    let fail = |line, problem| SkillError::Invalid {
        file: path.to_owned(),
        line,
        problem,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Rule 1: one kind of line end, so that the line numbers here, YAML's
    // and an editor's agree.
    let text: Cow<'_, str> = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let parts = split(&text, &fail)?;
    // The file line of a frontmatter line (0-based within the frontmatter).
    let file_line = |front_index: usize| OPEN_LINE + 1 + front_index;
    let last_front_line = file_line(parts.front_lines.len());
    let key_line = |key: &str| {
        parts
            .front_lines
            .iter()
            .position(|line| is_key_line(line, key))
            .map_or(OPEN_LINE, file_line)
    };
    let value: Value = serde_yaml_ng::from_str(parts.front).map_err(|error| {
        let message = without_position(&error.to_string());
        // YAML's lines are 1-based within the frontmatter; an error at the
        // very end points at the closing `---`. A duplicate key is reported
        // at the mapping it is in: the second occurrence says more.
        let line = duplicated_key(&message)
            .and_then(|key| {
                parts
                    .front_lines
                    .iter()
                    .enumerate()
                    .filter(|(_, line)| is_key_line(line, key))
                    .nth(1)
                    .map(|(index, _)| file_line(index))
            })
            .or_else(|| {
                let at = error.location()?;
                Some(file_line(at.line().saturating_sub(1)))
            })
            .unwrap_or(OPEN_LINE)
            .clamp(OPEN_LINE, last_front_line);
        fail(line, Problem::Yaml { message })
    })?;
    let mapping = match value {
        Value::Mapping(mapping) => mapping,
        Value::Null => serde_yaml_ng::Mapping::new(),
        other => {
            return Err(fail(
                OPEN_LINE,
                Problem::NotMapping {
                    found: kind(&other),
                },
            ));
        }
    };

    let mut warnings = Vec::new();
    for key in mapping.keys() {
        match key {
            Value::String(key) if KNOWN_KEYS.contains(&key.as_str()) => {}
            Value::String(key) => warnings.push(SkillWarning {
                file: path.to_owned(),
                line: key_line(key),
                message: format!("unknown key `{key}` is ignored"),
            }),
            other => warnings.push(SkillWarning {
                file: path.to_owned(),
                line: OPEN_LINE,
                message: format!("a key that is {} is ignored", kind(other)),
            }),
        }
    }

    let wrong_type = |key: &str, expected, found: &Value| {
        fail(
            key_line(key),
            Problem::WrongType {
                key: key.to_owned(),
                expected,
                found: kind(found),
            },
        )
    };
    let required = |key: &'static str| -> Result<String, SkillError> {
        match mapping.get(key) {
            None => Err(fail(OPEN_LINE, Problem::Missing { key })),
            Some(Value::Null) => Err(fail(key_line(key), Problem::Empty { key })),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(fail(key_line(key), Problem::Empty { key }))
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(wrong_type(key, "a string", other)),
        }
    };
    let optional = |key: &'static str| -> Result<Option<String>, SkillError> {
        match mapping.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(wrong_type(key, "a string", other)),
        }
    };
    let too_long = |key: &'static str, value: &str, max: usize| {
        let chars = value.chars().count();
        if chars > max {
            Err(fail(key_line(key), Problem::TooLong { key, chars, max }))
        } else {
            Ok(())
        }
    };

    let name = required("name")?;
    if let Err(rule) = validate_name(&name) {
        return Err(fail(key_line("name"), Problem::InvalidName { name, rule }));
    }
    if let Some(dir) = dir
        && dir != name
    {
        return Err(fail(
            key_line("name"),
            Problem::NameMismatch {
                name,
                dir: dir.to_owned(),
            },
        ));
    }
    let description = required("description")?;
    too_long("description", &description, MAX_DESCRIPTION_CHARS)?;
    let license = optional("license")?;
    let compatibility = optional("compatibility")?;
    if let Some(compatibility) = &compatibility {
        too_long("compatibility", compatibility, MAX_COMPATIBILITY_CHARS)?;
    }

    let mut metadata = BTreeMap::new();
    match mapping.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Mapping(entries)) => {
            for (key, value) in entries {
                let key = scalar_text(key)
                    .ok_or_else(|| wrong_type("metadata", "a mapping with string keys", key))?;
                let value = match value {
                    Value::Null => String::new(),
                    other => scalar_text(other).ok_or_else(|| {
                        fail(
                            key_line("metadata"),
                            Problem::WrongType {
                                key: format!("metadata.{key}"),
                                expected: "a string",
                                found: kind(other),
                            },
                        )
                    })?,
                };
                metadata.insert(key, value);
            }
        }
        Some(other) => return Err(wrong_type("metadata", "a mapping of strings", other)),
    }

    let mut allowed_tools: Vec<String> = Vec::new();
    let mut add_tools = |text: &str| {
        for tool in text.split_whitespace() {
            if !allowed_tools.iter().any(|t| t == tool) {
                allowed_tools.push(tool.to_owned());
            }
        }
    };
    match mapping.get("allowed-tools") {
        None | Some(Value::Null) => {}
        Some(Value::String(tools)) => add_tools(tools),
        Some(Value::Sequence(items)) => {
            for item in items {
                match item {
                    Value::String(tools) => add_tools(tools),
                    other => {
                        return Err(wrong_type("allowed-tools", "a list of tool names", other));
                    }
                }
            }
        }
        Some(other) => {
            return Err(wrong_type(
                "allowed-tools",
                "tool names separated by spaces, or a list of them",
                other,
            ));
        }
    }

    Ok(SkillFile {
        path: path.to_owned(),
        name,
        description,
        license,
        compatibility,
        metadata,
        allowed_tools,
        body: trim_body(parts.body).to_owned(),
        warnings,
    })
}

/// The key of `serde_yaml_ng`'s `duplicate entry with key "KEY"` message.
fn duplicated_key(message: &str) -> Option<&str> {
    message
        .strip_prefix("duplicate entry with key \"")?
        .strip_suffix('"')
}

/// Whether a frontmatter line starts the top-level key `key` (plain or
/// quoted). A line number is all it is used for: the YAML parser, not this,
/// decides what the frontmatter means.
fn is_key_line(line: &str, key: &str) -> bool {
    let rest = ["", "\"", "'"].iter().find_map(|quote| {
        let rest = line.strip_prefix(quote)?.strip_prefix(key)?;
        rest.strip_prefix(quote)
    });
    rest.is_some_and(|rest| rest.trim_start_matches([' ', '\t']).starts_with(':'))
}

/// The body without leading blank lines and trailing whitespace.
fn trim_body(body: &str) -> &str {
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        if !line.trim().is_empty() {
            break;
        }
        start += line.len();
    }
    body[start..].trim_end()
}

/// The text of a scalar that rule 7 takes as a string.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// What a YAML value is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A YAML error message without the ` at line L column C` and
/// ` at position N` parts: they count from the start of the frontmatter,
/// and the error's own line counts from the start of the file.
fn without_position(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" at ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " at ".len()..];
        if let Some(remaining) = skip_position(after) {
            rest = remaining;
        } else {
            out.push_str(" at ");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// After ` at `: the text past `line L column C` or `position N`, if that
/// is what comes next.
fn skip_position(text: &str) -> Option<&str> {
    fn number(text: &str) -> Option<&str> {
        let rest = text.trim_start_matches(|c: char| c.is_ascii_digit());
        (rest.len() < text.len()).then_some(rest)
    }
    if let Some(rest) = text.strip_prefix("line ") {
        return number(number(rest)?.strip_prefix(" column ")?);
    }
    number(text.strip_prefix("position ")?)
}

/// `text` as a YAML scalar: plain when it is a name (letters first, so
/// never a number, and no word YAML reads as null or a boolean), else
/// double-quoted on one line, with everything a YAML reader could take as
/// a line break or refuse as unprintable escaped.
fn yaml_string(text: &str) -> String {
    const RESERVED: &[&str] = &["null", "true", "false", "yes", "no", "on", "off", "y", "n"];
    if validate_name(text).is_ok()
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && !RESERVED.contains(&text)
    {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            ' '..='~' | '\u{a0}'..='\u{2027}' | '\u{202a}'..='\u{d7ff}' => out.push(c),
            '\u{e000}'..='\u{fffd}' if c != '\u{feff}' => out.push(c),
            c if u32::from(c) > 0xffff => out.push(c),
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_removed_from_yaml_messages() {
        let cases = [
            (
                "mapping values are not allowed in this context at line 2 column 8",
                "mapping values are not allowed in this context",
            ),
            (
                "did not find expected key at line 3 column 1, while parsing a block mapping at line 1 column 1",
                "did not find expected key, while parsing a block mapping",
            ),
            ("unknown anchor at position 12", "unknown anchor"),
            ("look at this", "look at this"),
            ("ends at ", "ends at "),
            ("at line 5", "at line 5"),
        ];
        for (input, expected) in cases {
            assert_eq!(without_position(input), expected, "{input}");
        }
    }

    #[test]
    fn key_lines() {
        let cases = [
            ("name: x", "name", true),
            ("name : x", "name", true),
            ("\"name\": x", "name", true),
            ("'name':x", "name", true),
            ("  name: x", "name", false),
            ("names: x", "name", false),
            ("# name: x", "name", false),
            ("\"name': x", "name", false),
        ];
        for (line, key, expected) in cases {
            assert_eq!(is_key_line(line, key), expected, "{line}");
        }
    }

    #[test]
    fn strings_come_back_from_yaml() {
        for text in [
            "pdf",
            "null",
            "yes",
            "1-2",
            "a: b # c",
            "- x",
            "\"quoted\" and \\back",
            "line\nbreak\r\n",
            "tab\there",
            "\u{85}\u{2028}\u{2029}\u{feff}\u{7f}\u{1}",
            "emoji 🦀 and ünïcode",
            "---",
            "",
            " leading and trailing ",
            "nan",
            "inf",
            "infinity",
            "on",
            "off",
            "y",
            "n",
            "true",
            "1e3",
            "0x1f",
            "0o17",
        ] {
            let yaml = format!("k: {}", yaml_string(text));
            assert!(!yaml.contains('\n'), "{yaml}");
            let back: Value = serde_yaml_ng::from_str(&yaml).unwrap();
            assert_eq!(back["k"], Value::String(text.to_owned()), "{yaml}");
        }
        assert_eq!(yaml_string("pdf-forms"), "pdf-forms");
        assert_eq!(yaml_string("yes"), "\"yes\"");
    }

    #[test]
    fn line_breaks_are_counted_like_an_editor() {
        assert_eq!(line_breaks(b"a\nb\r\nc\rd"), 3);
        assert_eq!(line_breaks(b""), 0);
        assert_eq!(line_breaks(b"\r\n\r\n"), 2);
    }
}
