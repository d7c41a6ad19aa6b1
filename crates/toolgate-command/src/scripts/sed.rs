//! Reading `sed` scripts command by command, as GNU sed does.
//!
//! A script is a list of commands, each with up to two addresses (`3`,
//! `$`, `first~step`, `/re/`, `\cREc`, `addr,+N`), an optional `!`, a
//! one-letter command and its arguments. What a command does is its letter:
//! `w`, `W` and the `s///w` flag write files, `e` and the `s///e` flag run
//! commands, `r` and `R` read a file the script names. The work is in
//! finding where each command's arguments end, so that no letter is taken
//! for data or data for a letter:
//!
//! - `s` takes any character but `\` and newline as its delimiter
//!   (`s|a|b|`, `s,a,b,`); in the regular expression, `\` escapes the next
//!   character and the delimiter does not end a bracket expression
//!   (`s/[/]/x/` matches a `/`; POSIX, and GNU, BSD and busybox sed alike),
//!   where `\` is an ordinary character and `[:alpha:]` a class; the
//!   replacement ends at the first delimiter not escaped; then the flags
//!   (`g`, `p`, `N`, `i`, `m`, `e`, `w FILE`), which may be separated by
//!   blanks (`s/a/b/ w f` writes `f`);
//! - `y` has two parts, escapes and no bracket expressions;
//! - a context address (`/re/`, `\%re%`) is read like `s`'s regular
//!   expression, then its `I` and `M` flags;
//! - `a`, `i`, `c` take the rest of the line as text, with `\` continuing it
//!   (`1a x; w f` appends the text `x; w f`); `r`, `R`, `w`, `W` and `e`
//!   take the rest of the line as a file name or a command;
//! - `:`, `b`, `t`, `T` and `v` take a label ending at a blank, `;` or `}`
//!   (GNU sed reads `b x w f` as a branch to `x`, then `w f`, and opens `f`
//!   when it reads the script, before it fails on the missing label);
//! - any other command ends at a `;`, a newline, a `}` or a `#`.
//!
//! A script toolgate cannot read, or that sed would reject, is reported as
//! unreadable, which the caller makes `dangerous`: GNU sed opens the files
//! of `w` commands while it reads the script, so a script that fails later
//! may still have written, and a reading that differs from sed's could
//! hide a command.

use super::Finding;

/// What a `sed` script does beyond printing, if anything: the most
/// dangerous thing found.
pub(crate) fn script_danger(script: &str) -> Option<Finding> {
    let chars: Vec<char> = script.chars().collect();
    let mut parser = Parser {
        chars: &chars,
        i: 0,
        depth: 0,
    };
    parser
        .run()
        .unwrap_or_else(|why| Some(Finding::dangerous(why)))
}

/// Why a script cannot be read, said after "the `sed` script".
type Unreadable = &'static str;

const UNFINISHED_S: Unreadable = "has an unfinished `s` command";
const UNFINISHED_Y: Unreadable = "has an unfinished `y` command";
const UNFINISHED_ADDRESS: Unreadable = "has an unfinished address";

struct Parser<'a> {
    chars: &'a [char],
    i: usize,
    /// Open `{` blocks.
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.i += 1;
        }
        c
    }

    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    fn skip_blanks(&mut self) {
        self.skip_while(|c| c == ' ' || c == '\t');
    }

    fn run(&mut self) -> Result<Option<Finding>, Unreadable> {
        let mut found: Option<Finding> = None;
        loop {
            self.skip_while(|c| c.is_whitespace() || c == ';');
            let Some(c) = self.peek() else { break };
            if c == '#' {
                self.skip_while(|c| c != '\n');
                continue;
            }
            let addressed = self.addresses()?;
            self.skip_blanks();
            if self.peek() == Some('!') {
                self.i += 1;
                self.skip_blanks();
                if self.peek() == Some('!') {
                    return Err("has more than one `!`");
                }
            }
            let command = self.bump().ok_or("has an address without a command")?;
            match command {
                '{' => self.depth += 1,
                '}' => {
                    if addressed {
                        return Err("has an address before `}`");
                    }
                    self.depth = self.depth.checked_sub(1).ok_or("has an unmatched `}`")?;
                    self.end_of_command()?;
                }
                '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
                | 'F' => self.end_of_command()?,
                'q' | 'Q' | 'l' | 'L' => {
                    self.skip_blanks();
                    self.skip_while(|c| c.is_ascii_digit());
                    self.end_of_command()?;
                }
                ':' => {
                    if addressed {
                        return Err("has an address before a label");
                    }
                    if !self.label() {
                        return Err("has a `:` without a label");
                    }
                }
                'b' | 't' | 'T' | 'v' => {
                    self.label();
                }
                'a' | 'i' | 'c' => self.text(),
                'r' | 'R' => {
                    self.rest_of_line();
                    found.get_or_insert(Finding::dev(
                        "reads a file it names (`r`), which toolgate does not see as an operand",
                    ));
                }
                'w' | 'W' => return Ok(Some(Finding::dangerous("writes to a file (`w`)"))),
                'e' => return Ok(Some(Finding::dangerous("runs a command (`e`)"))),
                's' => {
                    if let Some(danger) = self.substitute()? {
                        return Ok(Some(danger));
                    }
                }
                'y' => {
                    let delim = self.delimiter().ok_or(UNFINISHED_Y)?;
                    if !self.plain(delim) || !self.plain(delim) {
                        return Err(UNFINISHED_Y);
                    }
                    self.end_of_command()?;
                }
                _ => return Err("uses a command sed does not have"),
            }
        }
        if self.depth != 0 {
            return Err("has an unmatched `{`");
        }
        Ok(found)
    }

    /// `s/re/replacement/flags`, after the `s`: what its flags do.
    fn substitute(&mut self) -> Result<Option<Finding>, Unreadable> {
        let delim = self.delimiter().ok_or(UNFINISHED_S)?;
        self.regex(delim).map_err(|()| UNFINISHED_S)?;
        if !self.plain(delim) {
            return Err(UNFINISHED_S);
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9') => self.i += 1,
                Some('e') => {
                    return Ok(Some(Finding::dangerous(
                        "runs the result as a command (`s///e`)",
                    )));
                }
                Some('w') => return Ok(Some(Finding::dangerous("writes to a file (`s///w`)"))),
                _ => break,
            }
        }
        self.end_of_command()?;
        Ok(None)
    }

    /// The delimiter of `s` or `y`: any character but `\` and newline.
    fn delimiter(&mut self) -> Option<char> {
        self.bump().filter(|c| !matches!(c, '\\' | '\n'))
    }

    /// After a command: blanks, then `;`, a newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Result<(), Unreadable> {
        self.skip_blanks();
        match self.peek() {
            None | Some('}' | '#') => Ok(()),
            Some(';' | '\n') => {
                self.i += 1;
                Ok(())
            }
            Some(_) => Err("has extra characters after a command"),
        }
    }

    /// A label: blanks, then up to a blank, `;`, `}` or newline. Whether
    /// it is not empty.
    fn label(&mut self) -> bool {
        self.skip_blanks();
        let start = self.i;
        self.skip_while(|c| !(c.is_whitespace() || c == ';' || c == '}'));
        self.i > start
    }

    /// The text of `a`, `i`, `c`: to the end of the line, `\` escaping the
    /// next character (a newline included, which continues the text).
    fn text(&mut self) {
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '\n' => return,
                _ => {}
            }
        }
    }

    /// A file name or a command: the rest of the line.
    fn rest_of_line(&mut self) {
        self.skip_while(|c| c != '\n');
    }

    /// Text up to an unescaped `delim` (the replacement of `s`, the parts
    /// of `y`): whether `delim` was found. A newline must be escaped.
    fn plain(&mut self, delim: char) -> bool {
        while let Some(c) = self.bump() {
            match c {
                '\\' if self.bump().is_none() => return false,
                '\n' => return false,
                _ if c == delim => return true,
                _ => {}
            }
        }
        false
    }

    /// A regular expression up to an unescaped `delim` outside bracket
    /// expressions.
    fn regex(&mut self, delim: char) -> Result<(), ()> {
        loop {
            match self.bump().ok_or(())? {
                '\\' => {
                    self.bump().ok_or(())?;
                }
                '\n' => return Err(()),
                c if c == delim => return Ok(()),
                // With `]` as the delimiter, where a bracket expression
                // ends is anyone's guess.
                '[' if delim == ']' => return Err(()),
                '[' if delim != '[' => self.bracket()?,
                _ => {}
            }
        }
    }

    /// A bracket expression after its `[`: `]` first (or after `^`) is a
    /// member, `\` is an ordinary character, `[:class:]`, `[.x.]` and
    /// `[=x=]` are single members.
    fn bracket(&mut self) -> Result<(), ()> {
        if self.peek() == Some('^') {
            self.i += 1;
        }
        if self.peek() == Some(']') {
            self.i += 1;
        }
        loop {
            match self.bump().ok_or(())? {
                ']' => return Ok(()),
                '\n' => return Err(()),
                '[' if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.bump().ok_or(())?;
                    loop {
                        match self.bump().ok_or(())? {
                            '\n' => return Err(()),
                            c if c == kind && self.peek() == Some(']') => {
                                self.i += 1;
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Up to two addresses; whether there was one.
    fn addresses(&mut self) -> Result<bool, Unreadable> {
        if !self.address(false)? {
            return Ok(false);
        }
        self.skip_blanks();
        if self.peek() == Some(',') {
            self.i += 1;
            self.skip_blanks();
            if !self.address(true)? {
                return Err(UNFINISHED_ADDRESS);
            }
        }
        Ok(true)
    }

    /// A line number, `first~step`, `$`, `/re/` or `\cREc` (then `I`, `M`);
    /// as the second address also `+N` and `~N`. Whether there was one.
    fn address(&mut self, second: bool) -> Result<bool, Unreadable> {
        match self.peek() {
            Some('0'..='9') => {
                self.skip_while(|c| c.is_ascii_digit());
                if self.peek() == Some('~') {
                    self.i += 1;
                    self.skip_while(|c| c.is_ascii_digit());
                }
            }
            Some('+' | '~') if second => {
                self.i += 1;
                self.skip_while(|c| c.is_ascii_digit());
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.regex('/').map_err(|()| UNFINISHED_ADDRESS)?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.i += 1;
                let delim = self.delimiter().ok_or(UNFINISHED_ADDRESS)?;
                self.regex(delim).map_err(|()| UNFINISHED_ADDRESS)?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use toolgate_core::CommandClass;

    use super::*;

    #[test]
    fn scripts() {
        use CommandClass::{Dangerous as X, Dev as D, Safe as S};
        #[rustfmt::skip]
        let cases: &[(&str, CommandClass)] = &[
            // Only prints.
            ("1,20p", S),
            ("s/foo/bar/g", S),
            ("s|a/b|c|", S),
            ("/^#/d", S),
            ("$!N;s/\\n/ /", S),
            ("1~2p;=", S),
            ("/start/,/end/{s/a/b/;p}", S),
            ("/x/{p}", S),
            ("1{p;};p", S),
            ("\\%x%d", S),
            ("\\,[,],p", S),
            ("a\\\nhello", S),
            ("1a foo; w out", S),
            ("$a\\\nline one\\\nw out", S),
            ("y/abc/xyz/", S),
            ("y/[/]/", S),
            ("10q", S),
            ("q 5", S),
            ("l 3;p", S),
            ("/x/I p", S),
            ("1 ! p", S),
            ("1,+2p", S),
            ("0,/re/d", S),
            ("s/[/]/x/", S),
            ("s/[]/]/x/g", S),
            ("s/[^]/]/x/g", S),
            ("s/[[:alpha:]/]/x/g", S),
            ("s/[\\]/x/", S),
            ("s|[|]|x|", S),
            ("s[a[x[", S),
            ("s/x/y/ ; p", S),
            ("s/x/y/I p", S),
            ("s/a/b/2g", S),
            ("s/a/\\//", S),
            ("s/a/b\\\nc/", S),
            (":a;N;$!ba;s/\\n/ /g", S),
            (": a\np", S),
            ("/x/{bx};:x", S),
            ("b end;:end", S),
            ("# w out\np", S),
            ("#n\np", S),
            ("v 4.2;p", S),
            // Reads a file of its own.
            ("r other.txt", D),
            ("1R other.txt", D),
            ("$r /etc/hostname", D),
            // Writes or runs, wherever it hides.
            ("s/a/b/w out.txt", X),
            ("s/a/b/gw out.txt", X),
            ("s/a/b/ w out.txt", X),
            ("s/x/id/e", X),
            ("s/x/id/ge", X),
            ("s/[/]/x/e", X),
            ("s/[/]/x/w out", X),
            ("s|[|]|x|e", X),
            ("s/[]/]/x/e", X),
            ("s/[[:alpha:]/]/x/e", X),
            ("s/[\\]/x/e", X),
            ("/[/]/e id", X),
            ("\\,[,],w out", X),
            ("y/[/]/;e id", X),
            ("w out.txt", X),
            ("W out.txt", X),
            ("1e id", X),
            ("e", X),
            ("1{e id\n}", X),
            ("b x w out", X),
            (":a w out", X),
            ("t;w out", X),
            ("r x\nw out", X),
            ("1a\\\nx\nw out", X),
            ("p;s/a/b/;$!N;e", X),
            // Unreadable or rejected by sed.
            ("-n", X),
            ("s/a/b", X),
            ("s/[/]/x", X),
            ("s/a/b/x", X),
            ("s\\a\\b\\", X),
            ("s]a[]]x]", X),
            ("y/ab/x", X),
            ("k", X),
            ("1", X),
            ("p}", X),
            ("{p", X),
            ("1{p}p", X),
            ("1!!p", X),
            ("1,p", X),
            ("1}", X),
            ("/abc", X),
            ("/a\nb/p", X),
        ];
        for (script, want) in cases {
            let got = script_danger(script).map_or(CommandClass::Safe, |f| f.class);
            assert_eq!(got, *want, "{script:?}: {:?}", script_danger(script));
        }
    }
}
