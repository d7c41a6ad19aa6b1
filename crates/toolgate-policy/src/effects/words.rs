//! The words of a command line that may name files, and the names each word
//! can stand for.

use crate::command_operands;

/// At most this many names are taken from one command's brace expansions
/// (`{a,b}`, `{1..9}`); a command that expands to more is refused rather
/// than judged in part.
pub(crate) const MAX_BRACE_NAMES: usize = 256;

/// Words longer than this are not brace-expanded; one that has a brace
/// group is refused (see [`MAX_BRACE_NAMES`]).
pub(crate) const MAX_BRACE_WORD: usize = 4096;

/// The brace-expansion steps one command may take, whatever its words.
/// Each step costs at most one scan of a word of [`MAX_BRACE_WORD`] bytes.
const BRACE_STEPS: usize = 4 * MAX_BRACE_NAMES;

/// A word of a command line, and whether the shell may expand it into the
/// names of files on disk (`*`, `?`, `[…]`, extended globs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandWord {
    pub(crate) text: String,
    /// Whether the shell expands braces and patterns in it (an unquoted
    /// word); the crude split cannot tell, so it says yes.
    pub(crate) expands: bool,
}

/// Every operand, redirection target and here-string of `command`, through
/// the parser ([`command_operands`]); when the parser refuses the line,
/// its pieces between blanks and shell punctuation, so that an unparsable
/// line is judged crudely rather than let through.
pub(crate) fn command_words(command: &str) -> Vec<CommandWord> {
    match command_operands(command) {
        Ok(operands) => operands
            .into_iter()
            .map(|o| CommandWord {
                text: o.text().to_owned(),
                expands: o.is_glob(),
            })
            .collect(),
        Err(_) => crude_split(command),
    }
}

/// The pieces of `command` between blanks, quotes and the characters that
/// end a shell word or start an expansion.
pub(crate) fn crude_split(command: &str) -> Vec<CommandWord> {
    command
        .split(|c: char| c.is_whitespace() || "<>|;&()'\"`$\\".contains(c))
        .filter(|w| !w.is_empty())
        .map(|w| CommandWord {
            text: w.to_owned(),
            expands: true,
        })
        .collect()
}

/// The ways a word can name a path: itself; the value of `--opt=VALUE`,
/// `if=VALUE` and `NAME=VALUE`; a short option's glued value (`-f.env`);
/// `@FILE` (curl, many compilers); `REV:PATH` (git) and `HOST:PATH` (scp).
/// Each form is taken apart again, so `-d@.env` yields `.env`.
pub(crate) fn candidates(word: &str) -> Vec<&str> {
    const MAX: usize = 16;
    let mut out = vec![word];
    let mut i = 0;
    while let Some(&w) = out.get(i) {
        let mut found: Vec<&str> = Vec::new();
        if let Some((_, value)) = w.split_once('=') {
            found.push(value);
        }
        if let Some((_, value)) = w.split_once(':') {
            found.push(value);
        }
        if let Some(rest) = w.strip_prefix('-')
            && !rest.starts_with('-')
        {
            let mut chars = rest.chars();
            chars.next();
            found.push(chars.as_str());
        }
        if let Some(rest) = w.strip_prefix('@') {
            found.push(rest);
        }
        for value in found {
            if !value.is_empty() && !out.contains(&value) && out.len() < MAX {
                out.push(value);
            }
        }
        i += 1;
    }
    out
}

/// Whether `name` holds a pattern the shell matches against the files on
/// disk: `*`, `?`, `[…]`, or an extended glob (`@(…)`, `!(…)`, `+(…)`;
/// `?(…)` and `*(…)` have their `?` and `*`).
pub(crate) fn has_pattern(name: &str) -> bool {
    name.contains(['*', '?', '[']) || ["@(", "!(", "+("].iter().any(|p| name.contains(p))
}

/// The literal pieces of a pattern, split at its pattern characters, so
/// that an extended glob such as `@(.env|x)` names `.env`.
pub(crate) fn literal_pieces(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| "*?[]()|!@+{},^".contains(c))
        .filter(move |piece| !piece.is_empty() && *piece != name)
}

/// What the brace expansion of a command may still cost.
#[derive(Debug)]
pub(crate) struct BraceBudget {
    steps: usize,
}

impl BraceBudget {
    pub(crate) fn new() -> Self {
        Self { steps: BRACE_STEPS }
    }
}

/// The words bash's brace expansion makes of `word` (`a{b,c}` → `ab`,
/// `ac`; `x{1..3}` → `x1`, `x2`, `x3`; `{a..c}`), in bash's order; `word`
/// itself when it has no brace group. `None` when the word is longer than
/// [`MAX_BRACE_WORD`] and has a group, or expands to more than
/// [`MAX_BRACE_NAMES`] names, or the command's budget runs out.
pub(crate) fn brace_expand(word: &str, budget: &mut BraceBudget) -> Option<Vec<String>> {
    if !word.contains('{') {
        return Some(vec![word.to_owned()]);
    }
    if word.len() > MAX_BRACE_WORD {
        return first_group(word).is_none().then(|| vec![word.to_owned()]);
    }
    let mut out = Vec::new();
    expand_into(word.to_owned(), budget, &mut out)?;
    Some(out)
}

fn expand_into(word: String, budget: &mut BraceBudget, out: &mut Vec<String>) -> Option<()> {
    budget.steps = budget.steps.checked_sub(1)?;
    let Some(group) = first_group(&word) else {
        if out.len() >= MAX_BRACE_NAMES {
            return None;
        }
        out.push(word);
        return Some(());
    };
    let prefix = word.get(..group.open)?;
    let suffix = word.get(group.close + 1..)?;
    let Alternatives::Words(alternatives) = group.alternatives else {
        return None;
    };
    for alternative in alternatives {
        expand_into(format!("{prefix}{alternative}{suffix}"), budget, out)?;
    }
    Some(())
}

/// A brace group: where its braces are and what it stands for.
#[derive(Debug)]
struct Group {
    open: usize,
    close: usize,
    alternatives: Alternatives,
}

#[derive(Debug)]
enum Alternatives {
    Words(Vec<String>),
    /// A sequence longer than [`MAX_BRACE_NAMES`].
    TooMany,
}

/// The leftmost brace group of `word` that bash would expand: a matched
/// `{…}` with a comma at its own level, or a sequence `{x..y[..step]}`.
/// Backslash-escaped characters are not syntax.
fn first_group(word: &str) -> Option<Group> {
    struct Open {
        at: usize,
        commas: Vec<usize>,
        nested: bool,
    }
    let bytes = word.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut best: Option<(usize, usize, Vec<usize>)> = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'{' => stack.push(Open {
                at: i,
                commas: Vec::new(),
                nested: false,
            }),
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.commas.push(i);
                }
            }
            b'}' => {
                if let Some(open) = stack.pop() {
                    if let Some(parent) = stack.last_mut() {
                        parent.nested = true;
                    }
                    let valid = !open.commas.is_empty()
                        || (!open.nested && Sequence::parse(word.get(open.at + 1..i)?).is_some());
                    if valid && best.as_ref().is_none_or(|(at, _, _)| open.at < *at) {
                        best = Some((open.at, i, open.commas));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let (open, close, commas) = best?;
    let alternatives = if commas.is_empty() {
        let sequence = Sequence::parse(word.get(open + 1..close)?)?;
        if sequence.len() > MAX_BRACE_NAMES as u64 {
            return Some(Group {
                open,
                close,
                alternatives: Alternatives::TooMany,
            });
        }
        sequence.words()
    } else {
        let mut parts = Vec::new();
        let mut start = open + 1;
        for comma in commas.into_iter().chain([close]) {
            parts.push(word.get(start..comma)?.to_owned());
            start = comma + 1;
        }
        parts
    };
    Some(Group {
        open,
        close,
        alternatives: Alternatives::Words(alternatives),
    })
}

/// A sequence expression `x..y[..step]` of integers or single ASCII
/// letters.
#[derive(Debug, Clone, Copy)]
enum Sequence {
    Numbers {
        start: i64,
        end: i64,
        step: u64,
        /// The width to zero-pad to (bash pads when an end is written with
        /// a leading zero), or 0.
        width: usize,
    },
    Letters {
        start: u8,
        end: u8,
        step: u64,
    },
}

impl Sequence {
    /// The sequence `body` spells, or `None` when it is not one (then the
    /// braces are literal, as in bash).
    fn parse(body: &str) -> Option<Self> {
        let mut parts = body.split("..");
        let (start, end) = (parts.next()?, parts.next()?);
        let step: i64 = match parts.next() {
            Some(step) => step.parse().ok()?,
            None => 1,
        };
        if parts.next().is_some() {
            return None;
        }
        let step = step.unsigned_abs().max(1);
        if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
            let padded = |s: &str| {
                let digits = s.trim_start_matches(['-', '+']);
                digits.len() > 1 && digits.starts_with('0')
            };
            let width = if padded(start) || padded(end) {
                start.len().max(end.len())
            } else {
                0
            };
            return Some(Self::Numbers {
                start: a,
                end: b,
                step,
                width,
            });
        }
        Some(Self::Letters {
            start: single_letter(start)?,
            end: single_letter(end)?,
            step,
        })
    }

    /// How many words it makes.
    fn len(self) -> u64 {
        let (distance, step) = match self {
            Self::Numbers {
                start, end, step, ..
            } => (start.abs_diff(end), step),
            Self::Letters { start, end, step } => (u64::from(start.abs_diff(end)), step),
        };
        distance / step + 1
    }

    /// Its words, in order.
    fn words(self) -> Vec<String> {
        let len = self.len();
        let mut out = Vec::new();
        match self {
            Self::Numbers {
                start,
                end,
                step,
                width,
            } => {
                let mut n = start;
                for i in 0..len {
                    if i > 0 {
                        let next = if start <= end {
                            n.checked_add_unsigned(step)
                        } else {
                            n.checked_sub_unsigned(step)
                        };
                        let Some(next) = next else { break };
                        n = next;
                    }
                    out.push(if n < 0 {
                        format!("-{:0>w$}", n.unsigned_abs(), w = width.saturating_sub(1))
                    } else {
                        format!("{n:0>width$}")
                    });
                }
            }
            Self::Letters { start, end, step } => {
                let step = usize::try_from(step).unwrap_or(usize::MAX);
                let range: Vec<u8> = if start <= end {
                    (start..=end).collect()
                } else {
                    (end..=start).rev().collect()
                };
                out.extend(
                    range
                        .into_iter()
                        .step_by(step)
                        .map(|c| char::from(c).to_string()),
                );
            }
        }
        out
    }
}

fn single_letter(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_expansion_follows_bash() {
        let cases: &[(&str, &[&str])] = &[
            ("plain", &["plain"]),
            ("{a,.env}", &["a", ".env"]),
            ("x{a,b}y", &["xay", "xby"]),
            ("{a,b}{1,2}", &["a1", "a2", "b1", "b2"]),
            ("{a,{b,c}}", &["a", "b", "c"]),
            ("{x}", &["{x}"]),
            ("{}", &["{}"]),
            ("{{a,b}", &["{a", "{b"]),
            ("\\{a,b}", &["\\{a,b}"]),
            (".{e..e}nv", &[".env"]),
            ("{c..a}", &["c", "b", "a"]),
            ("{1..3}", &["1", "2", "3"]),
            ("{3..1}", &["3", "2", "1"]),
            ("{1..7..3}", &["1", "4", "7"]),
            ("{08..10}", &["08", "09", "10"]),
            ("{-1..1}", &["-1", "0", "1"]),
            ("x.p{11..13}", &["x.p11", "x.p12", "x.p13"]),
            ("{a..}", &["{a..}"]),
            ("{aa..b}", &["{aa..b}"]),
            ("{x,}y", &["xy", "y"]),
        ];
        for (word, want) in cases {
            let got = brace_expand(word, &mut BraceBudget::new()).unwrap();
            assert_eq!(got, *want, "{word}");
        }
    }

    #[test]
    fn brace_expansion_refuses_what_it_cannot_bound() {
        let long = format!("{{a,b}}{}", "x".repeat(MAX_BRACE_WORD));
        let plain_long = format!("{{x}}{}", "x".repeat(MAX_BRACE_WORD));
        let cases: &[(&str, bool)] = &[
            ("{a..z}{a..z}", false),
            ("{1..1000}", false),
            ("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", true),
            ("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", false),
            (&long, false),
            (&plain_long, true),
        ];
        for (word, expands) in cases {
            assert_eq!(
                brace_expand(word, &mut BraceBudget::new()).is_some(),
                *expands,
                "{word}"
            );
        }
    }

    #[test]
    fn the_budget_is_per_command() {
        let mut budget = BraceBudget::new();
        let word = "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}";
        let mut expanded = 0;
        while brace_expand(word, &mut budget).is_some() {
            expanded += 1;
        }
        assert!((1..8).contains(&expanded), "{expanded}");
    }

    #[test]
    fn candidates_take_words_apart() {
        let cases: &[(&str, &[&str])] = &[
            (".env", &[".env"]),
            ("--file=.env", &["--file=.env", ".env"]),
            ("if=.env", &["if=.env", ".env"]),
            ("-f.env", &["-f.env", ".env"]),
            ("-d@.env", &["-d@.env", "@.env", ".env"]),
            ("@.env", &["@.env", ".env"]),
            ("HEAD:.env", &["HEAD:.env", ".env"]),
            ("--", &["--"]),
            ("-", &["-"]),
            ("-é.env", &["-é.env", ".env"]),
        ];
        for (word, want) in cases {
            assert_eq!(candidates(word), *want, "{word}");
        }
    }

    #[test]
    fn crude_split_keeps_every_piece() {
        let words: Vec<String> = crude_split("cat '.env' <x|$(cat \"a b\")")
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(words, ["cat", ".env", "x", "cat", "a", "b"]);
    }

    #[test]
    fn literal_pieces_of_patterns() {
        let cases: &[(&str, &[&str])] = &[
            ("@(.env|x)", &[".env", "x"]),
            (".e*", &[".e"]),
            ("*.pem", &[".pem"]),
            ("plain", &[]),
        ];
        for (name, want) in cases {
            let got: Vec<&str> = literal_pieces(name).collect();
            assert_eq!(got, *want, "{name}");
        }
    }
}
