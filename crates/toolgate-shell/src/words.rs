//! Shell words: what a program receives once quotes are removed.

use brush_parser::ParserOptions;
use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

use crate::model::Origin;
use crate::parse::{ParseError, guarded};

const QUOTED: u8 = 1;
const EXPANSION: u8 = 1 << 1;
const SUBSTITUTION: u8 = 1 << 2;
const GLOB: u8 = 1 << 3;
const TILDE: u8 = 1 << 4;
const ARITHMETIC: u8 = 1 << 5;

/// One shell word, as far as its value can be known without running anything.
///
/// [`text`](Self::text) is the word with quotes removed and escapes applied:
/// `'rm -rf /'` becomes `rm -rf /`, `"a b"c` becomes `a bc`, `$'\x41'`
/// becomes `A`. Quoted text is data, never syntax. Expansions (`$HOME`,
/// `${x:-y}`, `~`, `$((1+1))`) and substitutions (`$(cmd)`, `` `cmd` ``,
/// `<(cmd)`) cannot be resolved statically: they stay in the text in their
/// source spelling and the matching flag is set, so a caller can tell `$HOME`
/// (expanded at run time) from `'$HOME'` (five literal characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Word {
    raw: String,
    text: String,
    flags: u8,
}

impl Word {
    /// A word with no quoting or expansion: its text is its raw spelling.
    pub fn literal(s: &str) -> Self {
        Self {
            raw: s.to_owned(),
            text: s.to_owned(),
            flags: 0,
        }
    }

    /// A word standing for a process substitution such as `<(ls)`.
    pub fn process_substitution(raw: String) -> Self {
        Self {
            text: raw.clone(),
            raw,
            flags: SUBSTITUTION,
        }
    }

    /// The same word, marked as holding an expansion.
    #[must_use]
    pub fn with_expansion(mut self) -> Self {
        self.flags |= EXPANSION;
        self
    }

    /// The same word, marked as evaluating a variable's value as
    /// arithmetic (see [`evaluates_variables`](Self::evaluates_variables)).
    #[must_use]
    pub fn with_arithmetic(mut self) -> Self {
        self.flags |= ARITHMETIC | EXPANSION;
        self
    }

    /// The word as written in the command, quotes included.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The word with quotes removed and escapes applied; expansions and
    /// substitutions are left in their source spelling.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether any part of the word was quoted or escaped.
    pub fn is_quoted(&self) -> bool {
        self.flags & QUOTED != 0
    }

    /// Whether the word holds a parameter, tilde or arithmetic expansion
    /// (`$HOME`, `${x}`, `~`, `$((1+2))`), so its value is only known at run
    /// time.
    pub fn has_expansion(&self) -> bool {
        self.flags & EXPANSION != 0
    }

    /// Whether the word starts with an unquoted tilde expansion (`~`, `~/x`,
    /// `~user`).
    pub fn has_tilde(&self) -> bool {
        self.flags & TILDE != 0
    }

    /// Whether the word runs a command to build its value: command
    /// substitution (`$(cmd)`, `` `cmd` ``) or process substitution
    /// (`<(cmd)`, `>(cmd)`).
    pub fn has_substitution(&self) -> bool {
        self.flags & SUBSTITUTION != 0
    }

    /// Whether the word has unquoted pattern characters (`*`, `?`, `[`),
    /// brace expansion (`{a,b}`, `{1..3}`) or extended-glob syntax, so the
    /// shell may turn it into other words (`cat .e*` can read `.env`).
    pub fn has_glob(&self) -> bool {
        self.flags & GLOB != 0
    }

    /// Whether the word makes bash evaluate a variable's value as an
    /// arithmetic expression: `$((x))`, `${a[i]}`, `${s:n}`, `${!ref}`, or
    /// an arithmetic context that names a variable (`(( x ))`,
    /// `[[ $x -eq 1 ]]`, `a[i]=1`).
    ///
    /// Bash evaluates a variable that holds `a[$(cmd)]` as an expression, so
    /// the subscript's command runs: `x='a[$(id)]'; echo $((x))` runs `id`.
    /// A variable's value may come from a file name, an input line or the
    /// environment, so any such word can run code. Arithmetic on literal
    /// numbers only (`$((1 + 2))`) cannot.
    pub fn evaluates_variables(&self) -> bool {
        self.flags & ARITHMETIC != 0
    }

    /// Whether [`text`](Self::text) is exactly what the program receives: no
    /// expansion, substitution or pattern.
    pub fn is_literal(&self) -> bool {
        self.flags & (EXPANSION | SUBSTITUTION | GLOB) == 0
    }
}

/// A command to parse on its own, found inside a word.
#[derive(Debug)]
pub struct Nested {
    pub(crate) source: String,
    pub(crate) origin: Origin,
}

/// Converts the raw spelling of a word.
///
/// Returns the word and the sources of the command substitutions found in it,
/// for the caller to parse.
pub fn convert(raw: &str, opts: &ParserOptions) -> Result<(Word, Vec<Nested>), ParseError> {
    if is_plain(raw) {
        return Ok((Word::literal(raw), Vec::new()));
    }
    let pieces = guarded(|| brush_parser::word::parse(raw, opts))?
        .map_err(|err| ParseError::Syntax(Box::new(err)))?;
    let mut state = State::new(raw);
    state.pieces(&pieces, false);
    Ok(state.finish())
}

/// Converts the body of a here-document; without expansion (`<<'EOF'`) the
/// body is data.
pub fn convert_heredoc(
    body: &str,
    expand: bool,
    opts: &ParserOptions,
) -> Result<(Word, Vec<Nested>), ParseError> {
    if !expand || !body.contains(['$', '`', '\\']) {
        let mut word = Word::literal(body);
        word.flags = QUOTED;
        return Ok((word, Vec::new()));
    }
    let pieces = guarded(|| brush_parser::word::parse_heredoc(body, opts))?
        .map_err(|err| ParseError::Syntax(Box::new(err)))?;
    let mut state = State::new(body);
    // Inside a here-document, as inside double quotes, patterns are inert.
    state.pieces(&pieces, true);
    // The word parser reads an unclosed `$(` in a body as text; bash would
    // try to run it. Unless escaped, count it as a substitution.
    if state.flags & SUBSTITUTION == 0
        && contains_substitution_syntax(body)
        && !body.contains("\\$(")
        && !body.contains("\\`")
    {
        state.flags |= SUBSTITUTION;
    }
    Ok(state.finish())
}

/// Words made only of these bytes need no parsing: the common case, kept fast.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%^".contains(&b))
}

struct State<'a> {
    raw: &'a str,
    text: String,
    flags: u8,
    nested: Vec<Nested>,
}

impl<'a> State<'a> {
    fn new(raw: &'a str) -> Self {
        Self {
            raw,
            text: String::with_capacity(raw.len()),
            flags: 0,
            nested: Vec::new(),
        }
    }

    fn finish(self) -> (Word, Vec<Nested>) {
        let word = Word {
            raw: self.raw.to_owned(),
            text: self.text,
            flags: self.flags,
        };
        (word, self.nested)
    }

    fn source(&self, piece: &WordPieceWithSource) -> &'a str {
        self.raw
            .get(piece.start_index..piece.end_index)
            .unwrap_or_default()
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], in_double_quotes: bool) {
        for piece in pieces {
            let source = self.source(piece);
            match &piece.piece {
                WordPiece::Text(s) => {
                    if !in_double_quotes && has_pattern(s) {
                        self.flags |= GLOB;
                    }
                    self.text.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => {
                    self.flags |= QUOTED;
                    self.text.push_str(s);
                }
                WordPiece::AnsiCQuotedText(s) => {
                    self.flags |= QUOTED;
                    decode_ansi_c(s, &mut self.text);
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.flags |= QUOTED;
                    self.pieces(inner, true);
                }
                WordPiece::TildeExpansion(_) => {
                    self.flags |= EXPANSION | TILDE;
                    self.text
                        .push_str(if source.is_empty() { "~" } else { source });
                }
                WordPiece::ParameterExpansion(expr) => {
                    // `${x:-$(cmd)}` runs a command too. We do not dig it
                    // out; the flag makes the word dangerous.
                    self.flags |= EXPANSION;
                    if contains_command_substitution(source) {
                        self.flags |= SUBSTITUTION;
                    }
                    if parameter_evaluates_variables(expr) {
                        self.flags |= ARITHMETIC;
                    }
                    self.text.push_str(source);
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.flags |= EXPANSION;
                    if contains_command_substitution(&expr.value) {
                        self.flags |= SUBSTITUTION;
                    }
                    if refers_to_variable(&expr.value) {
                        self.flags |= ARITHMETIC;
                    }
                    self.text.push_str(source);
                }
                WordPiece::CommandSubstitution(inner) => {
                    self.flags |= SUBSTITUTION;
                    self.text.push_str(source);
                    self.nested.push(Nested {
                        source: inner.clone(),
                        origin: Origin::CommandSubstitution,
                    });
                }
                WordPiece::BackquotedCommandSubstitution(inner) => {
                    self.flags |= SUBSTITUTION;
                    self.text.push_str(source);
                    self.nested.push(Nested {
                        source: unescape_backquoted(inner),
                        origin: Origin::CommandSubstitution,
                    });
                }
                WordPiece::EscapeSequence(s) => {
                    self.flags |= QUOTED;
                    let escaped = s.strip_prefix('\\').unwrap_or(s);
                    if escaped == "\n" {
                        // A line continuation: nothing.
                    } else if in_double_quotes && !matches!(escaped, "$" | "`" | "\"" | "\\") {
                        self.text.push_str(s);
                    } else {
                        self.text.push_str(escaped);
                    }
                }
            }
        }
    }
}

fn has_pattern(s: &str) -> bool {
    // A `[` without a later `]` is an ordinary character (the `[` command).
    let bracket = s
        .find('[')
        .is_some_and(|at| s.get(at + 1..).is_some_and(|r| r.contains(']')));
    bracket
        || s.contains(['*', '?', '('])
        || (s.contains('{') && (s.contains(',') || s.contains("..")))
}

/// Whether an arithmetic expression names a variable (or holds an
/// expansion), rather than only numbers and operators. Numbers include
/// `0x1f` and `16#ff`.
pub fn refers_to_variable(expr: &str) -> bool {
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_digit() {
            i += 1;
            while bytes
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'#' | b'@' | b'_'))
            {
                i += 1;
            }
            continue;
        }
        if b.is_ascii_alphabetic()
            || matches!(b, b'_' | b'$' | b'`' | b'[' | b'\\')
            || !b.is_ascii()
        {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether a parameter expansion evaluates a variable's value as arithmetic
/// or as a name: an indexed element with a non-literal subscript
/// (`${a[i]}`), a substring with a non-literal offset or length
/// (`${s:n}`), or indirection (`${!ref}`, where `ref` may hold `a[$(cmd)]`).
/// Nested words (`${x:-$((y))}`) are checked on their text.
fn parameter_evaluates_variables(expr: &ParameterExpr) -> bool {
    use ParameterExpr as P;
    let (parameter, indirect, nested): (&Parameter, bool, [Option<&str>; 2]) = match expr {
        P::Parameter {
            parameter,
            indirect,
        }
        | P::ParameterLength {
            parameter,
            indirect,
        }
        | P::Transform {
            parameter,
            indirect,
            ..
        } => (parameter, *indirect, [None, None]),
        P::UseDefaultValues {
            parameter,
            indirect,
            default_value: value,
            ..
        }
        | P::AssignDefaultValues {
            parameter,
            indirect,
            default_value: value,
            ..
        }
        | P::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message: value,
            ..
        }
        | P::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value: value,
            ..
        }
        | P::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern: value,
        }
        | P::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern: value,
        }
        | P::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern: value,
        }
        | P::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern: value,
        }
        | P::UppercaseFirstChar {
            parameter,
            indirect,
            pattern: value,
        }
        | P::UppercasePattern {
            parameter,
            indirect,
            pattern: value,
        }
        | P::LowercaseFirstChar {
            parameter,
            indirect,
            pattern: value,
        }
        | P::LowercasePattern {
            parameter,
            indirect,
            pattern: value,
        } => (parameter, *indirect, [value.as_deref(), None]),
        P::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            ..
        } => (
            parameter,
            *indirect,
            [Some(pattern.as_str()), replacement.as_deref()],
        ),
        P::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            if refers_to_variable(&offset.value)
                || length
                    .as_ref()
                    .is_some_and(|l| refers_to_variable(&l.value))
            {
                return true;
            }
            (parameter, *indirect, [None, None])
        }
        P::VariableNames { .. } | P::MemberKeys { .. } => return false,
    };
    let subscript = match parameter {
        Parameter::NamedWithIndex { index, .. } => refers_to_variable(index),
        _ => false,
    };
    indirect
        || subscript
        || nested
            .iter()
            .flatten()
            .any(|s| s.contains("$((") || s.contains("$[") || s.contains('['))
}

fn contains_substitution_syntax(s: &str) -> bool {
    s.contains("$(") || s.contains('`') || s.contains("<(") || s.contains(">(")
}

/// [`contains_substitution_syntax`], not counting `$((`, an arithmetic
/// expansion (whose variables set [`ARITHMETIC`] instead).
fn contains_command_substitution(s: &str) -> bool {
    s.match_indices("$(")
        .any(|(at, _)| s.as_bytes().get(at + 2) != Some(&b'('))
        || s.contains('`')
        || s.contains("<(")
        || s.contains(">(")
}

/// Undoes the escapes bash applies inside backquotes (`\\`, `` \` ``, `\$`).
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '\\' | '`' | '$')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Decodes the body of `$'…'` the way bash does, so `$'\x72m'` reads `rm`.
fn decode_ansi_c(s: &str, out: &mut String) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'c' => {
                if let Some(ctl) = chars.next() {
                    out.push(char::from((ctl as u32 & 0x1f) as u8));
                }
            }
            'x' => push_code(&mut chars, 16, 2, out),
            'u' => push_code(&mut chars, 16, 4, out),
            'U' => push_code(&mut chars, 16, 8, out),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value & 0xff).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

fn push_code(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max_digits: usize,
    out: &mut String,
) {
    let mut value: u32 = 0;
    let mut digits = 0;
    while digits < max_digits {
        match chars.peek().and_then(|d| d.to_digit(radix)) {
            Some(d) => {
                value = value.saturating_mul(radix).saturating_add(d);
                chars.next();
                digits += 1;
            }
            None => break,
        }
    }
    if digits == 0 {
        out.push('\\');
        return;
    }
    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(raw: &str) -> String {
        let opts = ParserOptions::default();
        convert(raw, &opts).map(|(w, _)| w.text).unwrap_or_default()
    }

    #[test]
    fn quotes_are_removed() {
        let cases: &[(&str, &str)] = &[
            ("'rm -rf /'", "rm -rf /"),
            ("\"a b\"c", "a bc"),
            ("r\\m", "rm"),
            ("$'\\x72m'", "rm"),
            ("$'\\162m'", "rm"),
            ("\"\\$HOME\"", "$HOME"),
            ("\"a\\qb\"", "a\\qb"),
            ("$HOME/x", "$HOME/x"),
        ];
        for (raw, want) in cases {
            assert_eq!(text(raw), *want, "{raw}");
        }
    }

    #[test]
    fn flags_follow_quoting() {
        let opts = ParserOptions::default();
        let flags = |raw: &str| convert(raw, &opts).map_or(0xff, |(w, _)| w.flags);
        assert_eq!(flags("ls"), 0);
        assert_eq!(flags("*.rs"), GLOB);
        assert_eq!(flags("'*.rs'"), QUOTED);
        assert_eq!(flags("~"), EXPANSION | TILDE);
        assert_eq!(flags("\"$HOME\""), QUOTED | EXPANSION);
        assert_eq!(flags("$(id)"), SUBSTITUTION);
        assert_eq!(flags("${x:-$(id)}"), EXPANSION | SUBSTITUTION);
        assert_eq!(flags(".{e,}nv"), GLOB);
        assert_eq!(flags("$((1 + 0x1f * 16#ff))"), EXPANSION);
        assert_eq!(flags("$((x))"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("$[x+1]"), EXPANSION | ARITHMETIC);
        assert_eq!(
            flags("$((1 + $(id)))"),
            EXPANSION | SUBSTITUTION | ARITHMETIC
        );
        assert_eq!(flags("${a[i]}"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("${a[$i]}"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("${a[1]}"), EXPANSION);
        assert_eq!(flags("${a[@]}"), EXPANSION);
        assert_eq!(flags("${s:n:2}"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("${s:1:2}"), EXPANSION);
        assert_eq!(flags("${!ref}"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("${x:-$((y))}"), EXPANSION | ARITHMETIC);
        assert_eq!(flags("${x:-y}"), EXPANSION);
        assert_eq!(flags("${#x}"), EXPANSION);
    }

    #[test]
    fn arithmetic_that_names_a_variable() {
        let cases: &[(&str, bool)] = &[
            ("1 + 2", false),
            ("0x1F * 2", false),
            ("16#ff", false),
            ("2#1010 << 3", false),
            ("(1) ? 2 : 3", false),
            ("x", true),
            ("$x + 1", true),
            ("a[1]", true),
            ("i++", true),
            ("10#$n", true),
            ("`id`", true),
        ];
        for (expr, want) in cases {
            assert_eq!(refers_to_variable(expr), *want, "{expr}");
        }
    }
}
