//! Code a shell or interpreter reads from its standard input, which the
//! line does not show: `curl … | sh`, `cat x.sh | bash`, `python3 - <<EOF`.

use super::super::model::{Origin, RedirectionKind, SimpleCommand};
use super::super::tables::{DOWNLOADERS, STDIN_INTERPRETERS};
use super::super::words::Word;

fn is_stdin_interpreter(name: &str) -> bool {
    STDIN_INTERPRETERS.contains(&name) || name.starts_with("python") || name.starts_with("pypy")
}

/// `curl … | sh`, `wget -O- … | python3`, `sh <(curl …)`, `bash -c "$(curl …)"`.
pub(super) fn download_into_interpreter(
    commands: &[SimpleCommand],
    idx: usize,
    cmd: &SimpleCommand,
) -> Option<String> {
    let name = cmd.program_name();
    let interpreter = is_stdin_interpreter(name);
    let runs_code = interpreter || matches!(name, "source" | "." | "eval");
    if !runs_code {
        return None;
    }
    // Piped: a downloader earlier in the same pipeline.
    if let Some(slot) = cmd.context().pipeline
        && interpreter
        && slot.index > 0
        && reads_program_from_stdin(name, cmd.args())
    {
        let downloader = commands.iter().find(|c| {
            c.context()
                .pipeline
                .is_some_and(|s| s.id == slot.id && s.index < slot.index)
                && DOWNLOADERS.contains(&c.program_name())
        });
        if let Some(d) = downloader {
            return Some(format!(
                "piping `{}` into `{name}` runs downloaded code unseen",
                d.program_name()
            ));
        }
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
    let how = match own.map(super::super::model::Redirection::kind) {
        Some(RedirectionKind::HereDocument) => "a here-document",
        Some(RedirectionKind::HereString) => "a here-string",
        Some(_) => "a file",
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
