//! Lines that start processes without bound.
//!
//! A `safe` line runs unasked, and its kernel profile limits what each
//! process may touch, not how many processes there are: `while :; do sleep
//! 1000 & done` and `seq 2000 | xargs -P 2000 -I{} sleep 1` (which started
//! 1,507 processes before the machine's limit stopped it) only read, and
//! still take the machine's process table. So whatever can multiply
//! processes is at least `dev`, with the reason:
//!
//! - a command started in the background (`&`, `coproc`, `setsid -f`)
//!   where it may run again and again ([`CommandContext::in_loop`],
//!   [`CommandContext::background_repeats`]): in a loop, in a function
//!   that calls itself, in a script `xargs` or `find -exec` runs for every
//!   input (a loop run once in the background, `while :; do ls; done &`,
//!   is not one);
//! - `xargs -P N` with `N` above [`MAX_PARALLEL`], `-P 0` (as many as it
//!   can) or a count only known at run time;
//! - a line that starts more than [`MAX_AT_ONCE`] processes at once in
//!   pipeline stages and background jobs (`ls|ls|ls|…` thousands of times).
//!
//! A function that calls itself (directly or through other functions of the
//! line) in a pipeline or in the background doubles at every call: that is
//! the fork bomb, which the blocklist refuses under any name
//! ([`ParsedCommand::recursive_functions`]).
//!
//! [`CommandContext::in_loop`]: crate::CommandContext::in_loop
//! [`CommandContext::background_repeats`]: crate::CommandContext::background_repeats

use std::collections::{HashMap, HashSet};

use crate::judgement::{Judgement, dev, short};
use crate::model::{Kind, ParsedCommand, SimpleCommand};
use crate::options::Scanned;

/// The most processes `xargs -P` may run at once in a `safe` line.
pub const MAX_PARALLEL: u64 = 8;

/// The most processes a `safe` line may start at once: pipeline stages plus
/// background jobs.
pub const MAX_AT_ONCE: usize = 64;

/// `xargs -P N` running more than [`MAX_PARALLEL`] processes at once.
pub fn xargs_parallel(scanned: &Scanned<'_>) -> Option<Judgement> {
    // The last `-P` counts; each is checked, which is no less strict.
    scanned.values(&["-P"]).find_map(|value| {
        if !value.literal {
            return Some(dev(
                "`xargs -P` with a count only known at run time may run many processes at once",
            ));
        }
        match value.text.parse::<u64>() {
            Ok(0) => Some(dev("`xargs -P 0` runs as many processes at once as it can")),
            Ok(n) if n <= MAX_PARALLEL => None,
            Ok(n) => Some(dev(format!(
                "`xargs -P {n}` runs up to {n} processes at once"
            ))),
            Err(_) => Some(dev(format!(
                "`xargs -P {}` is not a count toolgate can read",
                short(value.text)
            ))),
        }
    })
}

/// A command started in the background where it may run again and again.
pub fn background_in_loop(cmd: &SimpleCommand) -> Option<Judgement> {
    let ctx = cmd.context();
    if cmd.kind != Kind::Simple {
        return None;
    }
    let how = if ctx.background_repeats {
        format!("{} &", short(&cmd.text()))
    } else if ctx.in_loop
        && let Some(wrapper) = &cmd.forks
    {
        format!("{wrapper} {}", short(&cmd.text()))
    } else {
        return None;
    };
    Some(dev(format!(
        "`{how}` starts processes in the background in a loop, where they can pile up without bound"
    )))
}

/// A line starting more than [`MAX_AT_ONCE`] processes at once.
pub fn fan_out(parsed: &ParsedCommand) -> Option<Judgement> {
    let commands = parsed.simple_commands();
    let background = commands
        .iter()
        .filter(|c| c.kind == Kind::Simple && (c.context().background || c.forks.is_some()))
        .count();
    let widest = commands
        .iter()
        .filter_map(|c| c.context().pipeline.map(|slot| slot.len))
        .max()
        .unwrap_or(0);
    let at_once = background + widest;
    (at_once > MAX_AT_ONCE).then(|| {
        dev(format!(
            "the line starts about {at_once} processes at once (`&` and `|`), more than {MAX_AT_ONCE}"
        ))
    })
}

/// Whether a program word calls the function it is in: `$FUNCNAME`.
pub fn is_funcname(program: &str) -> bool {
    matches!(program, "$FUNCNAME" | "${FUNCNAME}" | "${FUNCNAME[0]}")
}

/// Finds the functions of the line that call themselves, directly or
/// through each other, and marks every command in their bodies as run in a
/// loop. Returns those functions.
pub fn mark_recursion(commands: &mut [SimpleCommand]) -> Vec<String> {
    let defined: HashSet<&str> = commands
        .iter()
        .filter_map(|c| c.context().function.as_deref())
        .collect();
    let mut calls: HashMap<&str, HashSet<&str>> = HashMap::new();
    for cmd in commands.iter() {
        let Some(caller) = cmd.context().function.as_deref() else {
            continue;
        };
        if cmd.kind != Kind::Simple {
            continue;
        }
        let callee = if is_funcname(cmd.program()) {
            Some(caller)
        } else {
            defined.get(cmd.program()).copied()
        };
        if let Some(callee) = callee {
            calls.entry(caller).or_default().insert(callee);
        }
    }
    let mut recursive: Vec<String> = defined
        .iter()
        .filter(|f| reaches(&calls, f, f))
        .map(|f| (*f).to_owned())
        .collect();
    recursive.sort();
    for cmd in commands.iter_mut() {
        if cmd
            .context
            .function
            .as_ref()
            .is_some_and(|f| recursive.contains(f))
        {
            // A function's body runs again at every call, its `&` with it
            // (a definition resets `background`, so a `&` seen inside was
            // written inside).
            cmd.context.in_loop = true;
            cmd.context.background_repeats |= cmd.context.background;
        }
    }
    recursive
}

/// Whether `from` calls `to`, in one call or more.
fn reaches(calls: &HashMap<&str, HashSet<&str>>, from: &str, to: &str) -> bool {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = calls
        .get(from)
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default();
    while let Some(f) = stack.pop() {
        if f == to {
            return true;
        }
        if seen.insert(f)
            && let Some(next) = calls.get(f)
        {
            stack.extend(next.iter().copied());
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::background_in_loop;
    use crate::parse::parse_command;

    #[test]
    fn recursive_functions_are_found() {
        let cases: &[(&str, &[&str])] = &[
            ("f(){ f; }; f", &["f"]),
            ("f(){ g; }; g(){ f; }; f", &["f", "g"]),
            ("f(){ $FUNCNAME; }; f", &["f"]),
            ("f(){ sh -c 'f'; }; f", &["f"]),
            ("f(){ ls; }; g(){ f; }; g", &[]),
            ("f(){ g; }; g(){ ls; }; f; f", &[]),
            ("ls", &[]),
        ];
        for (line, want) in cases {
            let parsed = parse_command(line).unwrap_or_default();
            assert_eq!(parsed.recursive_functions(), *want, "{line}");
        }
    }

    #[test]
    fn background_jobs_started_again_and_again() {
        let cases: &[(&str, bool)] = &[
            ("while :; do sleep 1 & done", true),
            ("while :; do (sleep 1 &); done", true),
            ("for f in a b; do sleep 1 & done; wait", true),
            ("while :; do coproc sleep 1; done", true),
            ("while :; do setsid -f sleep 1; done", true),
            ("f(){ sleep 1 & f; }; f", true),
            ("xargs sh -c 'sleep 1 &'", true),
            ("while :; do sleep 1; done &", false),
            ("(while :; do sleep 1; done) &", false),
            ("sleep 1 & wait", false),
            ("setsid -f sleep 1", false),
            ("f(){ sleep 1 & }; f; f", false),
        ];
        for (line, want) in cases {
            let parsed = parse_command(line).unwrap_or_default();
            let got = parsed
                .simple_commands()
                .iter()
                .any(|c| background_in_loop(c).is_some());
            assert_eq!(got, *want, "{line}");
        }
    }

    #[test]
    fn loops_are_marked() {
        let cases: &[(&str, &[(&str, bool)])] = &[
            (
                "while :; do ls; done; pwd",
                &[(":", true), ("ls", true), ("pwd", false)],
            ),
            ("for f in a; do ls; done", &[("for", false), ("ls", true)]),
            (
                "f(){ ls; f; }; f",
                &[("ls", true), ("f", true), ("f", false)],
            ),
            ("find . -exec cat {} \\;", &[("find", false), ("cat", true)]),
            ("xargs sh -c 'ls'", &[("sh", false), ("ls", true)]),
            ("sh -c 'ls'", &[("sh", false), ("ls", false)]),
        ];
        for (line, want) in cases {
            let parsed = parse_command(line).unwrap_or_default();
            let got: Vec<(&str, bool)> = parsed
                .simple_commands()
                .iter()
                .filter(|c| !c.program().is_empty())
                .map(|c| (c.program(), c.context().in_loop))
                .collect();
            assert_eq!(got, *want, "{line}");
        }
    }
}
