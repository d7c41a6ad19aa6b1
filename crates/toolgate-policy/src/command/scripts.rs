//! Reading the small programs given to `sed` and `awk`.
//!
//! `sed -n '1,20p' f` and `awk '{print $1}' f` are among the commands agents
//! run most, and both only read. But both languages can also write files
//! (`sed 's/a/b/w out'`, `awk '{print > "out"}'`) and run commands
//! (`sed 's/x/id/e'`, `awk '{system("id")}'`). These scanners look for those
//! features and report the first one found; anything they do not understand
//! counts as found, so a miss makes a command `dangerous`, never `safe`.

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

/// What an `awk` program does beyond reading and printing, if anything.
pub(crate) fn awk_program_danger(program: &str) -> Option<&'static str> {
    let code = strip_awk_strings(program);
    if code.contains("system") {
        return Some("runs commands with `system()`");
    }
    if code.contains('@') {
        return Some("loads code with `@load` or `@include`");
    }
    if code.replace("||", "").contains('|') {
        return Some("pipes output to or from a command");
    }
    // `print … > "file"` and `printf … >> f` write files. A `>` in a
    // statement that prints is a redirection, not a comparison.
    for statement in code.split([';', '{', '}', '\n']) {
        if let Some(at) = statement.find("print")
            && statement.get(at..).is_some_and(|rest| rest.contains('>'))
        {
            return Some("writes to a file with `print >`");
        }
    }
    None
}

/// The program with the contents of its string literals removed.
fn strip_awk_strings(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let mut chars = program.chars();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push('"');
                }
                _ => {}
            }
        } else {
            if c == '"' {
                in_string = true;
            }
            out.push(c);
        }
    }
    out
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

    #[test]
    fn awk_programs() {
        let cases: &[(&str, bool)] = &[
            ("{print $1}", false),
            ("$3 > 5 {print $1}", false),
            ("NR==1 || NR==2", false),
            ("{print \"a > b | c\"}", false),
            ("BEGIN{FS=\":\"} {print $1}", false),
            ("{system(\"rm x\")}", true),
            ("{print > \"out\"}", true),
            ("{printf \"%s\", $0 >> \"f\"}", true),
            ("{print | \"sh\"}", true),
            ("{\"date\" | getline d}", true),
            ("@load \"filefuncs\"", true),
        ];
        for (program, dangerous) in cases {
            assert_eq!(
                awk_program_danger(program).is_some(),
                *dangerous,
                "{program}"
            );
        }
    }
}
