//! Language toolchains, package managers and runners: `cargo`, `go`, `npm`,
//! `pnpm`, `yarn`, `pip`, `python`, `docker`, `kubectl`, `uv run`, `npx`.
//!
//! Building and testing is `dev`; installing, publishing and running
//! arbitrary code is `dangerous`. Nothing here is `safe`, even a query
//! such as `cargo tree` or `npm ls`: these programs are proxies and scripts
//! (`rustup`'s `cargo`, `npm`'s `node`, `pyenv` shims) that start other
//! programs, read project configuration that can name programs to run
//! (`.cargo/config.toml`, `.npmrc`), and write caches and lock files as
//! they go, which the `safe` kernel profile would refuse. They are `dev`
//! at best, so they are asked for in the default mode.

use toolgate_core::CommandClass;

use super::classify::{Extra, classify_simple, has_option, options, positionals, subcommand};
use super::hooks;
use super::tables::lookup;
use toolgate_shell::judgement::{Judgement, dangerous, dev};
use toolgate_shell::model::SimpleCommand;
use toolgate_shell::words::Word;
use toolgate_shell::wrappers::basename;

pub(super) fn cargo(args: &[Word]) -> Judgement {
    let mut i = 0;
    if args.first().is_some_and(|w| w.text().starts_with('+')) {
        i = 1;
    }
    let rest = args.get(i..).unwrap_or_default();
    let global_with_value = ["--color", "-Z", "--config", "-C", "--manifest-path"];
    let sub = subcommand(rest, &global_with_value).map(|(sub, _)| sub);
    if let Some(j) = hooks::cargo(rest, sub) {
        return j;
    }
    if has_option(rest.get(..1).unwrap_or_default(), &[], &["list", "version"])
        || matches!(rest, [v] if v.text() == "-V")
    {
        return dev("`cargo --version` only prints (through `rustup`'s proxy)");
    }
    let Some(sub) = sub else {
        return dev("`cargo` alone prints its usage");
    };
    match sub {
        "tree" | "metadata" | "version" | "search" | "locate-project" | "pkgid"
        | "read-manifest" | "verify-project" | "info" | "help" => dev(format!(
            "`cargo {sub}` only inspects, but runs `rustc` and may update `Cargo.lock`"
        )),
        // `cargo check` runs build scripts and proc-macros, arbitrary code from
        // the dependency graph, exactly like `cargo build`: dev, not safe.
        "build" | "b" | "test" | "t" | "check" | "c" | "clippy" | "fmt" | "doc" | "d" | "bench"
        | "run" | "r" | "nextest" | "llvm-cov" | "miri" | "expand" | "rustc" | "rustdoc"
        | "hack" | "deny" | "audit" | "outdated" | "udeps" | "machete" | "insta" | "tarpaulin"
        | "generate-lockfile" | "fetch" => dev(format!("`cargo {sub}` is a development step")),
        "install" | "uninstall" | "binstall" => {
            dangerous(format!("`cargo {sub}` installs or removes software"))
        }
        "add" | "remove" | "rm" | "update" | "upgrade" => {
            dangerous(format!("`cargo {sub}` changes the project's dependencies"))
        }
        "publish" | "yank" | "owner" | "login" | "logout" => {
            dangerous(format!("`cargo {sub}` acts on the registry"))
        }
        "clean" => dangerous("`cargo clean` deletes build output"),
        _ => dangerous(format!("`cargo {sub}` is not known to be safe")),
    }
}

pub(super) fn go(args: &[Word]) -> Judgement {
    let Some((sub, rest)) = subcommand(args, &[]) else {
        return dev("`go` alone prints its usage");
    };
    if let Some(j) = hooks::go(sub, rest) {
        return j;
    }
    match sub {
        // `go` may download and switch toolchains (`GOTOOLCHAIN`) first.
        "version" | "list" | "doc" | "help" => dev(format!("`go {sub}` only inspects")),
        "env" => {
            if has_option(rest, &['w', 'u'], &[]) {
                dangerous("`go env -w` changes settings")
            } else {
                dev("`go env` only prints")
            }
        }
        "build" | "test" | "vet" | "fmt" | "run" | "mod" | "work" | "tool" => {
            dev(format!("`go {sub}` is a development step"))
        }
        "get" | "install" => dangerous(format!("`go {sub}` installs packages")),
        _ => dangerous(format!("`go {sub}` is not known to be safe")),
    }
}

pub(super) fn npm(args: &[Word]) -> Judgement {
    if let Some(j) = hooks::node_config("npm", args) {
        return j;
    }
    let Some((sub, rest)) = subcommand(args, &["--prefix", "-w", "--workspace", "-C"]) else {
        return dev("`npm` alone prints its usage");
    };
    match sub {
        "ls" | "list" | "ll" | "la" | "view" | "info" | "show" | "v" | "outdated" | "help"
        | "root" | "prefix" | "bin" | "explain" | "why" | "search" | "doctor" | "ping"
        | "whoami" | "query" | "fund" | "-v" | "--version" => {
            dev(format!("`npm {sub}` only inspects"))
        }
        "audit" => {
            if rest.first().is_some_and(|w| w.text() == "fix") {
                dangerous("`npm audit fix` installs packages")
            } else {
                dev("`npm audit` only inspects")
            }
        }
        "config" | "pkg" => match rest.first().map(Word::text) {
            Some("get" | "list" | "ls") => dev(format!("`npm {sub} get` only inspects")),
            _ => dangerous(format!("`npm {sub}` changes settings")),
        },
        "version" if rest.is_empty() => dev("`npm version` only prints"),
        "run" | "run-script" | "rum" | "urn" | "test" | "t" | "tst" | "start" | "stop"
        | "restart" => dev(format!("`npm {sub}` runs a project script")),
        _ => dangerous(format!(
            "`npm {sub}` installs, publishes or changes packages (and may run their install scripts)"
        )),
    }
}

pub(super) fn pnpm(args: &[Word], extra: &Extra) -> Judgement {
    if let Some(j) = hooks::node_config("pnpm", args) {
        return j;
    }
    let Some((sub, rest)) = subcommand(args, &["-C", "--dir", "--filter", "-F"]) else {
        return dev("`pnpm` alone prints its usage");
    };
    match sub {
        "ls" | "list" | "ll" | "why" | "outdated" | "root" | "bin" | "licenses" | "help"
        | "view" | "info" => dev(format!("`pnpm {sub}` only inspects")),
        "audit" if !has_option(rest, &[], &["fix"]) => dev("`pnpm audit` only inspects"),
        // `pnpm exec X` runs any program `X`, as `npx` does.
        "exec" => inner_command("pnpm", sub, skip_runner_options(rest), extra),
        "run" | "test" | "t" | "start" | "lint" | "build" | "typecheck" | "format" | "check" => {
            dev(format!("`pnpm {sub}` runs a project script"))
        }
        _ => dangerous(format!("`pnpm {sub}` installs or changes packages")),
    }
}

pub(super) fn yarn(args: &[Word], extra: &Extra) -> Judgement {
    if let Some(j) = hooks::node_config("yarn", args) {
        return j;
    }
    let Some((sub, rest)) = subcommand(args, &["--cwd"]) else {
        return dangerous("`yarn` alone installs packages");
    };
    match sub {
        "list" | "info" | "why" | "outdated" | "licenses" | "help" | "bin" => {
            dev(format!("`yarn {sub}` only inspects"))
        }
        // `yarn exec X` runs any program `X`.
        "exec" => inner_command("yarn", sub, skip_runner_options(rest), extra),
        "run" | "test" | "start" | "lint" | "build" | "tsc" | "jest" | "typecheck" => {
            dev(format!("`yarn {sub}` runs a project script"))
        }
        _ => dangerous(format!("`yarn {sub}` installs or changes packages")),
    }
}

pub(super) fn pip(args: &[Word]) -> Judgement {
    if let Some(j) = hooks::pip(args) {
        return j;
    }
    let Some((sub, rest)) = subcommand(args, &[]) else {
        return dev("`pip` alone prints its usage");
    };
    match sub {
        "list" | "show" | "freeze" | "check" | "help" | "search" | "index" | "debug"
        | "inspect" => dev(format!("`pip {sub}` only inspects")),
        "config" | "cache"
            if rest
                .first()
                .is_some_and(|w| matches!(w.text(), "list" | "get" | "dir" | "info")) =>
        {
            dev(format!("`pip {sub}` only inspects"))
        }
        _ => dangerous(format!("`pip {sub}` installs or removes packages")),
    }
}

pub(super) fn python(name: &str, args: &[Word], extra: &Extra) -> Judgement {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text();
        match t {
            "-V" | "-VV" | "--version" => {
                // `python3` is often a version manager's shim (pyenv), a
                // script that runs other programs.
                return dev(format!("`{name} --version` only prints its version"));
            }
            "-c" => return dangerous(format!("`{name} -c` runs code given on the command line")),
            "-m" => {
                let Some(module) = args.get(i + 1) else {
                    return dangerous(format!("`{name} -m` runs a module"));
                };
                let rest = args.get(i + 2..).unwrap_or_default();
                return python_module(name, module.text(), rest, extra);
            }
            "-W" | "-X" => i += 2,
            _ if t.starts_with('-') && t.len() > 1 => i += 1,
            _ => break,
        }
    }
    if args.get(i).is_none() {
        return dangerous(format!("`{name}` runs code read from its input"));
    }
    dangerous(format!("`{name}` runs a Python program"))
}

fn python_module(python: &str, module: &str, rest: &[Word], extra: &Extra) -> Judgement {
    match module {
        "pytest" | "mypy" | "ruff" | "black" | "isort" | "flake8" | "pylint" | "unittest"
        | "coverage" | "tox" | "nox" | "doctest" | "pyright" | "py_compile" | "compileall"
        | "build" | "venv" => dev(format!("`{python} -m {module}` is a development tool")),
        // `-m` puts the working directory first on the module path, so a
        // `json/` directory in the workspace would run instead.
        "json.tool" | "tabnanny" | "sysconfig" | "site" | "platform" | "tokenize" => dev(format!(
            "`{python} -m {module}` only reads, but may import modules from the working directory"
        )),
        "pip" => pip(rest),
        _ if extra.dev.contains(module) => {
            dev(format!("`{module}` is configured as a development tool"))
        }
        _ if extra.safe.contains(module) => dev(format!(
            "`{module}` is configured as safe, but runs through `{python} -m`"
        )),
        _ => dangerous(format!(
            "`{python} -m {module}` runs a module not known to be safe"
        )),
    }
}

pub(super) fn docker(name: &str, args: &[Word]) -> Judgement {
    const READS: &[&str] = &[
        "ps", "images", "version", "info", "inspect", "logs", "top", "port", "history", "stats",
        "search", "diff",
    ];
    let Some((sub, rest)) = subcommand(
        args,
        &[
            "--context",
            "-c",
            "-H",
            "--host",
            "--log-level",
            "-l",
            "--config",
        ],
    ) else {
        return dev(format!("`{name}` alone prints its usage"));
    };
    let action = rest.first().map(Word::text).unwrap_or_default();
    let reads = READS.contains(&sub)
        || (matches!(
            sub,
            "container"
                | "image"
                | "network"
                | "volume"
                | "context"
                | "system"
                | "builder"
                | "buildx"
        ) && matches!(
            action,
            "ls" | "list" | "inspect" | "logs" | "ps" | "history" | "df" | "top" | "port" | "show"
        ))
        || (sub == "compose"
            && matches!(
                positionals(rest).next().map(Word::text),
                Some("ps" | "logs" | "config" | "ls" | "images" | "top" | "version")
            ));
    if reads {
        dev(format!("`{name} {sub}` only inspects"))
    } else {
        dangerous(format!(
            "`{name} {sub}` starts, changes or removes containers or images"
        ))
    }
}

pub(super) fn kubectl(name: &str, args: &[Word]) -> Judgement {
    let Some((sub, rest)) = subcommand(
        args,
        &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "--cluster",
            "--user",
            "-s",
            "--server",
        ],
    ) else {
        return dev(format!("`{name}` alone prints its usage"));
    };
    let action = rest.first().map(Word::text).unwrap_or_default();
    let reads = matches!(
        sub,
        "get"
            | "describe"
            | "logs"
            | "explain"
            | "version"
            | "api-resources"
            | "api-versions"
            | "cluster-info"
            | "top"
            | "diff"
    ) || (sub == "auth" && action == "can-i")
        || (sub == "config"
            && matches!(
                action,
                "view" | "current-context" | "get-contexts" | "get-clusters"
            ));
    if reads {
        dev(format!("`{name} {sub}` only inspects the cluster"))
    } else {
        dangerous(format!("`{name} {sub}` changes the cluster"))
    }
}

/// `uv run X`, `poetry run X`, `bundle exec X`: at least `dev` (the runner may
/// sync an environment first), and `X`'s class if higher.
pub(super) fn runner(name: &str, args: &[Word], extra: &Extra) -> Judgement {
    let Some((sub, rest)) = subcommand(args, &["--directory", "--project", "-p", "--python"])
    else {
        return dev(format!("`{name}` alone prints its usage"));
    };
    if name == "uv" {
        // Only `uv`'s own options: those of the program it runs are not.
        let own = match sub {
            "run" | "exec" => {
                let inner = skip_runner_options(rest);
                args.len() - inner.len()
            }
            _ => args.len(),
        };
        if let Some(j) = hooks::uv(args.get(..own).unwrap_or_default()) {
            return j;
        }
    }
    match sub {
        "run" | "exec" => {
            let inner = skip_runner_options(rest);
            inner_command(name, sub, inner, extra)
        }
        "pip" if name == "uv" => pip(rest),
        "show" | "check" | "tree" | "version" | "list" | "outdated" => {
            dev(format!("`{name} {sub}` only inspects"))
        }
        "sync" | "lock" | "build" | "venv" | "test" | "fmt" => {
            dev(format!("`{name} {sub}` is a development step"))
        }
        _ => dangerous(format!("`{name} {sub}` installs or changes packages")),
    }
}

/// The command a runner runs (`uv run X`, `poetry run X`, `bundle exec X`,
/// `pnpm exec X`, `yarn exec X`, `npx X`), for the blocklist to look at.
pub(crate) fn runner_command<'a>(name: &str, args: &'a [Word]) -> Option<&'a [Word]> {
    let (runs, with_value): (&[&str], &[&str]) = match name {
        "npx" | "bunx" | "pnpx" => return Some(skip_runner_options(args)),
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "bundle" => (
            &["run", "exec"],
            &["--directory", "--project", "-p", "--python"],
        ),
        "pnpm" => (&["exec"], &["-C", "--dir", "--filter", "-F"]),
        "yarn" => (&["exec"], &["--cwd"]),
        _ => return None,
    };
    let (sub, rest) = subcommand(args, with_value)?;
    runs.contains(&sub).then(|| skip_runner_options(rest))
}

fn skip_runner_options(args: &[Word]) -> &[Word] {
    const WITH_VALUE: &[&str] = &[
        "--with",
        "--python",
        "-p",
        "--extra",
        "--group",
        "--env-file",
        "--directory",
        "--project",
        "--package",
        "--index",
        "-w",
        "--with-requirements",
        "--only-group",
        "--no-group",
    ];
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') {
            break;
        }
        i += if WITH_VALUE.contains(&t) { 2 } else { 1 };
    }
    args.get(i..).unwrap_or_default()
}

/// How many runners may run each other (`uv run npx tsc` is two); more is
/// `dangerous`, which also bounds the recursion of judging them.
const MAX_RUNNERS: usize = 4;

/// Whether a word names a runner (see [`runner_command`]).
pub(crate) fn is_runner(word: &Word) -> bool {
    matches!(
        basename(word.text()),
        "npx"
            | "bunx"
            | "pnpx"
            | "uv"
            | "poetry"
            | "pipenv"
            | "pdm"
            | "hatch"
            | "rye"
            | "bundle"
            | "pnpm"
            | "yarn"
    )
}

fn inner_command(name: &str, sub: &str, inner: &[Word], extra: &Extra) -> Judgement {
    let runner = if sub.is_empty() {
        name.to_owned()
    } else {
        format!("{name} {sub}")
    };
    if inner.is_empty() {
        return dev(format!("`{runner}` given no program prints its usage"));
    }
    // Every level of nesting needs a runner word of its own, and each level
    // sees fewer words: counting them bounds the depth.
    if inner.iter().filter(|w| is_runner(w)).count() > MAX_RUNNERS {
        return dangerous(format!(
            "`{runner}` runs runners inside runners, more than {MAX_RUNNERS} deep"
        ));
    }
    let cmd = SimpleCommand::from_words(inner.to_vec());
    let j = classify_simple(&cmd, extra);
    if j.class == CommandClass::Safe {
        dev(format!(
            "`{runner}` prepares an environment, then: {}",
            j.reason
        ))
    } else {
        j
    }
}

/// `npx X`: `dev` when `X` is a known development tool (usually installed in
/// the project), otherwise `dangerous`, since `npx` downloads what is missing.
pub(super) fn npx(name: &str, args: &[Word], extra: &Extra) -> Judgement {
    let inner = skip_runner_options(args);
    if let Some(j) = hooks::node_config(
        name,
        args.get(..args.len() - inner.len()).unwrap_or_default(),
    ) {
        return j;
    }
    let Some(program) = inner.first() else {
        return dev(format!("`{name}` alone prints its usage"));
    };
    if lookup(program.text()).is_none()
        && !extra.dev.contains(program.text())
        && !extra.safe.contains(program.text())
    {
        return dangerous(format!(
            "`{name} {}` may download and run a package",
            program.text()
        ));
    }
    inner_command(name, "", inner, extra)
}

pub(super) fn rustc(args: &[Word]) -> Judgement {
    if let Some(j) = hooks::rustc(args) {
        return j;
    }
    if has_option(args, &[], &["print"])
        || matches!(args, [a] if matches!(a.text(), "-vV" | "--version" | "-V"))
    {
        dev("`rustc --print` only prints (through `rustup`'s proxy)")
    } else {
        dev("`rustc` compiles code")
    }
}

pub(super) fn rustup(args: &[Word]) -> Judgement {
    match subcommand(args, &[]) {
        Some(("show" | "which" | "doc", _)) => dev("`rustup show` only inspects"),
        Some((sub @ ("toolchain" | "target" | "component"), rest))
            if rest.first().is_some_and(|w| w.text() == "list") =>
        {
            dev(format!("`rustup {sub} list` only inspects"))
        }
        _ => dangerous("`rustup` installs or changes toolchains"),
    }
}

pub(super) fn bun(args: &[Word]) -> Judgement {
    match subcommand(args, &[]) {
        // `bun run x.ts` runs a file, as `node x.js` does; `bun run build`
        // runs the project's script.
        Some(("run", rest))
            if positionals(rest).next().is_some_and(|w| {
                let t = w.text();
                !w.is_literal()
                    || t.contains('/')
                    || [".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx"]
                        .iter()
                        .any(|e| t.ends_with(e))
            }) =>
        {
            dangerous("`bun run FILE` runs a JavaScript or TypeScript file")
        }
        Some((sub @ ("test" | "run" | "build"), _)) => {
            dev(format!("`bun {sub}` is a development step"))
        }
        Some(("pm", rest))
            if rest
                .first()
                .is_some_and(|w| matches!(w.text(), "ls" | "hash" | "cache")) =>
        {
            dev("`bun pm ls` only inspects")
        }
        Some((sub, _)) => dangerous(format!("`bun {sub}` is not known to be safe")),
        None => dev("`bun` alone prints its usage"),
    }
}

pub(super) fn node(name: &str, args: &[Word]) -> Judgement {
    if matches!(args, [a] if matches!(a.text(), "-v" | "--version")) {
        dev(format!("`{name} -v` only prints its version"))
    } else if args
        .iter()
        .map(Word::text)
        .take_while(|t| *t != "--")
        .any(|t| t == "--test")
    {
        dev(format!("`{name} --test` runs tests"))
    } else {
        dangerous(format!("`{name}` runs arbitrary JavaScript"))
    }
}

pub(super) fn deno(args: &[Word]) -> Judgement {
    match subcommand(args, &[]) {
        Some((sub @ ("test" | "check" | "lint" | "fmt" | "bench" | "doc"), _)) => {
            dev(format!("`deno {sub}` is a development step"))
        }
        _ => dangerous("`deno` runs arbitrary code"),
    }
}

pub(super) fn helm(args: &[Word]) -> Judgement {
    match subcommand(args, &["-n", "--namespace", "--kube-context"]) {
        Some((
            sub @ ("list" | "ls" | "status" | "get" | "history" | "version" | "show" | "search"
            | "template" | "lint" | "env"),
            _,
        )) => dev(format!("`helm {sub}` only inspects")),
        Some((sub, _)) => dangerous(format!("`helm {sub}` changes a cluster or installs charts")),
        None => dev("`helm` alone prints its usage"),
    }
}

pub(super) fn terraform(name: &str, args: &[Word]) -> Judgement {
    match subcommand(args, &["-chdir"]) {
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
        None => dev(format!("`{name}` alone prints its usage")),
    }
}

pub(super) fn make(args: &[Word]) -> Judgement {
    if let Some(j) = hooks::make(args) {
        return j;
    }
    let risky = positionals(args).find(|w| {
        matches!(
            w.text(),
            "install" | "uninstall" | "deploy" | "publish" | "release"
        )
    });
    match risky {
        Some(target) => dangerous(format!("`make {}` installs or publishes", target.text())),
        None => dev("`make` builds the project"),
    }
}

pub(super) fn maven(args: &[Word]) -> Judgement {
    if let Some(goal) =
        positionals(args).find(|w| w.text().starts_with("exec:") || w.text().starts_with("antrun:"))
    {
        dangerous(format!(
            "`mvn {}` runs a program of the caller's choosing",
            goal.text()
        ))
    } else if positionals(args).any(|w| w.text() == "deploy" || w.text().starts_with("release:")) {
        dangerous("`mvn deploy` publishes artifacts")
    } else {
        dev("`mvn` builds the project")
    }
}

pub(super) fn gradle(args: &[Word]) -> Judgement {
    let init_script = options(args)
        .any(|t| t.starts_with("-I") || t == "--init-script" || t.starts_with("--init-script="));
    if init_script {
        dangerous("`gradle --init-script` runs a script of the caller's choosing")
    } else if positionals(args).any(|w| w.text().starts_with("publish")) {
        dangerous("`gradle publish` publishes artifacts")
    } else {
        dev("`gradle` builds the project")
    }
}

pub(super) fn dotnet(args: &[Word]) -> Judgement {
    match subcommand(args, &[]) {
        Some((
            sub @ ("build" | "test" | "run" | "restore" | "format" | "clean" | "watch" | "pack"),
            _,
        )) => dev(format!("`dotnet {sub}` is a development step")),
        Some(("list" | "--info" | "--list-sdks" | "--list-runtimes" | "--version", _)) => {
            dev("`dotnet --info` only inspects")
        }
        Some((sub, _)) => dangerous(format!("`dotnet {sub}` is not known to be safe")),
        None => dev("`dotnet` alone prints its usage"),
    }
}
