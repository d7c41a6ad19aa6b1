//! Signalling processes wholesale: every process (`kill -9 -1`,
//! `killall5`, `pkill .`, `pkill -v x`), every process of a user
//! (`pkill -u bob`, `killall -u bob`), every process with a name
//! (`pkill -9 -f`, `killall -9`), init (`kill -INT 1`).

use toolgate_shell::words::Word;

/// A program call that signals every process, or every one of a kind.
pub(super) fn program(name: &str, args: &[Word]) -> Option<String> {
    match name {
        "pkill" => pkill(args),
        "killall" => killall(args),
        "kill" => kill_all_processes(args),
        _ => None,
    }
}

fn is_kill_signal(spec: &str) -> bool {
    let spec = spec.to_ascii_uppercase();
    let spec = spec.strip_prefix("SIG").unwrap_or(&spec);
    spec == "9" || spec == "KILL"
}

/// Whether `spec` is a signal as `-SPEC` gives it: a number or a name
/// (`9`, `KILL`, `SIGKILL`, `kill`, `RTMIN+4`), not option letters (`-U`,
/// `-P`, `-Ubob`).
fn is_signal(spec: &str) -> bool {
    const NAMES: &[&str] = &[
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "KILL", "USR1", "SEGV",
        "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CLD", "CONT", "STOP", "TSTP", "TTIN",
        "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "POLL", "PWR", "SYS",
        "RTMIN", "RTMAX",
    ];
    if spec.starts_with(|c: char| c.is_ascii_digit()) {
        return true;
    }
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let name = name.split(['+', '-']).next().unwrap_or(name);
    NAMES.contains(&name)
}

/// What a `pkill` command line selects.
#[derive(Debug, Default)]
struct Selection<'a> {
    kill: bool,
    full: bool,
    inverse: bool,
    /// `-u bob`, `-U bob`, `-G staff`: every process of a user or group.
    owner: Option<&'a str>,
    /// `-P 1`: the children of a process.
    parent: Option<&'a str>,
    patterns: Vec<&'a str>,
}

/// `pkill`'s options that take a value, short and long.
const PKILL_VALUES: &str = "dgGPstuUFOqr";
const PKILL_LONG_VALUES: &[&str] = &[
    "delimiter",
    "pgroup",
    "group",
    "parent",
    "session",
    "terminal",
    "euid",
    "uid",
    "pidfile",
    "signal",
    "ns",
    "nslist",
    "older",
    "cgroup",
    "queue",
    "runstates",
];

fn select(args: &[Word]) -> Selection<'_> {
    let mut out = Selection::default();
    let mut iter = args.iter().map(Word::text);
    let mut options_done = false;
    while let Some(t) = iter.next() {
        if options_done || t == "-" || !t.starts_with('-') {
            out.patterns.push(t);
            continue;
        }
        if t == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let value = if PKILL_LONG_VALUES.contains(&name) {
                attached.or_else(|| iter.next())
            } else {
                None
            };
            match (name, value) {
                ("signal", Some(v)) => out.kill |= is_kill_signal(v),
                ("full", _) => out.full = true,
                ("inverse", _) => out.inverse = true,
                ("euid" | "uid" | "group", Some(v)) => out.owner = Some(v),
                ("parent", Some(v)) => out.parent = Some(v),
                _ => {}
            }
            continue;
        }
        let cluster = t.get(1..).unwrap_or_default();
        // `-9`, `-KILL`, `-SIGKILL`, `-RTMIN+4`: a signal, not letters.
        if is_signal(cluster) {
            out.kill |= is_kill_signal(cluster);
            continue;
        }
        for (i, c) in cluster.char_indices() {
            if PKILL_VALUES.contains(c) {
                let attached = cluster.get(i + c.len_utf8()..).unwrap_or_default();
                let value = if attached.is_empty() {
                    iter.next()
                } else {
                    Some(attached)
                };
                match (c, value) {
                    ('u' | 'U' | 'G', Some(v)) => out.owner = Some(v),
                    ('P', Some(v)) => out.parent = Some(v),
                    _ => {}
                }
                break;
            }
            match c {
                'f' => out.full = true,
                'v' => out.inverse = true,
                _ => {}
            }
        }
    }
    out
}

/// Whether a regular expression matches every name: `.`, `.*`, `^`, `''`.
fn matches_everything(pattern: &str) -> bool {
    let core: String = pattern
        .chars()
        .filter(|c| !matches!(c, '^' | '$' | '(' | ')'))
        .collect();
    core.is_empty()
        || (core.contains('.') && core.chars().all(|c| matches!(c, '.' | '*' | '+' | '?')))
}

/// `pkill -9 -f PATTERN`, `pkill -v PATTERN`, `pkill -u bob`, `pkill .`:
/// signals every process, or every process of a user.
fn pkill(args: &[Word]) -> Option<String> {
    let s = select(args);
    if s.kill && s.full {
        return Some("`pkill -9 -f` kills every process whose command line matches".to_owned());
    }
    if s.inverse {
        return Some("`pkill -v` signals every process that does not match".to_owned());
    }
    if let Some(pattern) = s.patterns.iter().find(|p| matches_everything(p)) {
        return Some(format!("`pkill {pattern}` signals every process"));
    }
    if s.patterns.is_empty() {
        if let Some(owner) = s.owner {
            return Some(format!(
                "`pkill -u {owner}` signals every process of that user or group"
            ));
        }
        if s.parent == Some("1") {
            return Some("`pkill -P 1` signals every child of init, every service".to_owned());
        }
    }
    None
}

/// `killall -9 NAME`, `killall -s KILL NAME`, `killall -u bob` (every
/// process of a user), `killall -r .`.
fn killall(args: &[Word]) -> Option<String> {
    let mut iter = args.iter().map(Word::text);
    let mut user = None;
    let mut regex = false;
    let mut names = Vec::new();
    while let Some(t) = iter.next() {
        let kill = match t {
            "-s" | "--signal" => iter.next().is_some_and(is_kill_signal),
            "-u" | "--user" => {
                user = iter.next();
                false
            }
            "-o" | "-y" | "--older-than" | "--younger-than" | "-n" | "--ns" | "-Z"
            | "--context" => {
                iter.next();
                false
            }
            "-r" | "--regexp" => {
                regex = true;
                false
            }
            _ if !t.starts_with('-') => {
                names.push(t);
                false
            }
            _ => t
                .strip_prefix("--signal=")
                .or_else(|| t.strip_prefix("-s"))
                .filter(|s| !s.is_empty())
                .or_else(|| t.strip_prefix('-'))
                .is_some_and(is_kill_signal),
        };
        if kill {
            return Some("`killall -9` kills every process with that name".to_owned());
        }
    }
    if regex && let Some(name) = names.iter().find(|n| matches_everything(n)) {
        return Some(format!("`killall -r {name}` signals every process"));
    }
    match (user, names.is_empty()) {
        (Some(user), true) => Some(format!(
            "`killall -u {user}` signals every process of that user"
        )),
        _ => None,
    }
}

/// `kill -9 -1` signals every process the user may signal; `kill -INT 1`
/// signals init, which reboots, halts or powers off the machine on some
/// signals (systemd: `SIGINT`, `SIGRTMIN+4`, …).
fn kill_all_processes(args: &[Word]) -> Option<String> {
    let mut rest = args;
    let mut signal = "TERM";
    match rest.first().map(Word::text) {
        Some("-l" | "-L" | "--list" | "--table") => return None,
        Some("-s" | "-n") => {
            signal = rest.get(1).map_or("", Word::text);
            rest = rest.get(2..).unwrap_or_default();
        }
        Some("--") => rest = rest.get(1..).unwrap_or_default(),
        // The first option is the signal, even `-1` (SIGHUP).
        Some(t) if t.starts_with('-') => {
            signal = t.get(1..).unwrap_or_default();
            rest = rest.get(1..).unwrap_or_default();
        }
        _ => {}
    }
    let targets = rest.iter().map(Word::text).skip_while(|t| *t == "--");
    for target in targets {
        if target == "-1" {
            return Some("`kill -1` signals every process".to_owned());
        }
        if target == "1" && signal != "0" {
            return Some(format!(
                "`kill -{signal} 1` signals init, which can reboot or halt the machine"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_matching_every_name() {
        for p in ["", ".", ".*", "^", "$", "^.*$", ".+", "(.*)", "^."] {
            assert!(matches_everything(p), "{p:?}");
        }
        for p in ["node", "^node", "a.*", "[a-z]", "x|."] {
            assert!(!matches_everything(p), "{p:?}");
        }
    }

    #[test]
    fn signals() {
        for s in [
            "9",
            "KILL",
            "SIGKILL",
            "kill",
            "RTMIN+4",
            "SIGRTMIN+4",
            "INT",
        ] {
            assert!(is_signal(s), "{s}");
        }
        for s in ["U", "P", "Ubob", "f", "fx", "u"] {
            assert!(!is_signal(s), "{s}");
        }
    }
}
