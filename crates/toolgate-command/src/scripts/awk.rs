//! Reading `awk` programs token by token, as awk does.
//!
//! What an awk program can do beyond reading and printing is visible in its
//! tokens: the name `system`, a `|` (`print | "cmd"`, `"cmd" | getline`,
//! gawk's `|&`), a `>` or `>>` ending a `print` statement, a gawk `@`
//! (`@load`, `@include`, an indirect call `@f()`, which can reach
//! `system`), and gawk's network files (`"/inet/tcp/…"`). The hard part is
//! knowing which characters are tokens at all: strings (`"a | b"`),
//! regular expressions (`/"/`, `/a|b/`) and comments (`# "`) hold text that
//! is data, and a lexer that takes one for another hides the code after it
//! (`/"/ { system("id") }` read as a string from the `"` on).
//!
//! # `/`: division or regular expression
//!
//! After an operand (a name, a number, a string, `)` or `]`) a `/` divides;
//! anywhere else it opens a regular expression. awk's parsers decide from
//! the grammar; the token before is the same information, with two
//! exceptions:
//!
//! - a `)` closing the condition of `if`, `while`, `for` or `switch` (or a
//!   function's parameters) is followed by a statement, which may be a
//!   regular expression (`if (x) /re/`), so the lexer remembers which
//!   parenthesis it closes;
//! - after `++`, `--`, `getline` and `length` without parentheses, awks
//!   disagree: `length /2/ 1` is `1.5` to gawk (a division) and `301` to
//!   mawk (a match), so a `/` there makes the program unreadable.
//!
//! A regular expression ends at the first `/` not escaped by `\`. A `/`
//! inside a bracket expression (`/[/]/`) ends it for some awks and not for
//! others, so that too is unreadable.
//!
//! # Output redirection
//!
//! In a `print` or `printf` statement, a `>` outside parentheses redirects
//! the output to a file (gawk's grammar says exactly this: `in_print &&
//! in_parens == 0`); inside them it compares (`print ($1 > 5)`). Writing
//! to `"/dev/stdout"` or `"/dev/stderr"` is printing.
//!
//! Whatever the lexer cannot read with certainty (an unterminated string or
//! regular expression, a character awk does not accept, unbalanced
//! brackets) is reported like a dangerous feature: the caller makes the
//! command `dangerous`, never `safe`. A program awk would reject runs
//! nothing, so reading it as dangerous costs nothing.

use super::Finding;

/// What an `awk` program does beyond reading and printing, if anything.
pub(crate) fn program_danger(program: &str) -> Option<Finding> {
    match lex(program) {
        Ok(tokens) => danger(&tokens).map(Finding::dangerous),
        Err(why) => Some(Finding::dangerous(why)),
    }
}

/// One token of an awk program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    /// A name: a variable, a function or a keyword (`print`, `getline`).
    Name(&'a str),
    Number,
    /// A string literal, as written between its quotes.
    Str(&'a str),
    Regex,
    /// A newline, which ends a statement.
    Newline,
    /// An operator or a punctuation mark: `{`, `>>`, `|&`, `@`.
    Punct(&'static str),
}

/// Why a program cannot be read with certainty, said after "the `awk`
/// program".
type Unreadable = &'static str;

const AMBIGUOUS_SLASH: Unreadable = "has a `/` that awks read differently (a division or a regular expression), so what it runs is unclear";

/// Keywords after which an operand, so a regular expression, may follow.
/// `getline` and `length` are not here: see the module docs.
const KEYWORDS: &[&str] = &[
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "function",
    "func",
    "if",
    "else",
    "while",
    "for",
    "do",
    "break",
    "continue",
    "next",
    "nextfile",
    "exit",
    "return",
    "delete",
    "print",
    "printf",
    "in",
    "switch",
    "case",
    "default",
];

/// Keywords whose `(` holds a condition or parameters, after which a
/// statement starts.
const CONTROL: &[&str] = &["if", "while", "for", "switch"];

/// Operators and punctuation, longest first.
const PUNCTUATION: &[&str] = &[
    "**=", "&&", "||", "|&", "==", "!=", "<=", ">=", ">>", "++", "--", "+=", "-=", "*=", "/=",
    "%=", "^=", "**", "!~", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^",
    "!", ">", "<", "|", "?", ":", "~", "$", "=", "@",
];

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token<'a>>,
    /// For each open `(`, whether it holds a condition or parameters.
    parens: Vec<bool>,
    /// Whether the last `)` closed a condition or parameters.
    closed_control: bool,
    braces: usize,
    brackets: usize,
}

fn lex(src: &str) -> Result<Vec<Token<'_>>, Unreadable> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
        parens: Vec::new(),
        closed_control: false,
        braces: 0,
        brackets: 0,
    };
    lexer.run()?;
    if !lexer.parens.is_empty() || lexer.braces != 0 || lexer.brackets != 0 {
        return Err("is incomplete (an unclosed `(`, `{` or `[`)");
    }
    Ok(lexer.tokens)
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn last(&self) -> Option<Token<'a>> {
        self.tokens.last().copied()
    }

    fn run(&mut self) -> Result<(), Unreadable> {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\u{b}' | '\u{c}' => self.pos += 1,
                '\n' => {
                    self.pos += 1;
                    self.tokens.push(Token::Newline);
                }
                '\\' => {
                    // A line continuation; awk accepts `\` nowhere else
                    // outside strings and regular expressions.
                    self.pos += 1;
                    if self.rest().starts_with("\r\n") {
                        self.pos += 2;
                    } else if self.peek() == Some('\n') {
                        self.pos += 1;
                    } else {
                        return Err("has a `\\` outside a string, which awk does not accept");
                    }
                }
                '#' => {
                    let end = self.rest().find('\n').unwrap_or(self.rest().len());
                    self.pos += end;
                }
                '"' => {
                    self.pos += 1;
                    let s = self.string()?;
                    self.tokens.push(Token::Str(s));
                }
                '/' if self.slash_opens_regex()? => {
                    self.pos += 1;
                    self.regex()?;
                    self.tokens.push(Token::Regex);
                }
                '0'..='9' | '.' if c != '.' || self.rest().get(1..2).is_some_and(is_digit) => {
                    let len = self
                        .rest()
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                        .unwrap_or(self.rest().len());
                    self.pos += len;
                    self.tokens.push(Token::Number);
                }
                _ if c.is_ascii_alphabetic() || c == '_' => {
                    let rest = self.rest();
                    let len = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    self.pos += len;
                    self.tokens
                        .push(Token::Name(rest.get(..len).unwrap_or_default()));
                }
                _ => self.punctuation()?,
            }
        }
        Ok(())
    }

    fn punctuation(&mut self) -> Result<(), Unreadable> {
        let rest = self.rest();
        let Some(p) = PUNCTUATION.iter().copied().find(|p| rest.starts_with(p)) else {
            return Err("has a character awk does not accept outside a string");
        };
        // `/=` after an operand divides and assigns; the `/` case in `run`
        // has already taken it as a regular expression anywhere else.
        match p {
            "(" => {
                let control = match self.tokens.as_slice() {
                    [.., Token::Name(k)] if CONTROL.contains(k) => true,
                    [.., Token::Name("function" | "func"), Token::Name(_)] => true,
                    _ => false,
                };
                self.parens.push(control);
            }
            ")" => {
                self.closed_control = self.parens.pop().ok_or("has an unbalanced `)`")?;
            }
            "{" => self.braces += 1,
            "}" => self.braces = self.braces.checked_sub(1).ok_or("has an unbalanced `}`")?,
            "[" => self.brackets += 1,
            "]" => {
                self.brackets = self
                    .brackets
                    .checked_sub(1)
                    .ok_or("has an unbalanced `]`")?;
            }
            _ => {}
        }
        self.pos += p.len();
        self.tokens.push(Token::Punct(p));
        Ok(())
    }

    /// Whether a `/` here opens a regular expression (see the module docs).
    fn slash_opens_regex(&self) -> Result<bool, Unreadable> {
        Ok(match self.last() {
            Some(Token::Number | Token::Str(_) | Token::Regex | Token::Punct("]")) => false,
            Some(Token::Name("getline" | "length") | Token::Punct("++" | "--")) => {
                return Err(AMBIGUOUS_SLASH);
            }
            Some(Token::Name(name)) => KEYWORDS.contains(&name),
            Some(Token::Punct(")")) => self.closed_control,
            None | Some(Token::Newline | Token::Punct(_)) => true,
        })
    }

    /// Reads a string after its opening `"`, returning its text.
    fn string(&mut self) -> Result<&'a str, Unreadable> {
        const UNTERMINATED: Unreadable = "has an unterminated string";
        let start = self.pos;
        loop {
            match self.bump().ok_or(UNTERMINATED)? {
                '\\' => {
                    self.bump().ok_or(UNTERMINATED)?;
                }
                '"' => return Ok(self.src.get(start..self.pos - 1).unwrap_or_default()),
                '\n' => return Err(UNTERMINATED),
                _ => {}
            }
        }
    }

    /// Reads a regular expression after its opening `/`.
    fn regex(&mut self) -> Result<(), Unreadable> {
        const UNTERMINATED: Unreadable = "has an unterminated regular expression";
        let mut in_bracket = false;
        loop {
            match self.bump().ok_or(UNTERMINATED)? {
                '\n' => return Err(UNTERMINATED),
                '\\' => {
                    self.bump().ok_or(UNTERMINATED)?;
                }
                '[' if !in_bracket => {
                    in_bracket = true;
                    // `[]…]` and `[^]…]`: a `]` first is a member.
                    if self.peek() == Some('^') {
                        self.pos += 1;
                    }
                    if self.peek() == Some(']') {
                        self.pos += 1;
                    }
                }
                '[' if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    // `[:alpha:]`, `[.x.]`, `[=e=]` inside a bracket.
                    let kind = self.bump().unwrap_or(':');
                    let close = [kind, ']'];
                    let close: String = close.iter().collect();
                    let rest = self.rest();
                    let end = rest.find(&close).ok_or(UNTERMINATED)?;
                    if rest.get(..end).is_some_and(|s| s.contains(['/', '\n'])) {
                        return Err(BRACKET_SLASH);
                    }
                    self.pos += end + close.len();
                }
                ']' if in_bracket => in_bracket = false,
                '/' if in_bracket => return Err(BRACKET_SLASH),
                '/' => return Ok(()),
                _ => {}
            }
        }
    }
}

const BRACKET_SLASH: Unreadable = "has a `/` inside a bracket expression of a regular expression, where awks disagree on where it ends";

fn is_digit(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

/// The first thing the tokens do beyond reading and printing.
fn danger(tokens: &[Token<'_>]) -> Option<&'static str> {
    let mut depth = 0usize;
    // The parenthesis depth of the `print` statement being read.
    let mut print_at: Option<usize> = None;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Name("system") => return Some("runs commands with `system()`"),
            Token::Name("print" | "printf") => print_at = Some(depth),
            Token::Punct("(") => depth += 1,
            Token::Punct(")") => depth = depth.saturating_sub(1),
            Token::Punct(";" | "{" | "}") | Token::Newline => print_at = None,
            Token::Punct("|" | "|&") => {
                return Some("pipes output to or from a command (`|`, `| getline`)");
            }
            Token::Punct("@") => {
                return Some(
                    "loads code or calls a function by name (`@load`, `@include`, `@f()`)",
                );
            }
            Token::Punct(">" | ">>")
                if print_at == Some(depth)
                    && !is_standard_stream(tokens.get(i + 1..).unwrap_or_default()) =>
            {
                return Some("writes to a file with `print >`");
            }
            Token::Str(s) if s.starts_with("/inet") => {
                return Some("opens a network connection (`/inet/…`)");
            }
            _ => {}
        }
    }
    None
}

/// Whether a redirection's target is `"/dev/stdout"` or `"/dev/stderr"`
/// and nothing more (`> "/dev/stderr" x` would name another file).
fn is_standard_stream(after: &[Token<'_>]) -> bool {
    matches!(
        after,
        [Token::Str("/dev/stdout" | "/dev/stderr")]
            | [
                Token::Str("/dev/stdout" | "/dev/stderr"),
                Token::Newline | Token::Punct(";" | "}"),
                ..
            ]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs() {
        #[rustfmt::skip]
        let cases: &[(&str, bool)] = &[
            // Only reads and prints.
            ("{print $1}", false),
            ("$3 > 5 {print $1}", false),
            ("NR==1 || NR==2", false),
            ("{print \"a > b | c\"}", false),
            ("BEGIN{FS=\":\"} {print $1}", false),
            ("/x/ {print}", false),
            ("/a|b/ {print}", false),
            ("/\"/ {n++} END {print n}", false),
            ("{ gsub(/\"/, \"\"); print }", false),
            ("/a/,/b/", false),
            ("{ s += $1 } END { print s / NR }", false),
            ("{ print $1 / 2, $2 /2 }", false),
            ("{ x = (1) / 2; y = a[1] / 2 }", false),
            ("{ x /= 2 }", false),
            ("$0 ~ /=/ { print }", false),
            ("{ print ($1 > 5) }", false),
            ("{ printf(\"%d\\n\", $1 > 5 ? 1 : 0) }", false),
            ("{ print $0 > \"/dev/stderr\" }", false),
            ("{ print > \"/dev/stdout\"; next }", false),
            ("# a comment with \" and /\n{ print }", false),
            ("{ print \"\\\"\" }", false),
            ("{ getline line < \"f\"; print line }", false),
            ("{ if (x) /re/ ; print }", false),
            ("/[[:alpha:]]+/ { print }", false),
            ("/[]a]/ { print }", false),
            ("{ print \\\n $1 }", false),
            // Runs or writes, wherever it hides.
            ("{system(\"rm x\")}", true),
            ("/\"/ { system(\"id\") }", true),
            ("/\"/ { print | \"sh\" }", true),
            ("/\"/ { \"id\" | getline x }", true),
            ("/\"/ { print > \"out\" }", true),
            ("/\\// { system(\"id\") }", true),
            ("/[\"]/ { system(\"id\") }", true),
            ("$0 ~ /\"/ { system(\"id\") }", true),
            ("{ gsub(/\"/, \"\") } { system(\"id\") }", true),
            ("# \"\n{ system(\"id\") }", true),
            ("BEGIN { x = \"\\\"\" } { system(\"id\") }", true),
            ("{ print x, y > \"out\" }", true),
            ("{ printf \"%s\", $0 >> \"f\" }", true),
            ("{ printf(\"%s\", $0) > \"f\" }", true),
            ("{ print > \"/dev/stderr\" \"x\" }", true),
            ("{ print | \"sh\" }", true),
            ("{ \"date\" | getline d }", true),
            ("BEGIN { \"date\" |& getline }", true),
            ("@load \"filefuncs\"", true),
            ("{ f = \"system\"; @f(\"id\") }", true),
            ("BEGIN { getline < \"/inet/tcp/0/example.com/80\" }", true),
            ("{ awk::system(\"id\") }", true),
            // Not readable with certainty.
            ("/[/]/ { print }", true),
            ("{ print length /2/ 1 }", true),
            ("{ print n++ /2/ 1 }", true),
            ("{ getline /x/ }", true),
            ("/abc", true),
            ("{ print \"abc }", true),
            ("{ print $1 ", true),
            ("{ print $1 ) }", true),
            ("{ print `id` }", true),
            ("{ x = 1 \\ 2 }", true),
        ];
        for (program, dangerous) in cases {
            assert_eq!(
                program_danger(program).is_some(),
                *dangerous,
                "{program}: {:?}",
                program_danger(program)
            );
        }
    }

    #[test]
    fn slash_after_an_operand_divides() {
        let tokens = lex("{ x = a / 2 / b }").unwrap_or_default();
        assert!(!tokens.contains(&Token::Regex), "{tokens:?}");
        let tokens = lex("{ x = a ~ /2/ }").unwrap_or_default();
        assert!(tokens.contains(&Token::Regex), "{tokens:?}");
    }
}
