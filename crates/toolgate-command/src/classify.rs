//! The class of one simple command: `safe`, `dev` or `dangerous`.

use std::borrow::Cow;
use std::collections::HashSet;

use toolgate_core::CommandClass;

use super::git::git;
use super::hooks;
use super::scripts::{awk, sed};
use super::specs;
use super::tables::{Check, Rule, known_danger, lookup};
use super::toolchains::{
    bun, cargo, deno, docker, dotnet, go, gradle, helm, kubectl, make, maven, node, npm, npx, pip,
    pnpm, python, runner, rustc, rustup, terraform, yarn,
};
use toolgate_shell::builtins::{self, Scope, assign_target};
use toolgate_shell::forks;
use toolgate_shell::judgement::{Judgement, dangerous, dev, safe, short};
use toolgate_shell::model::{Kind, Script, SimpleCommand};
use toolgate_shell::options::{Scanned, Spec, scan};
use toolgate_shell::words::Word;

/// Programs added by configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extra {
    pub(crate) safe: HashSet<String>,
    pub(crate) dev: HashSet<String>,
}

/// Directories whose programs are the system's own: `/usr/bin/ls` is `ls`.
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/usr/local/sbin/",
];

/// Classifies one simple command (see [`CommandPolicy`](super::CommandPolicy)
/// for the rules).
pub(crate) fn classify_simple(cmd: &SimpleCommand, extra: &Extra) -> Judgement {
    if let Some(word) = cmd.all_words().find(|w| w.has_substitution()) {
        let raw = word.raw();
        return dangerous(if raw.starts_with("<(") || raw.starts_with(">(") {
            format!(
                "`{}` runs another command through a process substitution",
                short(raw)
            )
        } else {
            format!("`{}` runs another command and uses its output", short(raw))
        });
    }
    if let Some(word) = cmd.all_words().find(|w| w.evaluates_variables()) {
        return dangerous(format!(
            "`{}` evaluates a variable's value as arithmetic, which can run commands (`a[$(cmd)]`)",
            short(word.raw())
        ));
    }
    for redirection in cmd.redirections() {
        if redirection.writes_file() {
            let fd = redirection
                .fd()
                .map(|fd| fd.to_string())
                .unwrap_or_default();
            return dangerous(format!(
                "`{fd}{}{}` writes to a file",
                redirection.kind().operator(),
                short(redirection.target().raw())
            ));
        }
    }
    let mut j = judge(cmd, extra);
    for floor in [cmd.wrapper_floor.clone(), forks::background_in_loop(cmd)]
        .into_iter()
        .flatten()
    {
        if floor.class > j.class {
            j = floor;
        }
    }
    j
}

fn judge(cmd: &SimpleCommand, extra: &Extra) -> Judgement {
    // An assignment before a program is in that program's environment; one
    // alone stays in the shell.
    let scope = if cmd.argv().is_empty() {
        Scope::Shell
    } else {
        Scope::Exported
    };
    let mut worst: Option<Judgement> = None;
    // `IFS= read -r line`: bash does not pass `IFS` on (it resets it in
    // every shell), so before a builtin that splits input it only changes
    // that splitting.
    let splits_input = matches!(cmd.program(), "read" | "mapfile" | "readarray");
    for assignment in cmd.assignments() {
        let text = assignment.text();
        let name = text.split_once('=').map_or(text, |(n, _)| n);
        if splits_input && name == "IFS" {
            continue;
        }
        let target = Word::literal(name.strip_suffix('+').unwrap_or(name));
        if let Some(j) = assign_target(&target, scope, "the assignment") {
            if j.class == CommandClass::Dangerous {
                return j;
            }
            worst.get_or_insert(j);
        }
    }
    let j = judge_program(cmd, extra);
    match worst {
        Some(w) if w.class > j.class => w,
        _ => j,
    }
}

fn judge_program(cmd: &SimpleCommand, extra: &Extra) -> Judgement {
    if cmd.kind == Kind::Keyword {
        return keyword(cmd);
    }
    if let Some(problem) = &cmd.wrapper_problem {
        return dangerous(problem.clone());
    }
    let Some(program) = cmd.argv().first() else {
        return safe(if cmd.redirections().is_empty() {
            "only sets shell variables"
        } else {
            "only opens files for reading"
        });
    };
    if !program.is_literal() {
        return dangerous(format!(
            "the program `{}` is only known at run time",
            program.raw()
        ));
    }
    let text = program.text();
    let name = cmd.program_name();
    if text.contains('/')
        && !SYSTEM_BIN_DIRS
            .iter()
            .any(|d| text.strip_prefix(d).is_some_and(|rest| !rest.contains('/')))
        && !matches!(name, "gradlew" | "mvnw")
    {
        return dangerous(format!(
            "`{text}` runs a program from a path, not a known tool"
        ));
    }
    match &cmd.script {
        Script::Parsed => return inline_shell(name, cmd.args()),
        Script::Opaque(reason) => return dangerous(reason.clone()),
        Script::None => {}
    }
    if extra.safe.contains(name) {
        return safe(format!("`{name}` is configured as safe"));
    }
    if extra.dev.contains(name) {
        return dev(format!("`{name}` is configured as a development tool"));
    }
    let args = input_args(cmd);
    let args: &[Word] = &args;
    // A builtin is the shell's own, unless a wrapper that is a program
    // (`env echo`) runs the program of that name; both only print.
    if (cmd.wrappers().is_empty()
        || cmd
            .wrappers()
            .iter()
            .all(|w| w == "command" || w == "builtin"))
        && let Some(j) = builtins::builtin(name, args)
    {
        return j;
    }
    match lookup(name) {
        None => dangerous(match known_danger(name) {
            Some(what) => format!("`{name}` {what}"),
            None => format!("`{name}` is not a known read-only or development program"),
        }),
        Some(Rule::Safe(spec)) => reader(name, spec, args),
        Some(Rule::AnyArgs) => safe(format!("`{name}` only reads or prints")),
        Some(Rule::NotSafe(why)) => dev(format!("`{name}` {why}")),
        Some(Rule::Dev) => dev(format!("`{name}` is a development tool")),
        Some(Rule::Check(check)) => self::check(check, name, args, extra),
    }
}

/// A shell given its script on the command line (`sh -c '…'`), or `eval`:
/// the script's commands are judged one by one (they are in the list). The
/// shell itself must not run start-up files, which may start any program:
/// `bash -l` and `bash -i` read profiles, `zsh` always reads `~/.zshenv`,
/// `fish` its `config.fish`, `csh` its `~/.cshrc`.
fn inline_shell(name: &str, args: &[Word]) -> Judgement {
    let parsed = safe(format!(
        "`{name}` runs a script whose commands are classified one by one"
    ));
    match name {
        "eval" => return parsed,
        "watch" => return dev("`watch` runs the command again and again until stopped"),
        "flock" => return dev("`flock` creates and locks its lock file"),
        "script" => {
            return if args
                .last()
                .is_some_and(|a| a.is_literal() && a.text() == "/dev/null")
            {
                dev("`script` records the session of the command")
            } else {
                dangerous("`script` writes the session to a typescript file")
            };
        }
        _ if !SHELLS_WITHOUT_STARTUP.contains(&name) => {
            return dev(format!(
                "`{name}` reads start-up files, which may run other programs"
            ));
        }
        _ => {}
    }
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if t == "--" || t == "-" || !(t.starts_with('-') || t.starts_with('+')) {
            break;
        }
        if t.starts_with("--") {
            if matches!(t, "--norc" | "--noprofile" | "--posix" | "--noediting") {
                continue;
            }
            return dev(format!(
                "`{name} {}` may read start-up files or change how the script runs",
                short(t)
            ));
        }
        let cluster = t.get(1..).unwrap_or_default();
        for c in cluster.chars() {
            match c {
                'c' | 'e' | 'u' | 'x' | 'v' | 'f' | 'n' | 'C' | 'E' | 'T' | 'h' | 'B' | 'P' => {}
                'o' => {
                    if !iter.next().is_some_and(|o| {
                        matches!(
                            o,
                            "pipefail"
                                | "errexit"
                                | "nounset"
                                | "xtrace"
                                | "verbose"
                                | "noglob"
                                | "noclobber"
                                | "posix"
                        )
                    }) {
                        return dev(format!(
                            "`{name} -o` with this option is not known to toolgate"
                        ));
                    }
                }
                _ => {
                    return dev(format!(
                        "`{name} -{c}` may read start-up files or change how the script runs"
                    ));
                }
            }
        }
    }
    parsed
}

/// Shells that read no start-up file when given `-c` without `-i` or
/// `-l` (bash reads `$BASH_ENV`, taken from toolgate's own environment).
const SHELLS_WITHOUT_STARTUP: &[&str] = &["sh", "bash", "dash", "ash", "ksh", "mksh"];

/// The arguments a program receives. `xargs` appends its input (or pastes
/// it at `-I` markers), which may turn into options of the program, so
/// that input stands as a word only known at run time.
fn input_args(cmd: &SimpleCommand) -> Cow<'_, [Word]> {
    let args = cmd.args();
    if !cmd.wrappers().iter().any(|w| w == "xargs") {
        return Cow::Borrowed(args);
    }
    let input = Word::literal("<input from xargs>").with_expansion();
    match cmd.xargs_replace.as_deref() {
        Some(marker) if !marker.is_empty() => Cow::Owned(
            args.iter()
                .map(|w| {
                    if w.text().contains(marker) {
                        Word::literal(w.text()).with_expansion()
                    } else {
                        w.clone()
                    }
                })
                .collect(),
        ),
        _ => {
            let mut owned = args.to_vec();
            owned.push(input);
            Cow::Owned(owned)
        }
    }
}

/// The words of a compound command: `for NAME in …` sets `NAME`.
fn keyword(cmd: &SimpleCommand) -> Judgement {
    let words = cmd.argv();
    if cmd.program() == "for"
        && let Some(target) = words.get(1)
        && let Some(j) = assign_target(target, Scope::Shell, "`for`")
    {
        return j;
    }
    safe(match cmd.program() {
        "" => "only redirects input".to_owned(),
        keyword => format!("`{}` runs no program itself", short(keyword)),
    })
}

/// A program with an option table: `safe` when every option is read-only.
fn reader(name: &str, spec: &Spec, args: &[Word]) -> Judgement {
    match scan(name, spec, args) {
        Ok(_) => safe(format!("`{name}` only reads or prints")),
        Err(j) => j,
    }
}

/// The words before `--`.
pub(super) fn options(args: &[Word]) -> impl Iterator<Item = &str> {
    args.iter().map(Word::text).take_while(|t| *t != "--")
}

/// Whether an option is given: a long name (`--output`, `--output=x`) or a
/// short letter, alone or in a cluster (`-o`, `-no`).
pub(super) fn has_option(args: &[Word], short: &[char], long: &[&str]) -> bool {
    options(args).any(|t| {
        if let Some(l) = t.strip_prefix("--") {
            let name = l.split_once('=').map_or(l, |(n, _)| n);
            long.contains(&name)
        } else if let Some(cluster) = t.strip_prefix('-') {
            cluster.chars().any(|c| short.contains(&c))
        } else {
            false
        }
    })
}

/// Arguments that are not options (after `--`, everything).
pub(super) fn positionals(args: &[Word]) -> impl Iterator<Item = &Word> {
    let mut after_dashes = false;
    args.iter().filter(move |w| {
        let t = w.text();
        if after_dashes {
            return true;
        }
        if t == "--" {
            after_dashes = true;
            return false;
        }
        !t.starts_with('-') || t == "-"
    })
}

/// The first positional argument and what follows it.
pub(super) fn subcommand<'a>(
    args: &'a [Word],
    with_value: &[&str],
) -> Option<(&'a str, &'a [Word])> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text();
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') {
            i += if with_value.contains(&t) { 2 } else { 1 };
            continue;
        }
        break;
    }
    let word = args.get(i)?;
    Some((word.text(), args.get(i + 1..).unwrap_or_default()))
}

/// Reads `args` against `spec`, then applies `then` to what was read.
fn with_spec(
    name: &str,
    spec: &Spec,
    args: &[Word],
    then: impl FnOnce(Scanned<'_>) -> Judgement,
) -> Judgement {
    match scan(name, spec, args) {
        Ok(scanned) => then(scanned),
        Err(j) => j,
    }
}

fn check(check: Check, name: &str, args: &[Word], extra: &Extra) -> Judgement {
    match check {
        Check::Find => reader("find", &specs::FIND, args),
        Check::Uniq | Check::Xxd => {
            let spec = if check == Check::Uniq {
                &specs::UNIQ
            } else {
                &specs::XXD
            };
            with_spec(name, spec, args, |s| {
                if s.operands.len() >= 2 {
                    dangerous(format!("`{name} INPUT OUTPUT` writes to OUTPUT"))
                } else {
                    safe(format!("`{name}` only prints"))
                }
            })
        }
        Check::Tee => with_spec("tee", &specs::TEE, args, |s| {
            match s
                .operands
                .iter()
                .find(|w| !(w.is_literal() && w.text() == "/dev/null"))
            {
                Some(file) => dangerous(format!("`tee {}` writes to a file", short(file.raw()))),
                None => safe("`tee` with no file only copies its input"),
            }
        }),
        Check::Sed => sed(args),
        Check::Awk => awk(name, args),
        Check::Date => with_spec("date", &specs::DATE, args, |s| {
            match s.operands.iter().find(|w| !w.text().starts_with('+')) {
                Some(w) => dangerous(format!("`date {}` sets the system clock", short(w.raw()))),
                None => safe("`date` only prints"),
            }
        }),
        Check::Hostname => with_spec("hostname", &specs::HOSTNAME, args, |s| {
            if s.operands.is_empty() {
                safe("`hostname` only prints")
            } else {
                dangerous("`hostname NAME` sets the host name")
            }
        }),
        Check::Pager => pager(name, args),
        Check::Yq => {
            if has_option(args, &['i'], &["inplace"]) {
                dangerous("`yq -i` edits files in place")
            } else {
                dev("`yq` may be a Python program that runs `jq` (not vouched for as read-only)")
            }
        }
        Check::Tar => tar(args),
        Check::Unzip => with_spec("unzip", &specs::UNZIP, args, |s| {
            if s.has(&["-l", "-t", "-Z", "-z", "-p", "-c", "-v"]) {
                safe("`unzip -l` only lists or prints")
            } else {
                dangerous("`unzip` extracts files")
            }
        }),
        Check::Git => git(args),
        Check::Cargo => cargo(args),
        Check::Rustc => rustc(args),
        Check::Rustup => rustup(args),
        Check::Go => go(args),
        Check::Npm => npm(args),
        Check::Pnpm => pnpm(args, extra),
        Check::Yarn => yarn(args, extra),
        Check::Bun => bun(args),
        Check::Pip => pip(args),
        Check::Python => python(name, args, extra),
        Check::Node => node(name, args),
        Check::Deno => deno(args),
        Check::Interpreter => dangerous(format!("`{name}` runs arbitrary code")),
        Check::Shell => dangerous(format!("`{name}` runs a shell script")),
        Check::Source => dangerous(format!("`{name}` runs a script in the current shell")),
        Check::Docker => docker(name, args),
        Check::Kubectl => kubectl(name, args),
        Check::Helm => helm(args),
        Check::Terraform => terraform(name, args),
        Check::Make => make(args),
        Check::Maven => maven(args),
        Check::Gradle => gradle(args),
        Check::Dotnet => dotnet(args),
        Check::DevHooks => hooks::dev_tool(name, args)
            .unwrap_or_else(|| dev(format!("`{name}` is a development tool"))),
        Check::Runner => runner(name, args, extra),
        Check::Npx => npx(name, args, extra),
        Check::WrapperAlone => safe(format!("`{name}` given no program runs nothing harmful")),
    }
}

/// `sed`: its options (`-i` edits in place, `-f` runs a script file), then
/// its script (`w` writes, `e` runs a command, `r` reads a file).
fn sed(args: &[Word]) -> Judgement {
    with_spec("sed", &specs::SED, args, |s| {
        // `sed -e A -e B` reads the pieces as one script, a newline between
        // them (`-e 'a\' -e text` continues the text); without one, the
        // first operand is the script.
        let mut scripts: Vec<(&str, bool)> =
            s.values(&["-e"]).map(|v| (v.text, v.literal)).collect();
        if scripts.is_empty() {
            match s.operands.first() {
                Some(first) => scripts.push((first.text(), first.is_literal())),
                None => return safe("`sed` with no script prints its usage"),
            }
        }
        if scripts.iter().any(|(_, literal)| !literal) {
            return dangerous("the `sed` script is only known at run time");
        }
        match sed::script_danger(&joined(&scripts)) {
            Some(found) => found.judgement("the `sed` script"),
            None => safe("`sed` without `-i` only prints"),
        }
    })
}

/// The pieces of a script given with several `-e`, as one text.
fn joined(pieces: &[(&str, bool)]) -> String {
    pieces
        .iter()
        .map(|(text, _)| *text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `awk`: its options (`-f`, `-i`, `-l`, `-d`, `-o`, `-p`), then its
/// program (`system()`, pipes, `print >`).
fn awk(name: &str, args: &[Word]) -> Judgement {
    with_spec(name, &specs::AWK, args, |s| {
        // `gawk -e A -e B` runs every `-e`, read as one program (a token
        // may not span two, but a statement may); without one, the first
        // operand is the program.
        let mut programs: Vec<(&str, bool)> =
            s.values(&["-e"]).map(|v| (v.text, v.literal)).collect();
        if programs.is_empty() {
            match s.operands.first() {
                Some(first) => programs.push((first.text(), first.is_literal())),
                None => return safe(format!("`{name}` alone prints its usage")),
            }
        }
        if programs.iter().any(|(_, literal)| !literal) {
            return dangerous(format!("the `{name}` program is only known at run time"));
        }
        match awk::program_danger(&joined(&programs)) {
            Some(found) => found.judgement(&format!("the `{name}` program")),
            None => safe(format!("the `{name}` program only reads and prints")),
        }
    })
}

/// `tar` in list mode only: `tar tf x.tar`, `tar -tzf x.tgz`,
/// `tar --list --file=x.tar`.
fn tar(args: &[Word]) -> Judgement {
    // `tar tzvf x.tgz`: the old style, a first word of letters without `-`,
    // whose options take their values from the following words in order.
    let expanded;
    let args = match args.first() {
        Some(first)
            if first.is_literal()
                && !first.text().starts_with('-')
                && first.text().chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            expanded = old_style_tar(args);
            &expanded[..]
        }
        _ => args,
    };
    with_spec("tar", &specs::TAR, args, |s| {
        if !s.has(&["-t"]) {
            return dangerous("`tar` without `-t` extracts or creates archives");
        }
        let remote = s.values(&["-f"]).find(|v| {
            v.text
                .split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
        });
        if let Some(file) = remote
            && !s.has(&["--force-local"])
        {
            return dangerous(format!(
                "`tar -f {}` reads a remote archive through `rsh`",
                short(file.text)
            ));
        }
        safe("`tar -t` only lists (running a decompressor if the archive is compressed)")
    })
}

/// Rewrites `tar tzvf x.tgz a` as `tar -t -z -v -f x.tgz a`.
fn old_style_tar(args: &[Word]) -> Vec<Word> {
    const WITH_VALUE: &str = "fbCIFgKLNTVX";
    let Some((first, rest)) = args.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(args.len() * 2);
    let mut values = rest.iter();
    for c in first.text().chars() {
        out.push(Word::literal(&format!("-{c}")));
        if WITH_VALUE.contains(c)
            && let Some(v) = values.next()
        {
            out.push(v.clone());
        }
    }
    out.extend(values.cloned());
    out
}

/// `less` and `more`: pagers, which run `LESSOPEN` preprocessors from the
/// environment and shell commands (`!cmd`); never `safe`.
fn pager(name: &str, args: &[Word]) -> Judgement {
    for t in options(args) {
        if t.starts_with('+') {
            return dangerous(format!(
                "`{name} {}` runs pager commands at start, which can run shell commands (`!`)",
                short(t)
            ));
        }
        if matches!(t, "-o" | "-O")
            || t.starts_with("--log-file")
            || t.starts_with("--LOG-FILE")
            || (t.starts_with("-o") || t.starts_with("-O")) && !t.starts_with("--")
        {
            return dangerous(format!("`{name} -o` writes a log file"));
        }
        if t.starts_with("-k") || t.starts_with("--lesskey") {
            return dangerous(format!(
                "`{name} -k` loads key bindings, which can run commands"
            ));
        }
    }
    dev(format!(
        "`{name}` is a pager, which can run `LESSOPEN` preprocessors and shell commands (use `cat` or `head`)"
    ))
}
