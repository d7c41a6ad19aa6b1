//! Code a shell or interpreter reads from its standard input, which the
//! line does not show: `curl … | sh`, `cat x.sh | bash`, `python3 - <<EOF`;
//! and downloaded text run as code through `xargs` or `parallel`
//! (`curl … | xargs -0 bash -c`).

use super::super::tables::{DOWNLOADERS, STDIN_INTERPRETERS};
use toolgate_shell::model::{Origin, RedirectionKind, Script, SimpleCommand};
use toolgate_shell::words::Word;
use toolgate_shell::wrappers::basename;

fn is_stdin_interpreter(name: &str) -> bool {
    STDIN_INTERPRETERS.contains(&name) || name.starts_with("python") || name.starts_with("pypy")
}

/// `curl … | sh`, `wget -O- … | python3`, `curl … | xargs sh -c`,
/// `curl … | parallel`, `sh <(curl …)`, `bash -c "$(curl …)"`.
pub(super) fn download_into_interpreter(
    commands: &[SimpleCommand],
    idx: usize,
    cmd: &SimpleCommand,
) -> Option<String> {
    // Piped: a downloader earlier in the same pipeline, into a stage that
    // runs what it reads.
    if let Some(slot) = cmd.context().pipeline
        && slot.index > 0
        && let Some(how) = runs_input(cmd)
    {
        let downloader = commands.iter().find(|c| {
            c.context()
                .pipeline
                .is_some_and(|s| s.id == slot.id && s.index < slot.index)
                && DOWNLOADERS.contains(&c.program_name())
        });
        if let Some(d) = downloader {
            return Some(format!(
                "piping `{}` into {how} runs downloaded code unseen",
                d.program_name()
            ));
        }
    }
    let name = cmd.program_name();
    if !(is_stdin_interpreter(name) || matches!(name, "source" | "." | "eval")) {
        return None;
    }
    // Substituted: a downloader inside one of its words or redirections.
    let downloader = commands.iter().find(|c| {
        c.context().parent == Some(idx)
            && matches!(
                c.context().origin,
                Origin::CommandSubstitution | Origin::ProcessSubstitution
            )
            && DOWNLOADERS.contains(&c.program_name())
    });
    downloader.map(|d| {
        format!(
            "`{name}` runs code downloaded by `{}` unseen",
            d.program_name()
        )
    })
}

/// How a pipeline stage runs what it reads as code, if it does: a shell or
/// interpreter reading its program from standard input (through any
/// wrapper: `env bash`, `nice sh`, `busybox sh`), one given the input as
/// arguments by `xargs` (`xargs sh -c`, `xargs -I{} bash -c '{}'`), `eval`
/// or `sh -c` given a script built at run time (`bash -c "$(cat)"`), or
/// `parallel` running the input lines as commands.
fn runs_input(cmd: &SimpleCommand) -> Option<String> {
    let name = cmd.program_name();
    let interpreter = is_stdin_interpreter(name);
    let runs_code = interpreter || matches!(name, "source" | "." | "eval");
    if cmd.wrappers().iter().any(|w| w == "xargs") {
        return runs_code.then(|| format!("`xargs {name}`"));
    }
    if interpreter && reads_program_from_stdin(name, cmd.args()) {
        return Some(format!("`{name}`"));
    }
    // `bash -c "$(cat)"`, `while read l; do eval "$l"; done`: a script
    // only known at run time, which may well be what was read.
    if runs_code && matches!(cmd.script, Script::Opaque(_)) {
        return Some(format!("`{name}` with a script only known at run time"));
    }
    (name == "parallel" && parallel_runs_input(cmd.args())).then(|| "`parallel`".to_owned())
}

/// Whether GNU `parallel` runs its input as code: it has no command (each
/// input line is one), or its command is a shell, an interpreter or a
/// wrapper that may run one.
fn parallel_runs_input(args: &[Word]) -> bool {
    const WITH_VALUE: &[&str] = &[
        "-j",
        "--jobs",
        "-P",
        "--max-procs",
        "-N",
        "-n",
        "--max-args",
        "-L",
        "--max-lines",
        "-S",
        "--sshlogin",
        "--slf",
        "--sshloginfile",
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-I",
        "-C",
        "--colsep",
        "--timeout",
        "--joblog",
        "--results",
        "--tmpdir",
        "--workdir",
        "--wd",
        "-E",
        "--eof",
        "--env",
        "--basefile",
        "--bf",
        "--delay",
        "--memfree",
        "--load",
        "--nice",
        "--retries",
        "--block",
        "--recstart",
        "--recend",
        "--tagstring",
        "--tag-string",
        "--header",
        "--limit",
    ];
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if t.starts_with(":::") {
            return true;
        }
        if t.starts_with('-') {
            if WITH_VALUE.contains(&t) {
                iter.next();
            }
            continue;
        }
        let program = basename(t);
        return is_stdin_interpreter(program)
            || matches!(
                program,
                "eval"
                    | "source"
                    | "."
                    | "env"
                    | "xargs"
                    | "nice"
                    | "nohup"
                    | "timeout"
                    | "stdbuf"
                    | "setsid"
                    | "busybox"
                    | "toybox"
                    | "command"
                    | "exec"
            );
    }
    true
}

/// A shell or interpreter reading its program from standard input that is
/// fed by a pipe, a file, a here-document or a here-string: `cat x.sh | sh`,
/// `echo id | bash`, `sh < x.sh`, `bash <<EOF`, `python3 - <<EOF`,
/// `bash <<< "…"`, `{ sh; } < x.sh`. The program it runs is not on the
/// command line, so toolgate cannot judge it; `sh -c '…'` would be judged.
pub(super) fn stdin_program(commands: &[SimpleCommand], cmd: &SimpleCommand) -> Option<String> {
    let name = cmd.program_name();
    let runs_file = matches!(name, "source" | ".")
        && cmd
            .args()
            .first()
            .is_some_and(|a| STDIN_PATHS.contains(&a.text()));
    // `xargs` gives the program its input as arguments, not on stdin.
    if cmd.wrappers().iter().any(|w| w == "xargs")
        || !(runs_file || is_stdin_interpreter(name) && reads_program_from_stdin(name, cmd.args()))
    {
        return None;
    }
    let fix = format!("pass the script with `{name} -c` so toolgate can judge it");
    if let Some(slot) = cmd.context().pipeline
        && slot.index > 0
    {
        let feeder = commands
            .iter()
            .find(|c| {
                c.context()
                    .pipeline
                    .is_some_and(|s| s.id == slot.id && s.index + 1 == slot.index)
                    && !c.program().is_empty()
            })
            .map_or("a command", SimpleCommand::program_name);
        return Some(format!(
            "piping `{feeder}` into `{name}` runs a script toolgate cannot see; {fix}"
        ));
    }
    let own = cmd.redirections().iter().find(|r| {
        r.fd().is_none_or(|fd| fd == 0)
            && matches!(
                r.kind(),
                RedirectionKind::Input
                    | RedirectionKind::ReadWrite
                    | RedirectionKind::DuplicateInput
                    | RedirectionKind::HereDocument
                    | RedirectionKind::HereString
            )
    });
    let how = match own.map(toolgate_shell::model::Redirection::kind) {
        Some(RedirectionKind::HereDocument) => "a here-document",
        Some(RedirectionKind::HereString) => "a here-string",
        Some(_) => "a file",
        None if cmd.context().stdin_redirected
            && cmd.context().origin == Origin::ProcessSubstitution =>
        {
            "the command that writes to its `>(…)`"
        }
        None if cmd.context().stdin_redirected => "a redirected input",
        None => return None,
    };
    Some(format!(
        "`{name}` runs a script fed on its standard input from {how}, which toolgate does not judge; {fix}"
    ))
}

/// Paths that are the process's standard input.
const STDIN_PATHS: &[&str] = &["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// Whether an interpreter, given these arguments, reads its program from
/// standard input: no code option (`-c`, `-e`, `-m`, …) and no script
/// argument (or `-`, `/dev/stdin`).
fn reads_program_from_stdin(name: &str, args: &[Word]) -> bool {
    // Letters that give the code on the command line, and letters that take
    // a value in the next word.
    let (code, with_value): (&str, &str) = match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" => {
            ("c", "oO")
        }
        "perl" => ("eE", ""),
        "ruby" => ("e", "IrC"),
        "node" | "nodejs" => ("ep", "r"),
        "php" => ("rRBEFf", "dcz"),
        "lua" => ("e", "l"),
        _ if name.starts_with("python") || name.starts_with("pypy") => ("cm", "WXQ"),
        _ => ("ce", ""),
    };
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if STDIN_PATHS.contains(&t) || t == "-s" {
            return true;
        }
        if t == "--" {
            return iter
                .next()
                .is_none_or(|script| STDIN_PATHS.contains(&script));
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "eval" | "print" | "command") || long.starts_with("eval=") {
                return false;
            }
            if matches!(long, "rcfile" | "init-file" | "require" | "import") {
                iter.next();
            }
            continue;
        }
        if let Some(cluster) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if cluster.contains(|c| code.contains(c)) {
                return false;
            }
            if cluster
                .chars()
                .last()
                .is_some_and(|c| with_value.contains(c))
            {
                iter.next();
            }
            continue;
        }
        return false;
    }
    true
}
