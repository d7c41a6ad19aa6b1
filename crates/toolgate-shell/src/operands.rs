//! Every file a command could name: the operands a guardrail has to look at.

use crate::model::RedirectionKind;
use crate::parse::{ParseError, parse_command};

/// How a command names a possible file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OperandKind {
    /// A word of a simple command: its program, an option or an argument
    /// (`cat .env`, `cp .env x`, `grep KEY .env`).
    Word,
    /// The target of a redirection that opens a file (`< .env`, `> out`).
    Redirection,
    /// The text of a here-string (`cat <<< .env`).
    HereString,
}

/// One word a command could use as a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    text: String,
    kind: OperandKind,
    glob: bool,
}

impl Operand {
    /// The word with quotes removed; expansions stay in their source spelling.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where in the command the word stands.
    pub fn kind(&self) -> OperandKind {
        self.kind
    }

    /// Whether the shell may expand the word into other names (`.e*`,
    /// `{a,.env}`), so a caller has to match it against the files on disk.
    pub fn is_glob(&self) -> bool {
        self.glob
    }
}

/// Every operand of every simple command in `cmd`, nested ones included
/// (`$(cat .env)`, `bash -c 'cat .env'`, `find -exec`): each word, each
/// redirection target that names a file, and each here-string. Here-document
/// bodies and descriptor duplications (`2>&1`) are left out; they name no
/// file.
///
/// This is deliberately wider than "the arguments": a guardrail refusing
/// `.env` must see it in `cat a.txt .env`, `cat < .env`, `tee .env` and
/// `base64 .env` alike, and it is cheaper to look at a word that is not a
/// path than to miss one that is.
///
/// # Errors
///
/// A command the parser refuses (see [`parse_command`]); a caller enforcing
/// a rule should then fall back to a cruder split rather than let it through.
pub fn command_operands(cmd: &str) -> Result<Vec<Operand>, ParseError> {
    let parsed = parse_command(cmd)?;
    let mut out = Vec::new();
    for simple in parsed.simple_commands() {
        for word in simple.assignments() {
            // `X=.env cmd`: only the value can be a path.
            let text = word.text();
            let value = text.split_once('=').map_or(text, |(_, value)| value);
            out.push(Operand {
                text: value.to_owned(),
                kind: OperandKind::Word,
                glob: word.has_glob(),
            });
        }
        for word in simple.words() {
            out.push(Operand {
                text: word.text().to_owned(),
                kind: OperandKind::Word,
                glob: word.has_glob(),
            });
        }
        for redirection in simple.redirections() {
            let kind = match redirection.kind() {
                RedirectionKind::HereDocument => continue,
                RedirectionKind::HereString => OperandKind::HereString,
                RedirectionKind::DuplicateInput | RedirectionKind::DuplicateOutput => {
                    let target = redirection.target().text();
                    if target == "-" || target.bytes().all(|b| b.is_ascii_digit()) {
                        continue;
                    }
                    OperandKind::Redirection
                }
                _ => OperandKind::Redirection,
            };
            out.push(Operand {
                text: redirection.target().text().to_owned(),
                kind,
                glob: redirection.target().has_glob(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(cmd: &str) -> Vec<String> {
        command_operands(cmd)
            .unwrap()
            .into_iter()
            .map(|o| o.text)
            .collect()
    }

    #[test]
    fn every_way_of_naming_a_file() {
        let cases: &[(&str, &str)] = &[
            ("cat .env", ".env"),
            ("grep KEY .env", ".env"),
            ("cat < .env", ".env"),
            ("cp .env x", ".env"),
            ("base64 .env", ".env"),
            ("cat a.txt .env", ".env"),
            ("echo hi | tee .env", ".env"),
            ("cat <<< .env", ".env"),
            ("echo $(cat '.env')", ".env"),
            ("bash -c 'cat .env'", ".env"),
            ("echo x > .env", ".env"),
            ("X=.env env", ".env"),
        ];
        for (cmd, want) in cases {
            assert!(
                texts(cmd).iter().any(|t| t == want),
                "{cmd}: {:?}",
                texts(cmd)
            );
        }
    }

    #[test]
    fn globs_are_flagged() {
        let ops = command_operands("cat .e* 'x*'").unwrap();
        let glob: Vec<_> = ops
            .iter()
            .filter(|o| o.is_glob())
            .map(Operand::text)
            .collect();
        assert_eq!(glob, [".e*"]);
    }

    #[test]
    fn descriptor_duplications_are_not_files() {
        assert!(!texts("ls 2>&1").iter().any(|t| t == "1"));
    }
}
