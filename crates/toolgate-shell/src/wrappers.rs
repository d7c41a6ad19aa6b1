//! Programs that run another program: `env`, `xargs`, `nice`, `timeout`,
//! `setsid`, `flock`, `busybox`, …
//!
//! A wrapper changes little about what a command does, so the command is
//! judged by the program it wraps, and the blocklist sees `sudo` in
//! `setsid -f nice -n 5 sudo ls` as in `sudo ls`. Each wrapper's options are
//! read with the shared option matcher ([`scan_prefix`]) so that an option
//! taking a value (`flock -w 5`, `chrt -T 10`) is not mistaken for the
//! program. Some wrappers add something of their own, which sets a floor
//! under the command's class: `flock` creates its lock file, `busybox`
//! runs applets toolgate does not know, `systemd-run` runs the command as a
//! system unit out of toolgate's reach.
//!
//! Wrappers that run a command given as a shell string (`watch ls -l`,
//! `script -c CMD`, `flock FILE -c CMD`) hand the string to the parser as an
//! inline script, as `sh -c` does.
//!
//! `sudo`, `doas`, `su`, `runuser`, `sg`, `pkexec` and `run0` are not
//! wrappers here: they change who runs the program, and the blocklist
//! refuses them.

use toolgate_core::CommandClass;

use crate::builtins::{Scope, judge_name};
use crate::forks;
use crate::judgement::{Judgement, dangerous, dev};
use crate::options::{Scanned, scan_prefix};
use crate::words::Word;
use table::{Wrapper, wrapper};

mod table;

/// Whether `name` is a wrapper that is a program of its own (so it runs
/// the wrapped command through `execve`).
pub fn execs(name: &str) -> bool {
    wrapper(name).is_some_and(|w| w.execs)
}

/// What unwrapping found.
#[derive(Debug, Default)]
pub struct Unwrapped {
    /// Index of the wrapped program in the words.
    pub start: usize,
    /// The wrappers seen through, outermost first.
    pub wrappers: Vec<String>,
    /// Index of each wrapper's word, outermost first.
    pub wrapper_words: Vec<usize>,
    /// `NAME=value` words given to `env`.
    pub assignments: Vec<Word>,
    /// Why the wrapped program may not be the one found, if it may not: a
    /// wrapper option toolgate does not know.
    pub problem: Option<String>,
    /// The least class the wrappers give the command, and why.
    pub floor: Option<Judgement>,
    /// The string `xargs -I` replaces with input in the wrapped command.
    pub replace: Option<String>,
    /// The wrapper that starts the command in the background and returns
    /// at once (`setsid -f`), as `&` does.
    pub forks: Option<String>,
    /// A shell script the last wrapper runs (`watch ls -l`, `script -c CMD`,
    /// `flock FILE -c CMD`), which is then the program.
    pub script: Option<Word>,
}

impl Unwrapped {
    fn raise(&mut self, j: Judgement) {
        if self.floor.as_ref().is_none_or(|f| j.class > f.class) {
            self.floor = Some(j);
        }
    }
}

enum Step {
    /// The wrapped program starts at this index.
    Next(usize),
    /// The wrapper does something else than run a program.
    Stop,
}

/// Finds the program behind the wrappers at the start of `words`.
///
/// `words` may be rewritten: `env -S 'a b'` splits its argument into words as
/// `env` does.
pub fn unwrap(words: &mut Vec<Word>) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if !word.is_literal() {
            break;
        }
        let name = basename(word.text()).to_owned();
        let Some(w) = wrapper(&name) else { break };
        if name == "env" {
            split_env_string(words, i, &mut out);
        }
        let step = step(words, i, w, &mut out);
        match step {
            Step::Stop => break,
            Step::Next(j) => {
                if words.get(j).is_none() {
                    // `env`, `xargs` or `nice` alone: the wrapper is the program.
                    break;
                }
                out.wrappers.push(name);
                out.wrapper_words.push(i);
                i = j;
            }
        }
    }
    out.start = i;
    out
}

fn step(words: &[Word], at: usize, w: &Wrapper, out: &mut Unwrapped) -> Step {
    let rest = words.get(at + 1..).unwrap_or_default();
    // `nice -10 cmd` is the historical spelling of `nice -n 10 cmd`; the
    // matcher's `-NUM` rule reads it.
    let (scanned, stop, problem) = scan_prefix(w.name, &w.spec, rest);
    if let Some(j) = problem {
        if j.class == CommandClass::Dangerous {
            out.raise(j);
        } else {
            out.problem.get_or_insert_with(|| {
                format!(
                    "`{}` has an option toolgate does not know, so the program it runs is unclear",
                    w.name
                )
            });
        }
    }
    if w.stop.iter().any(|s| scanned.has(&[s])) {
        return Step::Stop;
    }
    let mut next = at + 1 + stop;
    match w.name {
        "env" => {
            // `env -` is `env -i`.
            if words.get(next).is_some_and(|w| w.text() == "-") {
                next += 1;
                out.raise(dev(
                    "`env -` clears the environment, so the program is looked up in a default `PATH`",
                ));
            }
            // `env NAME=value … program`: the assignments come first.
            while let Some(word) = words.get(next)
                && is_assignment(word.text())
            {
                out.assignments.push(word.clone());
                next += 1;
            }
            if scanned.has(&["-i"]) {
                out.raise(dev(
                    "`env -i` clears the environment, so the program is looked up in a default `PATH`",
                ));
            }
            judge_unset(&scanned, &["-u"], "`env -u`", out);
        }
        "xargs" => {
            if let Some(j) = forks::xargs_parallel(&scanned) {
                out.raise(j);
            }
            out.replace = out
                .replace
                .take()
                .or_else(|| xargs_replace(words.get(at + 1..next).unwrap_or_default()));
            judge_unset(
                &scanned,
                &["--process-slot-var"],
                "`xargs --process-slot-var`",
                out,
            );
        }
        "setsid" if scanned.has(&["-f"]) => {
            out.forks = Some("setsid -f".to_owned());
        }
        "command" if scanned.has(&["-p"]) => {
            out.raise(dev("`command -p` looks the program up in a default `PATH`"));
        }
        "flock" => {
            if let Some(value) = scanned.values(&["-c"]).next() {
                out.script = Some(script_word(value.text, value.literal));
                return Step::Stop;
            }
            // `flock FILE -c CMD`: the option may follow the file.
            if words.get(next + 1).is_some_and(|w| {
                matches!(w.text(), "-c" | "--command") || w.text().starts_with("--command=")
            }) {
                let script = words.get(next + 1).and_then(|w| {
                    w.text()
                        .strip_prefix("--command=")
                        .map(|v| script_word(v, w.is_literal()))
                });
                out.script = script.or_else(|| words.get(next + 2).cloned());
                return Step::Stop;
            }
        }
        "script" => {
            // `script -c CMD [FILE]` runs CMD through the shell.
            if let Some(value) = scanned.values(&["-c"]).next() {
                out.script = Some(script_word(value.text, value.literal));
            }
            return Step::Stop;
        }
        "watch" if !scanned.has(&["-x"]) => {
            // `watch ls -l` runs `sh -c 'ls -l'`.
            let tail = words.get(next..).unwrap_or_default();
            if !tail.is_empty() {
                let literal = tail.iter().all(Word::is_literal);
                let text = tail.iter().map(Word::text).collect::<Vec<_>>().join(" ");
                out.script = Some(script_word(&text, literal));
            }
            return Step::Stop;
        }
        _ => {}
    }
    if let Some((class, reason)) = w.floor {
        out.raise(Judgement {
            class,
            reason: reason.to_owned(),
        });
    }
    next += w.fixed;
    if words.get(next).is_some_and(|w| w.text() == "--") && w.fixed > 0 {
        next += 1;
    }
    Step::Next(next)
}

fn script_word(text: &str, literal: bool) -> Word {
    if literal {
        Word::literal(text)
    } else {
        Word::literal(text).with_expansion()
    }
}

/// `env -u NAME` and `xargs --process-slot-var=NAME` change a variable the
/// program sees, like an assignment.
fn judge_unset(scanned: &Scanned<'_>, spellings: &[&str], by: &str, out: &mut Unwrapped) {
    let names: Vec<(String, bool)> = scanned
        .values(spellings)
        .map(|v| (v.text.to_owned(), v.literal))
        .collect();
    for (name, literal) in names {
        let j = if literal {
            judge_name(&name, Scope::Exported, by)
        } else {
            Some(dangerous(format!(
                "{by} changes a variable whose name is only known at run time"
            )))
        };
        if let Some(j) = j {
            out.raise(j);
        }
    }
}

/// `env -S STRING` / `--split-string=STRING`: env splits STRING into words.
fn split_env_string(words: &mut Vec<Word>, at: usize, out: &mut Unwrapped) {
    let mut i = at + 1;
    while let Some(word) = words.get(i) {
        let text = word.text();
        if !text.starts_with('-') || text == "-" || text == "--" {
            return;
        }
        let split = if text == "-S" || text == "--split-string" {
            words.get(i + 1).map(|w| (2, w.clone()))
        } else {
            text.strip_prefix("--split-string=")
                .or_else(|| text.strip_prefix("-S"))
                .map(|rest| (1, Word::literal(rest)))
        };
        match split {
            Some((taken, arg)) => {
                if !arg.is_literal() {
                    out.problem = Some("`env -S` splits a value only known at run time".to_owned());
                }
                let parts: Vec<Word> = arg.text().split_whitespace().map(Word::literal).collect();
                let end = (i + taken).min(words.len());
                words.splice(i..end, parts);
                return;
            }
            None => {
                // Options with a value in the next word.
                i += if matches!(text, "-u" | "-C" | "--unset" | "--chdir") {
                    2
                } else {
                    1
                };
            }
        }
    }
}

/// The replace string of `xargs -I R`, `-iR`, `-i`, `--replace[=R]`.
fn xargs_replace(options: &[Word]) -> Option<String> {
    let mut iter = options.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if t == "-I" {
            return Some(iter.next().unwrap_or("{}").to_owned());
        }
        if let Some(r) = t.strip_prefix("-I").or_else(|| t.strip_prefix("-i")) {
            return Some(if r.is_empty() { "{}" } else { r }.to_owned());
        }
        if let Some(r) = t.strip_prefix("--replace") {
            return Some(r.strip_prefix('=').unwrap_or("{}").to_owned());
        }
    }
    None
}

/// The last path component: `/usr/bin/env` → `env`.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether a word is `NAME=value` with a valid shell name.
pub fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::table::WRAPPERS;
    use super::*;
    use crate::options::validate;

    /// A command, its program, its wrappers, whether a wrapper option is
    /// unknown, and the floor the wrappers set.
    type Case = (
        &'static str,
        &'static str,
        &'static [&'static str],
        bool,
        Option<CommandClass>,
    );

    fn program(cmd: &str) -> (String, Vec<String>, bool, Option<CommandClass>) {
        let mut words: Vec<Word> = cmd.split_whitespace().map(Word::literal).collect();
        let out = unwrap(&mut words);
        let program = words
            .get(out.start)
            .map(|w| w.text().to_owned())
            .unwrap_or_default();
        (
            program,
            out.wrappers,
            out.problem.is_some(),
            out.floor.map(|f| f.class),
        )
    }

    #[test]
    fn wrappers_are_seen_through() {
        use CommandClass::{Dangerous as X, Dev as D};
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("env FOO=1 ls", "ls", &["env"], false, None),
            ("env -i PATH=/bin ls", "ls", &["env"], false, Some(D)),
            ("env -u HOME -C /tmp ls", "ls", &["env"], false, Some(X)),
            ("env -u FOO ls", "ls", &["env"], false, Some(D)),
            ("env -S rm -rf", "rm", &["env"], false, None),
            ("env", "env", &[], false, None),
            ("env --help", "env", &[], false, None),
            ("xargs", "xargs", &[], false, None),
            ("xargs -0 -n 1 rm", "rm", &["xargs"], false, None),
            ("xargs -I{} cp {} /tmp", "cp", &["xargs"], false, None),
            ("xargs -i echo", "echo", &["xargs"], false, None),
            ("xargs --process-slot-var=LD_PRELOAD ls", "ls", &["xargs"], false, Some(X)),
            ("xargs -P 4 rm", "rm", &["xargs"], false, None),
            ("xargs -P 100 rm", "rm", &["xargs"], false, Some(D)),
            ("xargs --max-procs=0 rm", "rm", &["xargs"], false, Some(D)),
            ("nice -n 10 make", "make", &["nice"], false, None),
            ("nice -10 make", "make", &["nice"], false, None),
            ("timeout 5 ls", "ls", &["timeout"], false, None),
            ("timeout -s KILL -k 1 5s ls", "ls", &["timeout"], false, None),
            ("timeout -sKILL 5 ls", "ls", &["timeout"], false, None),
            ("nohup ./server", "./server", &["nohup"], false, None),
            ("command ls", "ls", &["command"], false, None),
            ("command -v ls", "command", &[], false, None),
            ("command -p ls", "ls", &["command"], false, Some(D)),
            ("exec -a x ls", "ls", &["exec"], false, None),
            ("setsid -f sudo ls", "sudo", &["setsid"], false, None),
            ("flock -x f sudo ls", "sudo", &["flock"], false, Some(D)),
            ("flock -w 5 /tmp/l sudo ls", "sudo", &["flock"], false, Some(D)),
            ("ionice -c3 sudo ls", "sudo", &["ionice"], false, None),
            ("ionice -c 2 -n 7 ls", "ls", &["ionice"], false, None),
            ("ionice -p 42", "ionice", &[], false, None),
            ("chrt -f 1 sudo ls", "sudo", &["chrt"], false, None),
            ("chrt -T 10 -d 0 ls", "ls", &["chrt"], false, None),
            ("taskset -c 0 sudo ls", "sudo", &["taskset"], false, None),
            ("taskset 0x1 ls", "ls", &["taskset"], false, None),
            ("unbuffer sudo ls", "sudo", &["unbuffer"], false, Some(D)),
            ("busybox rm -rf /", "rm", &["busybox"], false, Some(D)),
            ("busybox --list", "busybox", &[], false, None),
            ("toybox sh -c id", "sh", &["toybox"], false, Some(D)),
            ("systemd-run --user -p X=1 sudo ls", "sudo", &["systemd-run"], false, Some(X)),
            ("strace -f -o log ls", "ls", &["strace"], false, Some(X)),
            ("time -o f ls", "ls", &["time"], false, Some(X)),
            ("watch -x ls", "ls", &["watch"], false, Some(D)),
            ("watch -n1 ls -l", "watch", &[], false, None),
            ("/usr/bin/env nice timeout 1 xargs rm", "rm", &["env", "nice", "timeout", "xargs"], false, None),
            ("env --frobnicate ls", "ls", &["env"], true, None),
            ("setsid --frob sudo ls", "sudo", &["setsid"], true, None),
            ("sudo ls", "sudo", &[], false, None),
        ];
        for (cmd, want, wrappers, problem, floor) in cases {
            let (got, got_wrappers, got_problem, got_floor) = program(cmd);
            assert_eq!(got, *want, "{cmd}");
            assert_eq!(got_wrappers, *wrappers, "{cmd}");
            assert_eq!(got_problem, *problem, "{cmd}");
            assert_eq!(got_floor, *floor, "{cmd}");
        }
    }

    #[test]
    fn scripts_given_to_wrappers_are_found() {
        let cases: &[(&str, &str)] = &[
            ("watch -n1 sudo ls", "sudo ls"),
            ("script -qc sudo_ls /dev/null", "sudo_ls"),
            ("flock f -c id", "id"),
            ("flock -c id f", "id"),
        ];
        for (cmd, want) in cases {
            let mut words: Vec<Word> = cmd.split_whitespace().map(Word::literal).collect();
            let out = unwrap(&mut words);
            assert_eq!(
                out.script.as_ref().map(Word::text).unwrap_or_default(),
                *want,
                "{cmd}"
            );
        }
    }

    #[test]
    fn every_table_is_valid() {
        for w in WRAPPERS {
            assert_eq!(validate(&w.spec), Ok(()), "{}", w.name);
        }
    }
}
