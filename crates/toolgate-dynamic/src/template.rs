//! Command templates: an argument vector with `{{param}}` placeholders,
//! filled word by word and run without a shell.
//!
//! Seed 002 fills a shell line and then strips `;`, `&`, `|`, `$`, and so
//! on from the values, which is a blocklist: whatever it forgets (a
//! newline, `>`, a quote) is a second command. Here there is no shell to
//! inject into. The template is split into words once, when the tool is
//! created; a call fills each word's placeholders with the arguments and
//! passes the words to the program as its argument vector, so a value is
//! always inside exactly the word it was written in, whatever characters
//! it holds.
//!
//! # Rules
//!
//! 1. The template is split on whitespace, and only on whitespace: there
//!    are no quotes, escapes, variables, globs, pipes or redirections. `'a
//!    b'` is the two words `'a` and `b'`; `>` is a word like any other.
//! 2. A placeholder is `{{name}}` with `name` a letter or `_` followed by
//!    letters, digits and `_`, without spaces. It may be a whole word
//!    (`{{path}}`) or part of one (`--format={{fmt}}`, `v{{major}}.0`).
//!    Any other `{{` or `}}` is refused, so a mistyped placeholder is not
//!    passed on as text.
//! 3. The first word is the program, and holds no placeholder: a call
//!    chooses arguments, never what runs. It is a name looked up in the
//!    sandbox's `PATH` or an absolute path (a relative path would depend
//!    on the directory it is resolved from).
//! 4. A call fills each word separately: a placeholder becomes the
//!    argument's text (a string as it is; a number or `true`/`false` as
//!    JSON writes it), and the word stays one argument — empty, or holding
//!    spaces, newlines, `;`, `&&`, `$(…)`, backticks, quotes, `<`, `>` or
//!    `|`, which are then just characters. An argument that is `null`, an
//!    array or an object, or that holds a NUL byte (which no argument can
//!    hold), is refused.
//! 5. Option injection: a word that *begins* with an argument's text (no
//!    template text before it) is refused when that text begins with `-`,
//!    since the program would read it as an option (`-rf`, `--output=…`),
//!    unless the word comes after a `--` word of the template (which ends
//!    the options of most programs), or the parameter's schema allows it
//!    with `"x-allow-dash": true` (for negative numbers, say).
//! 6. For people and policies, a filled template is written as a shell
//!    line ([`Template::shell_line`]): each word quoted where the shell
//!    would read it otherwise, so the line means exactly the argument
//!    vector that runs. The command blocklist reads that line.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// The most words a template may have.
pub const MAX_WORDS: usize = 256;

/// A command template, split into words (see the [module rules](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    program: String,
    words: Vec<Word>,
}

/// One argument word of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    pieces: Vec<Piece>,
    /// Whether a `--` word comes before it (rule 5).
    after_dashes: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Param(String),
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// There is no program.
    #[error(
        "the command is empty; write a program and its arguments, like `git log -n {{{{count}}}}`"
    )]
    Empty,
    /// The program has a placeholder (rule 3).
    #[error(
        "the program `{0}` cannot hold a placeholder: the first word must be a fixed program name"
    )]
    ProgramPlaceholder(String),
    /// A `{{` or `}}` that is not a placeholder (rule 2).
    #[error(
        "`{0}` is not a valid placeholder use: write `{{{{name}}}}` with a name of letters, digits and `_`, without spaces"
    )]
    BadPlaceholder(String),
    /// The program is a relative path (rule 3).
    #[error(
        "the program `{0}` is a relative path; write a program name (`git`) or an absolute path"
    )]
    RelativeProgram(String),
    /// Too many words.
    #[error("the command has {0} words; at most {MAX_WORDS} are allowed")]
    TooLong(usize),
}

/// Why a call could not fill a template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FillError {
    /// The call has no value for a placeholder.
    #[error("missing argument `{0}`")]
    Missing(String),
    /// The value is not a string, number or boolean (rule 4).
    #[error("argument `{0}` must be a string, a number or a boolean")]
    NotScalar(String),
    /// The value holds a NUL byte (rule 4).
    #[error("argument `{0}` holds a NUL byte, which no program argument can hold")]
    Nul(String),
    /// The value would be read as an option (rule 5).
    #[error(
        "argument `{name}` starts with `-` ({value:?}), which the program would read as an option; pass a value that does not start with `-`"
    )]
    Option {
        /// The parameter.
        name: String,
        /// Its value (cut to 40 characters).
        value: String,
    },
}

impl Template {
    /// Parses `source` (rules 1 to 3).
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        let mut split = source.split_whitespace();
        let program = split.next().ok_or(TemplateError::Empty)?;
        let program_pieces = pieces(program)?;
        if program_pieces
            .iter()
            .any(|piece| matches!(piece, Piece::Param(_)))
        {
            return Err(TemplateError::ProgramPlaceholder(program.to_owned()));
        }
        if program.contains('/') && !program.starts_with('/') {
            return Err(TemplateError::RelativeProgram(program.to_owned()));
        }
        let mut words = Vec::new();
        let mut after_dashes = false;
        for word in split {
            words.push(Word {
                pieces: pieces(word)?,
                after_dashes,
            });
            if word == "--" {
                after_dashes = true;
            }
        }
        if words.len() + 1 > MAX_WORDS {
            return Err(TemplateError::TooLong(words.len() + 1));
        }
        Ok(Self {
            program: program.to_owned(),
            words,
        })
    }

    /// The program (the first word).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The names of the placeholders, sorted, each once.
    pub fn params(&self) -> BTreeSet<&str> {
        self.words
            .iter()
            .flat_map(|w| &w.pieces)
            .filter_map(|piece| match piece {
                Piece::Param(name) => Some(name.as_str()),
                Piece::Text(_) => None,
            })
            .collect()
    }

    /// The arguments of the program (every word but the first) for one
    /// call (rules 4 and 5): exactly one per word of the template. The
    /// parameters in `allow_dash` may begin a word with `-`.
    pub fn fill(
        &self,
        args: &Map<String, Value>,
        allow_dash: &BTreeSet<String>,
    ) -> Result<Vec<String>, FillError> {
        let mut argv = Vec::with_capacity(self.words.len());
        for word in &self.words {
            let mut text = String::new();
            // Whether the word's first character (so far) is the
            // template's: then no value can make it an option.
            let mut leads: Option<bool> = None;
            for piece in &word.pieces {
                match piece {
                    Piece::Text(literal) => {
                        leads.get_or_insert(true);
                        text.push_str(literal);
                    }
                    Piece::Param(name) => {
                        let value = render(name, args.get(name))?;
                        if leads.is_none() && !value.is_empty() {
                            leads = Some(true);
                            if value.starts_with('-')
                                && !word.after_dashes
                                && !allow_dash.contains(name)
                            {
                                return Err(FillError::Option {
                                    name: name.clone(),
                                    value: value.chars().take(40).collect(),
                                });
                            }
                        }
                        text.push_str(&value);
                    }
                }
            }
            argv.push(text);
        }
        Ok(argv)
    }
}

impl Template {
    /// The program and `args` as a shell line that means exactly this
    /// argument vector (rule 6): words of plain characters as they are,
    /// others in single quotes (`'` written `'\''`), an empty word `''`.
    pub fn shell_line(&self, args: &[String]) -> String {
        std::iter::once(self.program.as_str())
            .chain(args.iter().map(String::as_str))
            .map(shell_quote)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The template as a shell line with every placeholder filled with
    /// `value`, for checks made before any call (the command blocklist at
    /// creation).
    pub fn sample_line(&self, value: &str) -> String {
        let args: Vec<String> = self
            .words
            .iter()
            .map(|word| {
                word.pieces
                    .iter()
                    .map(|piece| match piece {
                        Piece::Text(text) => text.as_str(),
                        Piece::Param(_) => value,
                    })
                    .collect()
            })
            .collect();
        self.shell_line(&args)
    }
}

/// `word` as the shell reads it back (rule 6).
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '=' | '+' | '@' | '%')
        });
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for word in &self.words {
            f.write_str(" ")?;
            for piece in &word.pieces {
                match piece {
                    Piece::Text(text) => f.write_str(text)?,
                    Piece::Param(name) => write!(f, "{{{{{name}}}}}")?,
                }
            }
        }
        Ok(())
    }
}

/// The text and placeholders of one word (rule 2).
fn pieces(word: &str) -> Result<Vec<Piece>, TemplateError> {
    let bad = || TemplateError::BadPlaceholder(word.to_owned());
    let mut out = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(start) = rest.find("{{") {
            let before = &rest[..start];
            if before.contains("}}") {
                return Err(bad());
            }
            if !before.is_empty() {
                out.push(Piece::Text(before.to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after.find("}}").ok_or_else(bad)?;
            let name = &after[..end];
            if !is_identifier(name) {
                return Err(bad());
            }
            out.push(Piece::Param(name.to_owned()));
            rest = &after[end + 2..];
        } else {
            if rest.contains("}}") {
                return Err(bad());
            }
            out.push(Piece::Text(rest.to_owned()));
            rest = "";
        }
    }
    Ok(out)
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value as the text of an argument (rule 4).
fn render(name: &str, value: Option<&Value>) -> Result<String, FillError> {
    let text = match value {
        None => return Err(FillError::Missing(name.to_owned())),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(_) => return Err(FillError::NotScalar(name.to_owned())),
    };
    if text.contains('\0') {
        return Err(FillError::Nul(name.to_owned()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (program, params, the template shown again)
    type Parsed<'a> = (&'a str, &'a [&'a str], &'a str);

    #[test]
    fn templates_parse_into_words() {
        // (source, Ok(parsed) or Err(message start))
        let cases: &[(&str, Result<Parsed<'_>, &str>)] = &[
            (
                "git log -n {{count}} --format=%s {{path}}",
                Ok((
                    "git",
                    &["count", "path"],
                    "git log -n {{count}} --format=%s {{path}}",
                )),
            ),
            (
                "  printf   [%s]\\n\t{{msg}}\n",
                Ok(("printf", &["msg"], "printf [%s]\\n {{msg}}")),
            ),
            ("ls", Ok(("ls", &[], "ls"))),
            (
                "tar -C {{dir}} --file={{a}}.{{b}}",
                Ok((
                    "tar",
                    &["a", "b", "dir"],
                    "tar -C {{dir}} --file={{a}}.{{b}}",
                )),
            ),
            (
                "echo {{x}} {{x}}{{_y2}}",
                Ok(("echo", &["_y2", "x"], "echo {{x}} {{x}}{{_y2}}")),
            ),
            // Quotes and operators are plain words (rule 1).
            ("echo 'a b' ; > |", Ok(("echo", &[], "echo 'a b' ; > |"))),
            ("", Err("the command is empty")),
            ("   \n ", Err("the command is empty")),
            ("{{prog}} --help", Err("the program `{{prog}}`")),
            ("/usr/bin/{{p}}", Err("the program `/usr/bin/{{p}}`")),
            (
                "/usr/bin/env -i",
                Ok(("/usr/bin/env", &[], "/usr/bin/env -i")),
            ),
            (
                "./run.sh {{a}}",
                Err("the program `./run.sh` is a relative path"),
            ),
            ("bin/tool", Err("the program `bin/tool` is a relative path")),
            ("echo {{ count }}", Err("`{{` is not a valid placeholder")),
            ("echo {{count", Err("`{{count` is not")),
            ("echo count}}", Err("`count}}` is not")),
            ("echo {{a-b}}", Err("`{{a-b}}` is not")),
            ("echo {{1a}}", Err("`{{1a}}` is not")),
            ("echo {{}}", Err("`{{}}` is not")),
            ("echo {{a}}}}", Err("`{{a}}}}` is not")),
            ("echo }}{{a}}", Err("`}}{{a}}` is not")),
            ("echo {{{a}}}", Err("`{{{a}}}` is not")),
        ];
        for (source, expected) in cases {
            match (Template::parse(source), expected) {
                (Ok(template), Ok((program, params, shown))) => {
                    assert_eq!(template.program(), *program, "{source:?}");
                    assert_eq!(
                        template.params().into_iter().collect::<Vec<_>>(),
                        *params,
                        "{source:?}"
                    );
                    assert_eq!(template.to_string(), *shown, "{source:?}");
                }
                (Err(error), Err(start)) => {
                    let message = error.to_string();
                    assert!(message.starts_with(start), "{source:?}: {message}");
                }
                (got, want) => panic!("{source:?}: got {got:?}, want {want:?}"),
            }
        }
        let long = format!("echo {}", "a ".repeat(MAX_WORDS));
        assert_eq!(
            Template::parse(&long),
            Err(TemplateError::TooLong(MAX_WORDS + 1))
        );
    }

    #[test]
    fn every_value_fills_exactly_its_word() {
        let template = Template::parse("printf [%s]\\n {{msg}}").unwrap();
        let values = [
            "hello",
            "",
            "a b",
            "a; touch pwned",
            "a && touch pwned",
            "a\ntouch pwned",
            "$(touch pwned)",
            "`touch pwned`",
            "' ; touch pwned ; '",
            "\" ; touch pwned ; \"",
            "< /etc/passwd",
            "> pwned",
            "| touch pwned",
            "{{msg}}",
            "* ?",
            "~",
            "$HOME",
        ];
        for value in values {
            let argv = template
                .fill(
                    json!({ "msg": value }).as_object().unwrap(),
                    &BTreeSet::new(),
                )
                .unwrap();
            assert_eq!(argv, ["[%s]\\n", value], "{value:?}");
        }
    }

    #[test]
    fn values_are_rendered_and_checked() {
        let template = Template::parse("tool --n={{n}} {{a}} x{{b}} -- {{after}}").unwrap();
        let allow: BTreeSet<String> = ["b".to_owned()].into();
        // (arguments, Ok(argv) or Err(message))
        let cases: &[(Value, Result<&[&str], &str>)] = &[
            (
                json!({"n": 5, "a": "v", "b": true, "after": 1.5}),
                Ok(&["--n=5", "v", "xtrue", "--", "1.5"]),
            ),
            // A dash inside a word, or after `--`, is no option.
            (
                json!({"n": -1, "a": "v-", "b": "-b", "after": "-rf"}),
                Ok(&["--n=-1", "v-", "x-b", "--", "-rf"]),
            ),
            (
                json!({"n": 1, "a": "-rf", "b": "", "after": ""}),
                Err("argument `a` starts with `-` (\"-rf\")"),
            ),
            (
                json!({"n": 1, "a": "--output=/etc/passwd", "b": "", "after": ""}),
                Err("argument `a` starts with `-`"),
            ),
            (
                json!({"n": 1, "a": -3, "b": "", "after": ""}),
                Err("argument `a` starts with `-` (\"-3\")"),
            ),
            (
                json!({"n": 1, "a": "x", "b": ""}),
                Err("missing argument `after`"),
            ),
            (
                json!({"n": null, "a": "x", "b": "", "after": ""}),
                Err("argument `n` must be a string, a number or a boolean"),
            ),
            (
                json!({"n": 1, "a": ["x"], "b": "", "after": ""}),
                Err("argument `a` must be a string"),
            ),
            (
                json!({"n": 1, "a": {"k": 1}, "b": "", "after": ""}),
                Err("argument `a` must be a string"),
            ),
            (
                json!({"n": 1, "a": "x\u{0}y", "b": "", "after": ""}),
                Err("argument `a` holds a NUL byte"),
            ),
        ];
        for (args, expected) in cases {
            let got = template.fill(args.as_object().unwrap(), &allow);
            match (got, expected) {
                (Ok(argv), Ok(want)) => assert_eq!(argv, *want, "{args}"),
                (Err(error), Err(start)) => {
                    let message = error.to_string();
                    assert!(message.starts_with(start), "{args}: {message}");
                }
                (got, want) => panic!("{args}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn shell_lines_mean_the_argument_vector() {
        let template = Template::parse("git").unwrap();
        let cases: &[(&[&str], &str)] = &[
            (&["-n", "5", "src/main.rs"], "git -n 5 src/main.rs"),
            (&["a b", ""], "git 'a b' ''"),
            (&["it's", "$(x)"], "git 'it'\\''s' '$(x)'"),
            (&["a\nb", "~", "*"], "git 'a\nb' '~' '*'"),
        ];
        for (args, line) in cases {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            assert_eq!(template.shell_line(&args), *line, "{args:?}");
        }
        let template = Template::parse("git log -n {{n}} {{path}}").unwrap();
        assert_eq!(template.sample_line("x"), "git log -n x x");
        let sudo = Template::parse("sudo {{cmd}} --x={{y}}").unwrap();
        assert_eq!(sudo.sample_line("x"), "sudo x --x=x");
    }

    #[test]
    fn the_leading_value_decides_an_option() {
        let template = Template::parse("cmd {{a}}{{b}} {{c}}").unwrap();
        let none = BTreeSet::new();
        let fill = |a: &str, b: &str, c: &str, allow: &BTreeSet<String>| {
            template
                .fill(json!({"a": a, "b": b, "c": c}).as_object().unwrap(), allow)
                .map_err(|e| e.to_string())
        };
        // An empty first value leaves the second one leading the word.
        assert!(fill("", "-x", "c", &none).is_err());
        assert_eq!(fill("a", "-x", "c", &none).unwrap(), ["a-x", "c"]);
        // Allowed for one parameter, not the others.
        let allow_c: BTreeSet<String> = ["c".to_owned()].into();
        assert_eq!(fill("a", "b", "-5", &allow_c).unwrap(), ["ab", "-5"]);
        assert!(fill("-a", "b", "c", &allow_c).is_err());
        // The lone `-` (stdin, for many programs) starts with `-` too.
        assert!(fill("-", "", "c", &none).is_err());
    }
}
