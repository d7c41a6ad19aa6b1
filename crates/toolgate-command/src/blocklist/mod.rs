//! Commands refused in every mode, yolo included (DESIGN.md §9, layer 1).
//!
//! The rules look at the parsed command, not at its spelling: `rm -fr /`,
//! `rm -r -f /`, `rm --recursive --force ~` and `/bin/rm -rf "$HOME"` are the
//! same command, and `echo 'rm -rf /'` is a different one (quoted text is
//! data). They see every simple command of the line, nested ones included
//! (`$(sudo id)`, `sh -c 'sudo id'`, `find / -exec rm -rf {} \;`,
//! `watch sudo id`), through every wrapper (`setsid -f nice -n 5 sudo id`,
//! `busybox rm -rf /`). Paths are normalised before they are matched
//! (`//dev/sda`, `/./dev/../dev/sda`), a glob that can reach `/` counts as
//! `/` (`/*`, `/{a,b}`, `/[a-z]*`), and a `cd /` earlier in the line makes
//! `rm -rf *` an `rm -rf /*`.
//!
//! What each rule protects has a module of its own: `paths.rs` (`rm -r` and
//! `find -delete` on `/`, `~` and system directories), `disks.rs` (disk
//! devices and `SysRq`), `signals.rs` (killing every process), `power.rs`
//! (stopping the machine), `stdin.rs` (code fed to a shell on its standard
//! input, `curl … | sh`); privileges, `chmod`, the fork bomb and the
//! programs refused outright are here.
//!
//! The blocklist stops accidents and the obvious; it cannot stop a determined
//! adversary (`eval "$(echo c3VkbyBpZA== | base64 -d)"` hides its command
//! until run time, and is `dangerous`, not blocked). The OS sandbox (layer 5)
//! is the boundary for that.

use super::toolchains;
use toolgate_shell::forks;
use toolgate_shell::model::{ParsedCommand, SimpleCommand};
use toolgate_shell::words::Word;
use toolgate_shell::wrappers::basename;

mod disks;
mod paths;
mod power;
mod signals;
mod stdin;

/// The reason the line is refused, if it is.
pub(crate) fn check(parsed: &ParsedCommand) -> Option<String> {
    let commands = parsed.simple_commands();
    let mut cwd = paths::Cwd::Unknown;
    for (idx, cmd) in commands.iter().enumerate() {
        if cmd.is_compound_part() && cmd.redirections().is_empty() {
            continue;
        }
        cwd = cwd.after(cmd);
        let reason = check_one(cmd, &cwd)
            .or_else(|| fork_bomb(cmd, parsed.recursive_functions()))
            .or_else(|| stdin::download_into_interpreter(commands, idx, cmd))
            .or_else(|| stdin::stdin_program(commands, cmd))
            .or_else(|| behind_unknown_wrapper(cmd))
            .or_else(|| behind_runner(cmd, &cwd, 0));
        if reason.is_some() {
            return reason;
        }
    }
    None
}

/// Programs refused whatever their arguments: they run commands as another
/// user, stop the machine, kill every process, or format or wipe a disk.
fn always_blocked(name: &str) -> Option<String> {
    match name {
        "sudo" | "sudoedit" | "su" | "doas" | "pkexec" | "run0" | "runuser" => Some(format!(
            "`{name}` runs commands with another user's privileges"
        )),
        "sg" => Some("`sg` runs commands with another group's privileges".to_owned()),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(format!("`{name}` stops the machine")),
        "killall5" => Some("`killall5` signals every process".to_owned()),
        _ => disks::wiper(name),
    }
}

fn check_one(cmd: &SimpleCommand, cwd: &paths::Cwd) -> Option<String> {
    if let Some(reason) = disks::redirections(cmd) {
        return Some(reason);
    }
    let name = cmd.program_name();
    let args = cmd.args();
    if let Some(reason) = always_blocked(name) {
        return Some(reason);
    }
    match name {
        "rm" => paths::rm(args, cwd),
        "find" => paths::find_delete(args, cwd),
        "chmod" => chmod(args),
        _ => disks::program(name, args)
            .or_else(|| signals::program(name, args))
            .or_else(|| power::program(name, args)),
    }
}

/// `chmod` making anything writable by every user: `777`, `0777`, `77`,
/// `1777`, `666`, `o+w`, `a+rwx`, `+w`, `o=u`, `-R 777`.
fn chmod(args: &[Word]) -> Option<String> {
    args.iter().find_map(|arg| {
        let t = arg.text();
        world_writable_mode(t).then(|| format!("`chmod {t}` makes files writable by every user"))
    })
}

fn world_writable_mode(mode: &str) -> bool {
    if !mode.is_empty() && mode.len() <= 5 && mode.chars().all(|c| ('0'..='7').contains(&c)) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|others| others & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let Some(op_at) = clause.find(['+', '=', '-']) else {
            return false;
        };
        let (who, actions) = clause.split_at(op_at);
        if !who.chars().all(|c| "ugoa".contains(c)) {
            return false;
        }
        // No `who` means `a` (less the umask, which toolgate does not know).
        let others = who.is_empty() || who.contains(['a', 'o']);
        if !others {
            return false;
        }
        // `+w`, `=rwx`, `+rw-x`, and copies (`o=u`) that may carry `w`.
        let mut op = '-';
        actions.chars().any(|c| match c {
            '+' | '=' | '-' => {
                op = c;
                false
            }
            'w' | 'u' | 'g' | 'o' => op != '-',
            _ => false,
        })
    })
}

/// `f(){ f|f& };f` and the like: a function that calls itself (directly,
/// through `$FUNCNAME`, or through other functions of the line) in a
/// pipeline or in the background multiplies until the machine stalls.
fn fork_bomb(cmd: &SimpleCommand, recursive: &[String]) -> Option<String> {
    let ctx = cmd.context();
    let function = ctx.function.as_deref()?;
    if !(ctx.pipeline.is_some() || ctx.background || cmd.forks.is_some()) {
        return None;
    }
    let callee = cmd.program();
    let recurses = callee == function
        || forks::is_funcname(callee)
        || (recursive.iter().any(|f| f == callee) && recursive.iter().any(|f| f == function));
    if !recurses {
        return None;
    }
    Some(if callee == function || forks::is_funcname(callee) {
        format!(
            "the function `{function}` calls itself in a pipeline or in the background: a fork bomb"
        )
    } else {
        format!(
            "the function `{function}` calls `{callee}`, which calls `{function}` again, in a pipeline or in the background: a fork bomb"
        )
    })
}

/// The command a runner runs (`uv run sudo ls`, `pnpm exec rm -rf /`,
/// `npx sudo x`), seen as the runner's own.
///
/// Runners nested deeper than a few levels are `dangerous` (`toolchains.rs`);
/// the blocklist looks as deep, no deeper.
fn behind_runner(cmd: &SimpleCommand, cwd: &paths::Cwd, depth: usize) -> Option<String> {
    const MAX_DEPTH: usize = 8;
    let inner = toolchains::runner_command(cmd.program_name(), cmd.args())?;
    if inner.is_empty() || depth > MAX_DEPTH {
        return None;
    }
    let inner = SimpleCommand::from_words(inner.to_vec());
    check_one(&inner, cwd).or_else(|| behind_runner(&inner, cwd, depth + 1))
}

/// A wrapper with an option toolgate does not know may hide where its
/// program starts (`nice -Q 5 sudo id`): every later word is checked as a
/// program.
fn behind_unknown_wrapper(cmd: &SimpleCommand) -> Option<String> {
    cmd.wrapper_problem.as_ref()?;
    cmd.words()
        .iter()
        .skip(1)
        .filter(|w| w.is_literal())
        .find_map(|w| always_blocked(basename(w.text())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        let cases: &[(&str, bool)] = &[
            ("777", true),
            ("0777", true),
            ("1777", true),
            ("77", true),
            ("7", true),
            ("2", true),
            ("666", true),
            ("755", false),
            ("644", false),
            ("0755", false),
            ("a+rwx", true),
            ("a+w", true),
            ("o+w", true),
            ("o=rwx", true),
            ("ugo=rwx", true),
            ("+w", true),
            ("=rwx", true),
            ("o=u", true),
            ("u+w", false),
            ("+x", false),
            ("go-w", false),
            ("a-w", false),
            ("-w", false),
            ("u+x,o+w", true),
            ("-R", false),
        ];
        for (mode, want) in cases {
            assert_eq!(world_writable_mode(mode), *want, "{mode}");
        }
    }
}
