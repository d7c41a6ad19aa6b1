//! Reading the small programs given to `sed` and `awk`.
//!
//! `sed -n '1,20p' f` and `awk '{print $1}' f` are among the commands agents
//! run most, and both only read. But both languages can also write files
//! (`sed 's/a/b/w out'`, `awk '{print > "out"}'`) and run commands
//! (`sed 's/x/id/e'`, `awk '{system("id")}'`). Each language is read with a
//! lexer of its own that knows where its strings, regular expressions and
//! comments start and end, so that a feature cannot hide behind text the
//! lexer took for data; anything it cannot read with certainty counts as
//! found, so a miss makes a command `dangerous`, never `safe`.

use toolgate_core::CommandClass;

pub(crate) mod awk;

/// What a script does beyond reading and printing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The least class of a command running the script.
    pub(crate) class: CommandClass,
    /// What the script does, said after "the `awk` program" or "the `sed`
    /// script": "runs commands with `system()`".
    pub(crate) what: &'static str,
}

impl Finding {
    fn dangerous(what: &'static str) -> Self {
        Self {
            class: CommandClass::Dangerous,
            what,
        }
    }
}

/// What a `sed` script does beyond printing, if anything.
pub(crate) fn sed_script_danger(script: &str) -> Option<&'static str> {
    let chars: Vec<char> = script.chars().collect();
    let mut s = Scanner {
        chars: &chars,
        i: 0,
    };
    loop {
        s.skip_while(|c| c.is_whitespace() || matches!(c, ';' | '{' | '}'));
        if s.done() {
            return None;
        }
        s.address();
        s.skip_while(|c| c == ' ' || c == '\t');
        if s.peek() == Some(',') {
            s.i += 1;
            s.skip_while(|c| c == ' ' || c == '\t');
            s.address();
        }
        s.skip_while(|c| c == ' ' || c == '\t' || c == '!');
        let Some(command) = s.next() else {
            return Some("has an address without a command");
        };
        match command {
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' => s.skip_line(),
            ':' | 'b' | 't' | 'T' | 'v' => s.skip_while(|c| !matches!(c, ';' | '\n' | '}')),
            's' => {
                let Some(delim) = s.next() else {
                    return Some("has an unfinished `s` command");
                };
                if delim == '\n' || delim == '\\' {
                    return Some("has an `s` command toolgate cannot read");
                }
                if !s.delimited(delim) || !s.delimited(delim) {
                    return Some("has an unfinished `s` command");
                }
                while let Some(flag) = s.peek() {
                    match flag {
                        'w' | 'W' => return Some("writes to a file (`s///w`)"),
                        'e' => return Some("runs a command (`s///e`)"),
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => s.i += 1,
                        _ => break,
                    }
                }
            }
            'y' => {
                let Some(delim) = s.next() else {
                    return Some("has an unfinished `y` command");
                };
                if !s.delimited(delim) || !s.delimited(delim) {
                    return Some("has an unfinished `y` command");
                }
            }
            'w' | 'W' => return Some("writes to a file (`w`)"),
            'e' => return Some("runs a command (`e`)"),
            'q' | 'Q' | 'l' | 'L' => s.skip_while(|c| c.is_ascii_digit() || c == ' '),
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F'
            | '{' | '}' => {}
            _ => return Some("uses a command toolgate does not know"),
        }
    }
}

struct Scanner<'a> {
    chars: &'a [char],
    i: usize,
}

impl Scanner<'_> {
    fn done(&self) -> bool {
        self.i >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.i += 1;
        c
    }

    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    /// Skips to the end of the line, honouring `\` continuations.
    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => self.i += 1,
                '\n' => return,
                _ => {}
            }
        }
    }

    /// Skips text up to and including an unescaped `delim`.
    fn delimited(&mut self, delim: char) -> bool {
        while let Some(c) = self.next() {
            if c == '\\' {
                self.i += 1;
            } else if c == delim {
                return true;
            }
        }
        false
    }

    /// Skips a line number, `$`, `first~step`, `+N`, `/re/` or `\cREc`.
    fn address(&mut self) {
        match self.peek() {
            Some('0'..='9' | '+' | '~') => {
                self.i += 1;
                self.skip_while(|c| c.is_ascii_digit() || c == '~');
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.delimited('/');
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.i += 1;
                if let Some(delim) = self.next() {
                    self.delimited(delim);
                }
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        let cases: &[(&str, bool)] = &[
            ("1,20p", false),
            ("s/foo/bar/g", false),
            ("s|a/b|c|", false),
            ("/^#/d", false),
            ("$!N;s/\\n/ /", false),
            ("-n", true),
            ("1~2p;=", false),
            ("/start/,/end/{s/a/b/;p}", false),
            ("\\%x%d", false),
            ("a\\\nhello", false),
            ("y/abc/xyz/", false),
            ("s/a/b/w out.txt", true),
            ("s/x/id/e", true),
            ("w out.txt", true),
            ("1e id", true),
            ("s/a/b", true),
            ("k", true),
            ("10q", false),
            ("/x/I p", false),
        ];
        for (script, dangerous) in cases {
            assert_eq!(sed_script_danger(script).is_some(), *dangerous, "{script}");
        }
    }
}
