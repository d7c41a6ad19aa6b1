//! Programs that run another program: `env`, `xargs`, `nice`, `timeout`, …
//!
//! A wrapper changes little about what a command does, so the command is
//! judged by the program it wraps. `sudo` and `doas` are not wrappers here:
//! they change who runs the program, and the blocklist refuses them.

use super::words::Word;

/// How a wrapper's options are spelled.
struct Spec {
    /// Short options without an argument.
    flags: &'static str,
    /// Short options whose argument is attached or the next word.
    with_arg: &'static str,
    /// Short options whose argument, if any, is attached (`xargs -i{}`).
    optional_attached: &'static str,
    long_flags: &'static [&'static str],
    long_with_arg: &'static [&'static str],
    /// Options that make the wrapper do something else than run a program
    /// (`command -v`, `env --help`).
    stop: &'static [&'static str],
}

const ENV: Spec = Spec {
    flags: "i0v",
    with_arg: "uCS",
    optional_attached: "",
    long_flags: &[
        "ignore-environment",
        "null",
        "debug",
        "block-signal",
        "default-signal",
        "ignore-signal",
    ],
    long_with_arg: &["unset", "chdir", "split-string"],
    stop: &["help", "version", "list-signal-handling"],
};

const XARGS: Spec = Spec {
    flags: "0rtpxo",
    with_arg: "adEILnPs",
    optional_attached: "eil",
    long_flags: &[
        "null",
        "no-run-if-empty",
        "verbose",
        "interactive",
        "exit",
        "open-tty",
        "replace",
        "max-lines",
        "eof",
    ],
    long_with_arg: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    stop: &["help", "version", "show-limits"],
};

const NICE: Spec = Spec {
    flags: "",
    with_arg: "n",
    optional_attached: "",
    long_flags: &[],
    long_with_arg: &["adjustment"],
    stop: &["help", "version"],
};

const TIMEOUT: Spec = Spec {
    flags: "v",
    with_arg: "sk",
    optional_attached: "",
    long_flags: &["preserve-status", "foreground", "verbose"],
    long_with_arg: &["signal", "kill-after"],
    stop: &["help", "version"],
};

const TIME: Spec = Spec {
    flags: "pvaq",
    with_arg: "fo",
    optional_attached: "",
    long_flags: &["portability", "verbose", "append", "quiet"],
    long_with_arg: &["format", "output"],
    stop: &["help", "version"],
};

const COMMAND: Spec = Spec {
    flags: "p",
    with_arg: "",
    optional_attached: "",
    long_flags: &[],
    long_with_arg: &[],
    stop: &["v", "V"],
};

const EXEC: Spec = Spec {
    flags: "cl",
    with_arg: "a",
    optional_attached: "",
    long_flags: &[],
    long_with_arg: &[],
    stop: &[],
};

const STDBUF: Spec = Spec {
    flags: "",
    with_arg: "ioe",
    optional_attached: "",
    long_flags: &[],
    long_with_arg: &["input", "output", "error"],
    stop: &["help", "version"],
};

const NONE: Spec = Spec {
    flags: "",
    with_arg: "",
    optional_attached: "",
    long_flags: &[],
    long_with_arg: &[],
    stop: &["help", "version"],
};

/// What unwrapping found.
#[derive(Debug, Default)]
pub(crate) struct Unwrapped {
    /// Index of the wrapped program in the words.
    pub(crate) start: usize,
    /// The wrappers seen through, outermost first.
    pub(crate) wrappers: Vec<String>,
    /// `NAME=value` words given to `env`.
    pub(crate) assignments: Vec<Word>,
    /// Why the wrapped program may not be the one found, if it may not.
    pub(crate) problem: Option<String>,
    /// The string `xargs -I` replaces with input in the wrapped command.
    pub(crate) replace: Option<String>,
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
pub(crate) fn unwrap(words: &mut Vec<Word>) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if !word.is_literal() {
            break;
        }
        let name = basename(word.text()).to_owned();
        let step = match name.as_str() {
            "env" => unwrap_env(words, i, &mut out),
            "xargs" => {
                let step = skip_options(words, i + 1, &XARGS, &name, &mut out.problem);
                if let Step::Next(j) = step {
                    out.replace = out
                        .replace
                        .take()
                        .or_else(|| xargs_replace(words.get(i + 1..j).unwrap_or_default()));
                }
                step
            }
            "nice" => skip_nice(words, i + 1, &mut out.problem),
            "timeout" => match skip_options(words, i + 1, &TIMEOUT, &name, &mut out.problem) {
                // The duration comes before the program.
                Step::Next(j) if words.get(j).is_some() => Step::Next(j + 1),
                other => other,
            },
            "time" => {
                let step = skip_options(words, i + 1, &TIME, &name, &mut out.problem);
                if words
                    .iter()
                    .skip(i + 1)
                    .any(|w| w.text() == "-o" || w.text().starts_with("--output"))
                {
                    out.problem = Some("`time -o` writes its report to a file".to_owned());
                }
                step
            }
            "command" => skip_options(words, i + 1, &COMMAND, &name, &mut out.problem),
            "exec" => skip_options(words, i + 1, &EXEC, &name, &mut out.problem),
            "stdbuf" => skip_options(words, i + 1, &STDBUF, &name, &mut out.problem),
            "nohup" | "builtin" => skip_options(words, i + 1, &NONE, &name, &mut out.problem),
            _ => break,
        };
        match step {
            Step::Stop => break,
            Step::Next(j) => {
                if words.get(j).is_none() {
                    // `env`, `xargs` or `nice` alone: the wrapper is the program.
                    break;
                }
                out.wrappers.push(name);
                i = j;
            }
        }
    }
    out.start = i;
    out
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
pub(crate) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn unwrap_env(words: &mut Vec<Word>, at: usize, out: &mut Unwrapped) -> Step {
    let mut i = at + 1;
    loop {
        let Some(word) = words.get(i) else {
            return Step::Next(i);
        };
        let text = word.text();
        // `-S STRING` / `--split-string=STRING`: env splits STRING into words.
        let split = if text == "-S" || text == "--split-string" {
            words.get(i + 1).map(|w| (2, w.clone()))
        } else {
            text.strip_prefix("--split-string=")
                .or_else(|| text.strip_prefix("-S"))
                .map(|rest| (1, Word::literal(rest)))
        };
        if let Some((taken, arg)) = split {
            if !arg.is_literal() {
                out.problem = Some("`env -S` splits a value only known at run time".to_owned());
            }
            let parts: Vec<Word> = arg.text().split_whitespace().map(Word::literal).collect();
            let end = (i + taken).min(words.len());
            words.splice(i..end, parts);
            continue;
        }
        if text == "-" {
            i += 1;
            continue;
        }
        if text.starts_with('-') {
            match skip_one_option(words, i, &ENV, "env", &mut out.problem) {
                Some(next) => {
                    i = next;
                    continue;
                }
                None => return Step::Stop,
            }
        }
        if is_assignment(text) {
            out.assignments.push(word.clone());
            i += 1;
            continue;
        }
        return Step::Next(i);
    }
}

/// Whether a word is `NAME=value` with a valid shell name.
pub(crate) fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn skip_nice(words: &[Word], mut i: usize, problem: &mut Option<String>) -> Step {
    // The historical spelling `nice -10 cmd` sets the adjustment.
    while let Some(word) = words.get(i) {
        let text = word.text();
        let numeric = text
            .strip_prefix('-')
            .map(|n| n.strip_prefix('-').unwrap_or(n))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if numeric {
            i += 1;
        } else {
            break;
        }
    }
    skip_options(words, i, &NICE, "nice", problem)
}

fn skip_options(
    words: &[Word],
    mut i: usize,
    spec: &Spec,
    wrapper: &str,
    problem: &mut Option<String>,
) -> Step {
    while let Some(word) = words.get(i) {
        let text = word.text();
        if text == "--" {
            return Step::Next(i + 1);
        }
        if !text.starts_with('-') || text == "-" {
            return Step::Next(i);
        }
        match skip_one_option(words, i, spec, wrapper, problem) {
            Some(next) => i = next,
            None => return Step::Stop,
        }
    }
    Step::Next(i)
}

/// Skips the option at `i` (which starts with `-`); `None` when it is a
/// stopping option.
fn skip_one_option(
    words: &[Word],
    i: usize,
    spec: &Spec,
    wrapper: &str,
    problem: &mut Option<String>,
) -> Option<usize> {
    let text = words.get(i).map(Word::text).unwrap_or_default();
    if let Some(long) = text.strip_prefix("--") {
        let (name, has_value) = match long.split_once('=') {
            Some((name, _)) => (name, true),
            None => (long, false),
        };
        if spec.stop.contains(&name) {
            return None;
        }
        if spec.long_flags.contains(&name) {
            return Some(i + 1);
        }
        if spec.long_with_arg.contains(&name) {
            return Some(if has_value { i + 1 } else { i + 2 });
        }
        problem.get_or_insert_with(|| {
            format!("`{wrapper}` has an option toolgate does not know (`{text}`)")
        });
        return Some(i + 1);
    }
    let cluster = text.get(1..).unwrap_or_default();
    for (pos, c) in cluster.char_indices() {
        let mut buf = [0; 4];
        if spec.stop.contains(&&*c.encode_utf8(&mut buf)) {
            return None;
        }
        if spec.flags.contains(c) {
            continue;
        }
        if spec.optional_attached.contains(c) {
            return Some(i + 1);
        }
        if spec.with_arg.contains(c) {
            let attached = cluster.get(pos + c.len_utf8()..).unwrap_or_default();
            return Some(if attached.is_empty() { i + 2 } else { i + 1 });
        }
        problem.get_or_insert_with(|| {
            format!("`{wrapper}` has an option toolgate does not know (`{text}`)")
        });
        return Some(i + 1);
    }
    Some(i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(cmd: &str) -> (String, Vec<String>, bool) {
        let mut words: Vec<Word> = cmd.split_whitespace().map(Word::literal).collect();
        let out = unwrap(&mut words);
        let program = words
            .get(out.start)
            .map(|w| w.text().to_owned())
            .unwrap_or_default();
        (program, out.wrappers, out.problem.is_some())
    }

    #[test]
    fn wrappers_are_seen_through() {
        let cases: &[(&str, &str, &[&str], bool)] = &[
            ("env FOO=1 ls", "ls", &["env"], false),
            ("env -i PATH=/bin ls", "ls", &["env"], false),
            ("env -u HOME -C /tmp ls", "ls", &["env"], false),
            ("env -S rm -rf", "rm", &["env"], false),
            ("env", "env", &[], false),
            ("env --help", "env", &[], false),
            ("xargs", "xargs", &[], false),
            ("xargs -0 -n 1 rm", "rm", &["xargs"], false),
            ("xargs -I{} cp {} /tmp", "cp", &["xargs"], false),
            ("xargs -i echo", "echo", &["xargs"], false),
            ("nice -n 10 make", "make", &["nice"], false),
            ("nice -10 make", "make", &["nice"], false),
            ("timeout 5 ls", "ls", &["timeout"], false),
            ("timeout -s KILL -k 1 5s ls", "ls", &["timeout"], false),
            ("nohup ./server", "./server", &["nohup"], false),
            ("command ls", "ls", &["command"], false),
            ("command -v ls", "command", &[], false),
            ("exec -a x ls", "ls", &["exec"], false),
            (
                "/usr/bin/env nice timeout 1 xargs rm",
                "rm",
                &["env", "nice", "timeout", "xargs"],
                false,
            ),
            ("env --frobnicate ls", "ls", &["env"], true),
            ("sudo ls", "sudo", &[], false),
        ];
        for (cmd, want, wrappers, problem) in cases {
            let (got, got_wrappers, got_problem) = program(cmd);
            assert_eq!(got, *want, "{cmd}");
            assert_eq!(got_wrappers, *wrappers, "{cmd}");
            assert_eq!(got_problem, *problem, "{cmd}");
        }
    }
}
