//! Bash builtins: commands the shell runs itself, never through `execve`.
//!
//! Builtins cannot write files except through redirections (judged
//! elsewhere), but many change the shell: which program a name runs
//! (`hash -p`, `alias`, `enable`, assigning `PATH`), which code runs later
//! (`trap`, `mapfile -C`), and how later words are evaluated (`declare -i`,
//! `declare -n`, `set -k`). Each is judged here.

use crate::judgement::{Judgement, dangerous, dev, safe, short};
use crate::options::{Spec, scan};
use crate::variables::{VarClass, classify_variable, is_name, is_shell_local};
use crate::words::{Word, refers_to_variable};

/// Bash's builtins and reserved words. Bash runs these itself, so they are
/// never among the programs a line executes (unless a wrapper such as `env`
/// or `xargs` runs a program of the same name: `env echo` runs
/// `/usr/bin/echo`).
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    // Reserved words.
    "!",
    "[[",
    "]]",
    "((",
    "case",
    "coproc",
    "do",
    "done",
    "elif",
    "else",
    "esac",
    "fi",
    "for",
    "function",
    "if",
    "in",
    "select",
    "then",
    "time",
    "until",
    "while",
    "{",
    "}",
];

/// Whether bash runs `name` itself.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// Where a variable set by a command ends up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In the shell only (`x=1`, `read x`, `for x in`), unless the name is
    /// already exported.
    Shell,
    /// In the environment of the programs run (`X=1 cmd`, `env X=1 cmd`,
    /// `export X`, the `env` argument of `run_command`).
    Exported,
}

/// Judges setting, unsetting or reading into the variable `target` (a name,
/// possibly with a subscript: `a[i]`). `by` says how, for the reason:
/// "`read`", "the assignment".
///
/// `None` when it changes nothing that matters.
pub fn assign_target(target: &Word, scope: Scope, by: &str) -> Option<Judgement> {
    if !target.is_literal() {
        return Some(dangerous(format!(
            "{by} sets a variable whose name is only known at run time (`{}`)",
            short(target.raw())
        )));
    }
    judge_name(target.text(), scope, by)
}

/// [`assign_target`] for a name known as text.
pub fn judge_name(target: &str, scope: Scope, by: &str) -> Option<Judgement> {
    let (name, subscript) = match target.split_once('[') {
        Some((name, rest)) => (name, Some(rest.strip_suffix(']').unwrap_or(rest))),
        None => (target, None),
    };
    if let Some(subscript) = subscript
        && refers_to_variable(subscript)
    {
        return Some(dangerous(format!(
            "{by} evaluates the subscript of `{}` as arithmetic, which can run commands",
            short(target)
        )));
    }
    match classify_variable(name) {
        VarClass::Harmless => None,
        VarClass::CodeLoading => Some(dangerous(format!(
            "{by} sets `{name}`, which changes which programs run or what code they load"
        ))),
        VarClass::Unknown if scope == Scope::Shell && (is_shell_local(name) || !is_name(name)) => {
            None
        }
        VarClass::Unknown => Some(dev(format!(
            "{by} sets `{name}`, which toolgate does not know to be harmless to the programs that see it"
        ))),
    }
}

const READ: Spec = Spec::read(
    &[&[
        "-a=", "-d=", "-e", "-E", "-i=", "-n=", "-N=", "-p=", "-r", "-s", "-t=", "-u=",
    ]],
    true,
);

const MAPFILE: Spec = Spec {
    read: &[&["-d=", "-n=", "-O=", "-s=", "-t", "-u=", "-c="]],
    danger: &[("-C=", "runs a command for every few lines read")],
    numeric: false,
    complete: true,
};

const DECLARE: Spec = Spec {
    read: &[&[
        "-a", "-A", "-f", "-F", "-g", "-I", "-l", "-p", "-r", "-t", "-u", "-x",
    ]],
    danger: &[
        (
            "-i",
            "makes later assignments arithmetic, which evaluates variables' values as code",
        ),
        (
            "-n",
            "makes a name refer to another variable, whatever its name",
        ),
    ],
    numeric: false,
    complete: true,
};

const HASH: Spec = Spec {
    read: &[&["-r", "-d", "-l", "-t"]],
    danger: &[(
        "-p=",
        "makes a name run the program at a path of the caller's choosing",
    )],
    numeric: false,
    complete: true,
};

const UNSET: Spec = Spec::read(&[&["-f", "-v", "-n"]], true);

const WAIT: Spec = Spec::read(&[&["-f", "-n", "-p="]], true);

const CD: Spec = Spec::read(&[&["-L", "-P", "-e", "-@"]], true);

/// The names of `set -o NAME` that only change error handling or tracing.
const SET_OPTIONS: &[&str] = &[
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "pipefail",
    "noclobber",
    "noglob",
    "noexec",
    "posix",
    "monitor",
    "notify",
    "hashall",
    "braceexpand",
    "errtrace",
    "functrace",
    "physical",
    "privileged",
    "emacs",
    "vi",
    "histexpand",
    "history",
    "ignoreeof",
    "interactive-comments",
    "onecmd",
];

/// Judges a builtin; `None` for a name that is not one judged here (the
/// tables then decide).
pub fn builtin(name: &str, args: &[Word]) -> Option<Judgement> {
    Some(match name {
        ":" | "true" | "false" | "break" | "continue" | "exit" | "return" | "shift" | "pwd"
        | "dirs" | "pushd" | "popd" | "jobs" | "times" | "type" | "echo" | "help" | "caller"
        | "unalias" | "bg" | "fg" | "disown" | "umask" => safe(format!("`{name}` runs no program")),
        "test" | "[" => test(name, args),
        "cd" => match scan("cd", &CD, args) {
            Ok(_) => safe("`cd` runs no program"),
            Err(j) => j,
        },
        "ulimit" => {
            if args.iter().any(|a| !a.text().starts_with('-')) {
                dev("`ulimit` with a value changes the shell's resource limits")
            } else {
                safe("`ulimit` only prints limits")
            }
        }
        "printf" => printf(args),
        "read" => names_after(name, &READ, args, &["-a"], None),
        "mapfile" | "readarray" => {
            names_after(name, &MAPFILE, args, &[], Some(Word::literal("MAPFILE")))
        }
        "getopts" => match args.get(1) {
            Some(target) => done(assign_target(target, Scope::Shell, "`getopts`"), name),
            None => safe("`getopts` sets no variable"),
        },
        "wait" => names_after(name, &WAIT, args, &["-p"], None),
        "declare" | "typeset" | "local" | "readonly" | "export" => declare(name, args),
        "unset" => match scan("unset", &UNSET, args) {
            Ok(scanned) if scanned.has(&["-f"]) => safe("`unset -f` only removes functions"),
            Ok(scanned) => {
                for target in scanned.operands {
                    if let Some(j) = assign_target(target, Scope::Shell, "`unset`") {
                        return Some(j);
                    }
                }
                safe("`unset` only removes shell variables")
            }
            Err(j) => j,
        },
        "let" => match args
            .iter()
            .find(|a| !a.is_literal() || refers_to_variable(a.text()))
        {
            Some(arg) => dangerous(format!(
                "`let {}` evaluates variables' values as arithmetic, which can run commands",
                short(arg.raw())
            )),
            None => safe("`let` only computes numbers"),
        },
        "hash" => match scan("hash", &HASH, args) {
            Ok(_) => safe("`hash` only remembers where programs are"),
            Err(j) => j,
        },
        "enable" => enable(args),
        "trap" => trap(args),
        "alias" => match args
            .iter()
            .find(|a| a.text().contains('=') || !a.is_literal())
        {
            Some(a) => dangerous(format!(
                "`alias {}` makes a name run other commands",
                short(a.raw())
            )),
            None => safe("`alias` only lists aliases"),
        },
        "shopt" => {
            if args.iter().any(|a| a.text() == "expand_aliases")
                && !args.iter().any(|a| matches!(a.text(), "-u" | "-p" | "-q"))
            {
                dangerous("`shopt -s expand_aliases` makes aliases run other commands")
            } else {
                safe("`shopt` only changes how the shell matches and reports")
            }
        }
        "set" => set(args),
        _ => return None,
    })
}

fn done(j: Option<Judgement>, name: &str) -> Judgement {
    j.unwrap_or_else(|| safe(format!("`{name}` only sets shell variables")))
}

/// `read NAME…`, `mapfile NAME`, `wait -p NAME`: every variable named is set.
fn names_after(
    name: &str,
    spec: &Spec,
    args: &[Word],
    naming: &[&str],
    default: Option<Word>,
) -> Judgement {
    let scanned = match scan(name, spec, args) {
        Ok(s) => s,
        Err(j) => return j,
    };
    let by = format!("`{name}`");
    for value in scanned.values(naming) {
        let word = if value.literal {
            Word::literal(value.text)
        } else {
            Word::literal(value.text).with_expansion()
        };
        if let Some(j) = assign_target(&word, Scope::Shell, &by) {
            return j;
        }
    }
    let targets: Vec<Word> = if scanned.operands.is_empty() {
        default.into_iter().collect()
    } else {
        scanned.operands.iter().map(|w| (*w).clone()).collect()
    };
    for target in &targets {
        if let Some(j) = assign_target(target, Scope::Shell, &by) {
            return j;
        }
    }
    safe(format!("`{name}` only sets shell variables"))
}

fn printf(args: &[Word]) -> Judgement {
    match args.first().map(Word::text) {
        Some("-v") => match args.get(1) {
            Some(target) => done(assign_target(target, Scope::Shell, "`printf -v`"), "printf"),
            None => safe("`printf` runs no program"),
        },
        Some(t) if t.starts_with("-v") => done(
            judge_name(t.get(2..).unwrap_or_default(), Scope::Shell, "`printf -v`"),
            "printf",
        ),
        _ => safe("`printf` runs no program"),
    }
}

/// `test -v 'a[$i]'` evaluates the subscript; nothing else `test` does runs
/// code (`-eq` compares integers without evaluating them, unlike `[[ ]]`).
fn test(name: &str, args: &[Word]) -> Judgement {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg.text() == "-v"
            && let Some(target) = iter.next()
            && target.text().contains('[')
            && let Some(j) = assign_target(target, Scope::Shell, "`test -v`")
        {
            return j;
        }
    }
    safe(format!("`{name}` runs no program"))
}

fn declare(name: &str, args: &[Word]) -> Judgement {
    // `+x` (remove an attribute) reads like `-x` for these purposes;
    // `export -n` un-exports (the names are still judged).
    let normalised: Vec<Word> = args
        .iter()
        .filter(|a| !(name == "export" && a.text() == "-n"))
        .map(|a| match a.text().strip_prefix('+') {
            Some(rest) if a.is_literal() && !rest.is_empty() => Word::literal(&format!("-{rest}")),
            _ => a.clone(),
        })
        .collect();
    let scanned = match scan(name, &DECLARE, &normalised) {
        Ok(s) => s,
        Err(j) => return j,
    };
    if scanned.has(&["-f", "-F"]) {
        return if name == "export" || scanned.has(&["-x"]) {
            dev(format!(
                "`{name} -f` exports a function, which child shells run instead of a program"
            ))
        } else {
            safe(format!("`{name} -f` only lists functions"))
        };
    }
    let scope = if name == "export" || scanned.has(&["-x"]) {
        Scope::Exported
    } else {
        Scope::Shell
    };
    let by = format!("`{name}`");
    for word in scanned.operands {
        let text = word.text();
        let target = text
            .split_once('=')
            .map_or(text, |(n, _)| n.strip_suffix('+').unwrap_or(n));
        if target.contains(['$', '`']) || !word.is_literal() && !text.contains('=') {
            return dangerous(format!(
                "{by} sets a variable whose name is only known at run time (`{}`)",
                short(word.raw())
            ));
        }
        if let Some(j) = judge_name(target, scope, &by) {
            return j;
        }
    }
    safe(format!("`{name}` only sets shell variables"))
}

fn enable(args: &[Word]) -> Judgement {
    for arg in args {
        let t = arg.text();
        if let Some(cluster) = t.strip_prefix('-') {
            if cluster.contains('f') {
                return dangerous("`enable -f` loads a builtin from a shared library");
            }
            if cluster.contains('n') {
                return dangerous(
                    "`enable -n` turns a builtin off, so a program of that name runs instead",
                );
            }
            if !cluster.chars().all(|c| matches!(c, 'a' | 'p' | 's' | 'd')) {
                return dev(format!("`enable {t}` is not an option toolgate knows"));
            }
        }
    }
    safe("`enable` only lists or turns builtins on")
}

/// `trap CMD SIG…` runs `CMD` later; listing, resetting (`trap - SIG`) and
/// ignoring (`trap '' SIG`) run nothing.
fn trap(args: &[Word]) -> Judgement {
    let first = args.iter().find(|a| a.text() != "--");
    match first {
        None => safe("`trap` only lists traps"),
        Some(a) if matches!(a.text(), "-l" | "-p" | "-") => {
            safe("`trap` only lists or resets traps")
        }
        Some(a) if a.is_literal() && a.text().is_empty() => safe("`trap ''` only ignores signals"),
        Some(a) if a.is_literal() && a.text().bytes().all(|b| b.is_ascii_digit()) => {
            safe("`trap` only resets traps")
        }
        Some(a) => dangerous(format!(
            "`trap {}` runs a command when a signal arrives",
            short(a.raw())
        )),
    }
}

fn set(args: &[Word]) -> Judgement {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let t = arg.text();
        if !arg.is_literal() {
            return dev(format!(
                "`set {}` is only known at run time",
                short(arg.raw())
            ));
        }
        let cluster = match t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            Some(c) if !matches!(c, "-" | "") => c,
            _ => break,
        };
        for c in cluster.chars() {
            match c {
                'o' => {
                    let Some(option) = iter.next() else { break };
                    match option.text() {
                        "keyword" => return set_keyword(),
                        "allexport" => return set_allexport(),
                        o if SET_OPTIONS.contains(&o) => {}
                        o => {
                            return dev(format!(
                                "`set -o {}` is not an option toolgate knows",
                                short(o)
                            ));
                        }
                    }
                }
                'k' => return set_keyword(),
                'a' => return set_allexport(),
                'e' | 'u' | 'x' | 'v' | 'f' | 'C' | 'n' | 'm' | 'b' | 'h' | 'H' | 'B' | 'P'
                | 'E' | 'T' | 'p' | 't' => {}
                _ => return dev(format!("`set -{c}` is not an option toolgate knows")),
            }
        }
    }
    safe("`set` only changes error handling, tracing or the arguments")
}

fn set_keyword() -> Judgement {
    dangerous("`set -k` passes assignments anywhere in a command to its program")
}

fn set_allexport() -> Judgement {
    dev("`set -a` exports every variable set afterwards to the programs run")
}
