//! The class of one simple command: `safe`, `dev` or `dangerous`.

use std::collections::HashSet;

use toolgate_core::CommandClass;

use super::git::git;
use super::model::{Kind, Script, SimpleCommand};
use super::scripts::{awk_program_danger, sed_script_danger};
use super::tables::{Check, Rule, is_code_loading_variable, known_danger, lookup};
use super::toolchains::{cargo, docker, go, kubectl, npm, npx, pip, pnpm, python, runner, yarn};
use super::words::Word;

/// A class and the reason for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgement {
    pub(crate) class: CommandClass,
    pub(crate) reason: String,
}

pub(super) fn safe(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Safe,
        reason: reason.into(),
    }
}

pub(super) fn dev(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Dev,
        reason: reason.into(),
    }
}

pub(super) fn dangerous(reason: impl Into<String>) -> Judgement {
    Judgement {
        class: CommandClass::Dangerous,
        reason: reason.into(),
    }
}

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
    for assignment in cmd.assignments() {
        if let Some(j) = risky_assignment(assignment) {
            return j;
        }
    }
    if cmd.kind == Kind::Keyword {
        return safe(match cmd.program() {
            "" => "only redirects input".to_owned(),
            keyword => format!("`{keyword}` runs no program itself"),
        });
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
        Script::Parsed => {
            return safe(format!(
                "`{name}` runs a script whose commands are classified one by one"
            ));
        }
        Script::Opaque(reason) => return dangerous(reason.clone()),
        Script::None => {}
    }
    if extra.safe.contains(name) {
        return safe(format!("`{name}` is configured as safe"));
    }
    if extra.dev.contains(name) {
        return dev(format!("`{name}` is configured as a development tool"));
    }
    let args = cmd.args();
    match lookup(name) {
        None => dangerous(match known_danger(name) {
            Some(what) => format!("`{name}` {what}"),
            None => format!("`{name}` is not a known read-only or development program"),
        }),
        Some(_) if is_version_query(args) => {
            safe(format!("`{name}` only prints its version or help"))
        }
        Some(Rule::Safe) => safe(format!("`{name}` only reads or prints")),
        Some(Rule::Dev) => dev(format!("`{name}` is a development tool")),
        Some(Rule::Check(check)) => self::check(check, name, args, extra),
    }
}

fn risky_assignment(word: &Word) -> Option<Judgement> {
    let name = word.text().split_once('=').map(|(n, _)| n)?;
    let name = name.strip_suffix('+').unwrap_or(name);
    is_code_loading_variable(name)
        .then(|| dangerous(format!("setting `{name}` changes which code programs run")))
}

fn is_version_query(args: &[Word]) -> bool {
    matches!(args, [only] if matches!(only.text(), "--version" | "-V" | "-version" | "--help" | "-help"))
}

/// A word for a reason: on one line, and not too long to read.
pub(crate) fn short(raw: &str) -> String {
    const MAX: usize = 48;
    let one_line = raw.trim_end().replace('\n', "\u{23ce}");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let mut out: String = one_line.chars().take(MAX).collect();
    out.push('\u{2026}');
    out
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

fn check(check: Check, name: &str, args: &[Word], extra: &Extra) -> Judgement {
    match check {
        Check::Find => find(args),
        Check::Fd => {
            if has_option(args, &['x', 'X'], &["exec", "exec-batch"]) {
                dangerous(format!("`{name} --exec` runs a command on each file"))
            } else {
                safe(format!("`{name}` only searches"))
            }
        }
        Check::Rg => {
            if has_option(args, &[], &["pre", "pre-glob"]) {
                dangerous("`rg --pre` runs a program on each file searched")
            } else {
                safe("`rg` only searches")
            }
        }
        Check::Tree => {
            if has_option(args, &['o'], &[]) {
                dangerous("`tree -o` writes to a file")
            } else {
                safe("`tree` only lists")
            }
        }
        Check::Sort => {
            if has_option(args, &['o'], &["output"]) {
                dangerous("`sort -o` writes to a file")
            } else if has_option(args, &[], &["compress-program"]) {
                dangerous("`sort --compress-program` runs a program")
            } else {
                safe("`sort` only prints")
            }
        }
        Check::Uniq | Check::Xxd => {
            if positionals(args).count() >= 2 {
                dangerous(format!("`{name} INPUT OUTPUT` writes to OUTPUT"))
            } else {
                safe(format!("`{name}` only prints"))
            }
        }
        Check::Tee => match positionals(args).find(|w| w.text() != "/dev/null") {
            Some(file) => dangerous(format!("`tee {}` writes to a file", file.raw())),
            None => safe("`tee` with no file only copies its input"),
        },
        Check::Sed => sed(args),
        Check::Awk => awk(name, args),
        Check::Date => {
            if has_option(args, &['s'], &["set"]) {
                dangerous("`date -s` sets the system clock")
            } else {
                safe("`date` only prints")
            }
        }
        Check::Hostname => {
            if positionals(args).next().is_some() || has_option(args, &['F'], &["file"]) {
                dangerous("`hostname NAME` sets the host name")
            } else {
                safe("`hostname` only prints")
            }
        }
        Check::Yq => {
            if has_option(args, &['i'], &["inplace"]) {
                dangerous("`yq -i` edits files in place")
            } else {
                safe("`yq` only prints")
            }
        }
        Check::Tar => tar(args),
        Check::Unzip => {
            if has_option(args, &['l', 't', 'Z'], &[])
                || args.first().is_some_and(|a| a.text() == "-v")
            {
                safe("`unzip -l` only lists")
            } else {
                dangerous("`unzip` extracts files")
            }
        }
        Check::Declare => {
            for arg in args {
                if let Some(j) = risky_assignment(arg) {
                    return j;
                }
            }
            safe(format!("`{name}` only sets shell variables"))
        }
        Check::Git => git(args),
        Check::Cargo => cargo(args),
        Check::Rustc => {
            if has_option(args, &[], &["print"]) || matches!(args, [a] if a.text() == "-vV") {
                safe("`rustc --print` only prints")
            } else {
                dev("`rustc` compiles code")
            }
        }
        Check::Rustup => match subcommand(args, &[]) {
            Some(("show" | "which" | "doc", _)) => safe("`rustup show` only prints"),
            Some((sub @ ("toolchain" | "target" | "component"), rest))
                if rest.first().is_some_and(|w| w.text() == "list") =>
            {
                safe(format!("`rustup {sub} list` only prints"))
            }
            _ => dangerous("`rustup` installs or changes toolchains"),
        },
        Check::Go => go(args),
        Check::Npm => npm(args),
        Check::Pnpm => pnpm(args),
        Check::Yarn => yarn(args),
        Check::Bun => match subcommand(args, &[]) {
            Some((sub @ ("test" | "run" | "build"), _)) => {
                dev(format!("`bun {sub}` is a development step"))
            }
            Some(("pm", rest))
                if rest
                    .first()
                    .is_some_and(|w| matches!(w.text(), "ls" | "hash" | "cache")) =>
            {
                safe("`bun pm ls` only prints")
            }
            Some((sub, _)) => dangerous(format!("`bun {sub}` is not known to be safe")),
            None => safe("`bun` alone prints its usage"),
        },
        Check::Pip => pip(args),
        Check::Python => python(name, args, extra),
        Check::Node => {
            if matches!(args, [a] if a.text() == "-v") {
                safe("`node -v` only prints its version")
            } else if options(args).any(|t| t == "--test") {
                dev("`node --test` runs tests")
            } else {
                dangerous(format!("`{name}` runs arbitrary JavaScript"))
            }
        }
        Check::Deno => match subcommand(args, &[]) {
            Some((sub @ ("test" | "check" | "lint" | "fmt" | "bench" | "doc"), _)) => {
                dev(format!("`deno {sub}` is a development step"))
            }
            _ => dangerous("`deno` runs arbitrary code"),
        },
        Check::Interpreter => {
            if matches!(args, [a] if a.text() == "-v") {
                safe(format!("`{name} -v` only prints its version"))
            } else {
                dangerous(format!("`{name}` runs arbitrary code"))
            }
        }
        Check::Shell => dangerous(format!("`{name}` runs a shell script")),
        Check::Source => dangerous(format!("`{name}` runs a script in the current shell")),
        Check::Docker => docker(name, args),
        Check::Kubectl => kubectl(name, args),
        Check::Helm => match subcommand(args, &["-n", "--namespace", "--kube-context"]) {
            Some((
                sub @ ("list" | "ls" | "status" | "get" | "history" | "version" | "show" | "search"
                | "template" | "lint" | "env"),
                _,
            )) => dev(format!("`helm {sub}` only inspects")),
            Some((sub, _)) => {
                dangerous(format!("`helm {sub}` changes a cluster or installs charts"))
            }
            None => safe("`helm` alone prints its usage"),
        },
        Check::Terraform => match subcommand(args, &["-chdir"]) {
            Some((
                sub @ ("plan" | "validate" | "fmt" | "version" | "show" | "output" | "providers"
                | "graph" | "init"),
                _,
            )) => dev(format!("`{name} {sub}` is a development step")),
            Some(("state", rest))
                if rest
                    .first()
                    .is_some_and(|w| matches!(w.text(), "list" | "show")) =>
            {
                dev(format!("`{name} state list` only inspects"))
            }
            Some((sub, _)) => dangerous(format!("`{name} {sub}` changes infrastructure")),
            None => safe(format!("`{name}` alone prints its usage")),
        },
        Check::Make => {
            let risky = positionals(args).find(|w| {
                matches!(
                    w.text(),
                    "install" | "uninstall" | "deploy" | "publish" | "release"
                )
            });
            match risky {
                Some(target) => {
                    dangerous(format!("`make {}` installs or publishes", target.text()))
                }
                None => dev("`make` builds the project"),
            }
        }
        Check::Maven => {
            if positionals(args).any(|w| w.text() == "deploy" || w.text().starts_with("release:")) {
                dangerous("`mvn deploy` publishes artifacts")
            } else {
                dev("`mvn` builds the project")
            }
        }
        Check::Gradle => {
            if positionals(args).any(|w| w.text().starts_with("publish")) {
                dangerous("`gradle publish` publishes artifacts")
            } else {
                dev("`gradle` builds the project")
            }
        }
        Check::Dotnet => match subcommand(args, &[]) {
            Some((
                sub
                @ ("build" | "test" | "run" | "restore" | "format" | "clean" | "watch" | "pack"),
                _,
            )) => dev(format!("`dotnet {sub}` is a development step")),
            Some(("list" | "--info" | "--list-sdks" | "--list-runtimes", _)) => {
                safe("`dotnet --info` only prints")
            }
            Some((sub, _)) => dangerous(format!("`dotnet {sub}` is not known to be safe")),
            None => safe("`dotnet` alone prints its usage"),
        },
        Check::Runner => runner(name, args, extra),
        Check::Npx => npx(name, args, extra),
        Check::WrapperAlone => safe(format!("`{name}` given no program runs nothing harmful")),
        Check::Command => {
            if has_option(args, &['v', 'V'], &[]) {
                safe("`command -v` only looks a program up")
            } else {
                safe("`command` alone runs nothing")
            }
        }
    }
}

fn find(args: &[Word]) -> Judgement {
    for arg in args {
        let reason = match arg.text() {
            "-delete" => "deletes files",
            "-exec" | "-execdir" | "-ok" | "-okdir" => "runs a command on each file",
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => "writes to a file",
            _ => continue,
        };
        return dangerous(format!("`find {}` {reason}", arg.text()));
    }
    safe("`find` only searches")
}

fn sed(args: &[Word]) -> Judgement {
    let mut scripts: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut operands = false;
    while let Some(word) = args.get(i) {
        let t = word.text();
        i += 1;
        if operands || !t.starts_with('-') || t == "-" {
            if scripts.is_empty() && !operands {
                scripts.push(word);
            }
            operands = true;
            continue;
        }
        if t == "--" {
            operands = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => return dangerous("`sed -i` edits files in place"),
                "expression" if value.is_some() => return sed_inline_expression(word),
                "expression" => {
                    if let Some(script) = args.get(i) {
                        scripts.push(script);
                    }
                    i += 1;
                }
                "file" => return dangerous("`sed -f` runs a script from a file"),
                "line-length" if value.is_none() => i += 1,
                _ => {}
            }
            continue;
        }
        let cluster = t.get(1..).unwrap_or_default();
        for (pos, c) in cluster.char_indices() {
            match c {
                'i' | 'I' => return dangerous("`sed -i` edits files in place"),
                'f' => return dangerous("`sed -f` runs a script from a file"),
                'e' => {
                    let attached = cluster.get(pos + 1..).unwrap_or_default();
                    if attached.is_empty() {
                        if let Some(script) = args.get(i) {
                            scripts.push(script);
                        }
                        i += 1;
                    } else {
                        return sed_script(attached, true);
                    }
                    break;
                }
                'l' => {
                    if cluster.get(pos + 1..).unwrap_or_default().is_empty() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    for script in scripts {
        let j = sed_script(script.text(), script.is_literal());
        if j.class != CommandClass::Safe {
            return j;
        }
    }
    safe("`sed` without `-i` only prints")
}

fn sed_inline_expression(word: &Word) -> Judgement {
    let script = word.text().split_once('=').map_or("", |(_, v)| v);
    sed_script(script, word.is_literal())
}

fn sed_script(script: &str, literal: bool) -> Judgement {
    if !literal {
        return dangerous("the `sed` script is only known at run time");
    }
    match sed_script_danger(script) {
        Some(what) => dangerous(format!("the `sed` script {what}")),
        None => safe("`sed` without `-i` only prints"),
    }
}

fn awk(name: &str, args: &[Word]) -> Judgement {
    let mut i = 0;
    let mut program = None;
    while let Some(word) = args.get(i) {
        let t = word.text();
        i += 1;
        if t == "--" {
            program = args.get(i);
            break;
        }
        if !t.starts_with('-') || t == "-" {
            program = Some(word);
            break;
        }
        match t {
            "-F" | "-v" => i += 1,
            "-f" | "--file" | "-E" | "--exec" => {
                return dangerous(format!("`{name} -f` runs a program from a file"));
            }
            "-i" | "--include" | "-l" | "--load" => {
                return dangerous(format!("`{name} {t}` loads code from a file"));
            }
            "-e" | "--source" => {
                program = args.get(i);
                break;
            }
            "-S" | "--sandbox" => {
                return safe(format!(
                    "`{name} --sandbox` cannot run commands or write files"
                ));
            }
            _ => {}
        }
    }
    let Some(program) = program else {
        return safe(format!("`{name}` alone prints its usage"));
    };
    if !program.is_literal() {
        return dangerous(format!("the `{name}` program is only known at run time"));
    }
    match awk_program_danger(program.text()) {
        Some(what) => dangerous(format!("the `{name}` program {what}")),
        None => safe(format!("the `{name}` program only reads and prints")),
    }
}

fn tar(args: &[Word]) -> Judgement {
    let first = args.first().map(Word::text).unwrap_or_default();
    // `tar tf x.tar` (old style: the first word is a cluster without `-`).
    let old_style = !first.starts_with('-') && first.contains('t');
    let list = old_style || has_option(args, &['t'], &["list"]);
    let writes = has_option(
        args,
        &['x', 'c', 'r', 'u', 'A', 'I'],
        &[
            "extract",
            "get",
            "create",
            "append",
            "update",
            "delete",
            "to-command",
            "use-compress-program",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
        ],
    );
    if list && !writes {
        safe("`tar -t` only lists")
    } else {
        dangerous("`tar` extracts or creates archives")
    }
}
