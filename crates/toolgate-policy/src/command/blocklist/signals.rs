//! Signalling processes wholesale: `kill -9 -1`, `pkill -9 -f`,
//! `killall -9`.

use super::super::words::Word;

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

/// `pkill -9 -f PATTERN`: kills every process whose command line matches.
fn pkill(args: &[Word]) -> Option<String> {
    let mut kill = false;
    let mut full = false;
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if t == "--signal" {
            kill |= iter.next().is_some_and(is_kill_signal);
        } else if let Some(sig) = t.strip_prefix("--signal=") {
            kill |= is_kill_signal(sig);
        } else if t == "--full" {
            full = true;
        } else if let Some(rest) = t.strip_prefix('-') {
            if is_kill_signal(rest) {
                kill = true;
            } else if !rest.starts_with('-')
                && rest.contains('f')
                && rest.chars().all(|c| c.is_ascii_lowercase())
            {
                full = true;
            }
        }
    }
    (kill && full)
        .then(|| "`pkill -9 -f` kills every process whose command line matches".to_owned())
}

/// `killall -9 NAME`, `killall -s KILL NAME`.
fn killall(args: &[Word]) -> Option<String> {
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        let kill = match t {
            "-s" | "--signal" => iter.next().is_some_and(is_kill_signal),
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
    None
}

/// `kill -9 -1`: signals every process the user may signal.
fn kill_all_processes(args: &[Word]) -> Option<String> {
    let mut rest = args;
    match rest.first().map(Word::text) {
        Some("-s" | "-n") => rest = rest.get(2..).unwrap_or_default(),
        // The first option is the signal, even `-1` (SIGHUP); `--` ends options.
        Some(t) if t.starts_with('-') => rest = rest.get(1..).unwrap_or_default(),
        _ => {}
    }
    rest.iter()
        .any(|a| a.text() == "-1")
        .then(|| "`kill -1` signals every process".to_owned())
}
