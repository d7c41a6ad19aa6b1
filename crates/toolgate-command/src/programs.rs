//! The programs a `safe` line may run, for the kernel profile.
//!
//! A `safe` command runs under a profile that lets it `execve` only the
//! shell and the files named here (resolved through `PATH`), so this list
//! must hold every program the line starts and nothing the shell runs
//! itself:
//!
//! - each simple command's program as written (`ls`, `/usr/bin/ls`),
//!   nested ones included (`sh -c 'ls'` runs `sh`, then `ls`);
//! - the wrappers that are programs (`timeout 5 ls` runs `timeout`, which
//!   runs `ls`; `xargs cat` runs `xargs` and `cat`);
//! - the programs a listed program starts itself (`egrep` is a `/bin/sh`
//!   script running `grep`; `xargs` alone runs `echo`; `tar` runs a
//!   decompressor through `/bin/sh -c`);
//! - not bash's builtins and keywords (`echo`, `printf`, `test`, `[`, `cd`,
//!   `read`, `true`, `pwd`, …), which bash never `execve`s, unless a
//!   wrapper that is a program runs the file of that name (`env echo`,
//!   `xargs echo`, `exec echo`) or the line names it by path (`/bin/echo`).

use super::tables::implied_programs;
use toolgate_shell::builtins::is_builtin;
use toolgate_shell::model::SimpleCommand;
use toolgate_shell::wrappers;

/// Adds the programs `cmd` may run to `out`, each once, in order.
pub(crate) fn executed(cmd: &SimpleCommand, out: &mut Vec<String>) {
    if cmd.is_compound_part() || cmd.program().is_empty() {
        return;
    }
    let mut push = |program: &str| {
        if !out.iter().any(|p| p == program) {
            out.push(program.to_owned());
        }
    };
    // Whether the program is reached through `execve` even if it is named
    // like a builtin.
    let mut execve = false;
    for (name, spelling) in cmd.wrappers().iter().zip(cmd.wrapper_spellings()) {
        if wrappers::execs(name) {
            push(spelling);
            execve = true;
        } else if name == "exec" {
            execve = true;
        }
    }
    let program = cmd.program();
    let name = cmd.program_name();
    if execve || program.contains('/') || !is_builtin(name) {
        push(program);
        for implied in implied_programs(name) {
            push(implied);
        }
    }
}
