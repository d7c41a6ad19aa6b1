//! Options of development tools that name a program for the tool to run.
//!
//! `cargo build` is `dev`: it runs the project's build scripts, which is
//! what a person agreed to when allowing development steps. `cargo --config
//! build.rustc-wrapper=/tmp/x build` runs `/tmp/x` in place of the compiler:
//! a program of the caller's choosing, from anywhere, which is `dangerous`
//! like running `/tmp/x` directly. Every toolchain has such hooks; the ones
//! found on the command line are here, each named in the reason:
//!
//! - `cargo --config KEY=VALUE` (or a config file): `build.rustc`,
//!   `build.rustc-wrapper`, `build.rustc-workspace-wrapper`,
//!   `build.rustdoc`, `target.*.runner`, `target.*.linker`, the
//!   `rustflags` keys (`-C linker=…`), `host.linker`, `doc.browser`,
//!   credential providers, `alias.*`, `env.*`, `include`; any key not known
//!   to be harmless (`profile.*.opt-level`, `build.jobs`, `term.*`, …);
//!   `cargo rustc -- ARGS` and `cargo rustdoc -- ARGS` as `rustc`;
//! - `rustc -C linker=…`, `-C link-arg(s)=…`, `-C llvm-args=…`,
//!   `-Z codegen-backend=…`, `-Z llvm-plugins=…`; `rustdoc --runtool`,
//!   `--test-builder`;
//! - `go … -toolexec`, `-exec`, `-vettool`, `-overlay`, `-ldflags` naming
//!   the external linker (`-extld`, `-extldflags`), `-gccgoflags`, and
//!   `go run MODULE@VERSION` (downloaded and run);
//! - `npm`, `pnpm`, `yarn` configuration given as options:
//!   `--script-shell`, `--shell`, `--node-options`, `--editor`,
//!   `--browser`, `--git`, `--node-gyp`, `--userconfig`, … (abbreviations
//!   included, as npm's option parser expands them);
//! - `make NAME=VALUE` overriding a variable that names a program
//!   (`SHELL`, `CC`, `MAKE`, `.SHELLFLAGS`, `CFLAGS`, …), `make --eval`;
//! - `pip --python`, `uv --python PATH`;
//! - C compilers: `-B`, `-wrapper`, `-fplugin`, `-fpass-plugin`,
//!   `-specs`, `-fuse-ld=PATH`, `--ld-path`, `-Xclang`, linker plugins;
//!   `cmake -DCMAKE_C_COMPILER=…` (and launchers, linkers, toolchain
//!   files), `cmake -E`, `-P`, `-C`; `ctest -S`; `mypy
//!   --python-executable`; `javac -J`.
//!
//! `git -c` is `dangerous` whatever the key (`git.rs`); the keys that name a
//! program are named in the reason here ([`git_config`]).
//!
//! Environment variables that do the same (`RUSTC_WRAPPER`, `CARGO_*`,
//! `GOFLAGS`, `npm_config_*`, `CC`) are judged in `variables.rs`.

use super::classify::options;
use toolgate_shell::judgement::{Judgement, dangerous, short};
use toolgate_shell::variables::{VarClass, classify_variable};
use toolgate_shell::words::Word;

/// A value given to a long option, attached (`--x=v`) or in the next word,
/// with whether it is exactly known.
#[derive(Debug, Clone, Copy)]
struct Given<'a> {
    text: &'a str,
    literal: bool,
}

/// The values of a long option (`--name=v`, `--name v`), before `--`.
fn long_values<'a>(args: &'a [Word], name: &'a str) -> impl Iterator<Item = Given<'a>> + 'a {
    let mut iter = args.iter().take_while(|w| w.text() != "--");
    std::iter::from_fn(move || {
        while let Some(word) = iter.next() {
            let t = word.text();
            let Some(rest) = t.strip_prefix("--").and_then(|r| r.strip_prefix(name)) else {
                continue;
            };
            if let Some(value) = rest.strip_prefix('=') {
                return Some(Given {
                    text: value,
                    literal: word.is_literal(),
                });
            }
            if rest.is_empty() {
                let next = iter.next()?;
                return Some(Given {
                    text: next.text(),
                    literal: next.is_literal(),
                });
            }
        }
        None
    })
}

// ---- cargo ----------------------------------------------------------------

/// `cargo --config …` and `cargo rustc -- -C linker=…`.
pub(super) fn cargo(args: &[Word], sub: Option<&str>) -> Option<Judgement> {
    for value in long_values(args, "config") {
        if !value.literal {
            return Some(dangerous(
                "`cargo --config` with a value only known at run time may name a program for cargo to run",
            ));
        }
        if let Some(j) = cargo_config(value.text) {
            return Some(j);
        }
    }
    // `cargo rustc -- ARGS` gives ARGS to `rustc`, `cargo rustdoc -- ARGS`
    // to `rustdoc`.
    if matches!(sub, Some("rustc" | "rustdoc")) {
        let after = args
            .iter()
            .position(|w| w.text() == "--")
            .map_or(&[][..], |i| args.get(i + 1..).unwrap_or_default());
        return rustc(after);
    }
    None
}

/// One `--config` value: `KEY=VALUE` (TOML) or the path of a config file.
fn cargo_config(value: &str) -> Option<Judgement> {
    let Some((key, _)) = value.split_once('=') else {
        return Some(dangerous(format!(
            "`cargo --config {}` reads configuration from a file, which can name programs to run (`build.rustc-wrapper`, `target.*.runner`)",
            short(value)
        )));
    };
    let shown = short(key.trim());
    let Some(segments) = toml_key(key) else {
        return Some(dangerous(format!(
            "`cargo --config {shown}=…` sets configuration toolgate cannot read, which can name programs to run"
        )));
    };
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    if cargo_key_is_harmless(&segments) {
        return None;
    }
    Some(dangerous(match cargo_key_runs(&segments) {
        Some(what) => format!("`cargo --config {shown}=…` {what}"),
        None => format!(
            "`cargo --config {shown}=…` sets configuration toolgate does not know to be harmless, which can name programs to run (`build.rustc-wrapper`, `target.*.runner`)"
        ),
    }))
}

/// The segments of a TOML dotted key (`target."cfg(unix)".runner`),
/// lower-cased with `_` read as `-`; `None` if it is not one.
fn toml_key(key: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = key.trim().chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut segment = String::new();
        if let Some(&q @ ('"' | '\'')) = chars.peek() {
            chars.next();
            loop {
                match chars.next()? {
                    c if c == q => break,
                    '\\' if q == '"' => segment.push(chars.next()?),
                    c => segment.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                    break;
                }
                segment.push(c);
                chars.next();
            }
            if segment.is_empty() {
                return None;
            }
        }
        out.push(segment.to_ascii_lowercase().replace('_', "-"));
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        match chars.next() {
            None => return Some(out),
            Some('.') => {}
            Some(_) => return None,
        }
    }
}

/// Keys that change how cargo builds, never what it runs.
fn cargo_key_is_harmless(key: &[&str]) -> bool {
    const PROFILE: &[&str] = &[
        "opt-level",
        "debug",
        "debug-assertions",
        "overflow-checks",
        "lto",
        "panic",
        "incremental",
        "codegen-units",
        "strip",
        "split-debuginfo",
        "rpath",
    ];
    match key {
        ["profile", _, setting] | ["profile", _, "package", _, setting] => {
            PROFILE.contains(setting)
        }
        ["build", "jobs" | "incremental"]
        | ["net", "retry" | "offline"]
        | [
            "http",
            "timeout" | "multiplexing" | "debug" | "low-speed-limit",
        ]
        | ["term" | "cargo-new" | "future-incompat-report", ..] => true,
        _ => false,
    }
}

/// What a configuration key that names a program does.
fn cargo_key_runs(key: &[&str]) -> Option<&'static str> {
    Some(match key {
        ["build", "rustc"] => "names the compiler cargo runs (`build.rustc`)",
        ["build", "rustc-wrapper"] => {
            "names a program cargo runs the compiler through (`build.rustc-wrapper`)"
        }
        ["build", "rustc-workspace-wrapper"] => {
            "names a program cargo runs the compiler through (`build.rustc-workspace-wrapper`)"
        }
        ["build", "rustdoc"] => "names the documentation tool cargo runs (`build.rustdoc`)",
        ["target" | "host", .., "runner"] => {
            "names a program cargo runs binaries and tests through (`target.*.runner`)"
        }
        ["target" | "host", .., "linker"] => "names the linker cargo runs (`target.*.linker`)",
        ["target", .., "ar"] => "names the archiver cargo runs (`target.*.ar`)",
        [
            "build" | "target" | "host",
            ..,
            "rustflags" | "rustdocflags",
        ] => "gives the compiler flags, which can name a linker or load plugins (`-C linker=…`)",
        ["doc", "browser"] => "names the browser cargo runs (`doc.browser`)",
        [.., "credential-provider"] | ["registry", "global-credential-providers"] => {
            "names a credential provider cargo runs"
        }
        ["alias", ..] => "defines an alias, which can run any installed cargo subcommand",
        ["env", ..] => "sets environment variables of the programs cargo runs (`LD_PRELOAD`, …)",
        ["include"] => "loads another configuration file, which can name programs to run",
        _ => return None,
    })
}

// ---- rustc ----------------------------------------------------------------

/// `rustc -C linker=…` and the like; also `rustdoc --runtool`.
pub(super) fn rustc(args: &[Word]) -> Option<Judgement> {
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        if let Some(tool) = ["--runtool", "--test-builder", "--test-builder-wrapper"]
            .iter()
            .find(|o| t == **o || t.strip_prefix(**o).is_some_and(|r| r.starts_with('=')))
        {
            return Some(dangerous(format!(
                "`rustdoc {tool}` names a program to run doctests with"
            )));
        }
        let (flag, value) = match t {
            "-C" | "--codegen" => ("-C", iter.next().unwrap_or_default()),
            "-Z" => ("-Z", iter.next().unwrap_or_default()),
            _ => {
                if let Some(v) = t
                    .strip_prefix("--codegen=")
                    .or_else(|| t.strip_prefix("-C"))
                {
                    ("-C", v)
                } else if let Some(v) = t.strip_prefix("-Z") {
                    ("-Z", v)
                } else {
                    continue;
                }
            }
        };
        let key = value.split_once('=').map_or(value, |(k, _)| k);
        let key = key.replace('_', "-");
        let runs = match (flag, key.as_str()) {
            ("-C", "linker") => "names the linker to run",
            ("-C", "link-arg" | "link-args") | ("-Z", "pre-link-arg" | "pre-link-args") => {
                "gives the linker arguments, which can name programs or plugins to run"
            }
            ("-C", "llvm-args") => "gives LLVM arguments, which can load plugins",
            ("-Z", "codegen-backend") => "loads a code generator from a library",
            ("-Z", "llvm-plugins") => "loads LLVM plugins",
            _ => continue,
        };
        return Some(dangerous(format!("`rustc {flag} {key}` {runs}")));
    }
    None
}

// ---- go -------------------------------------------------------------------

/// `go build -toolexec …` and the like (Go flags: `-name`, `--name`,
/// `-name=value`, `-name value`), up to `-args`, which starts the test
/// binary's arguments.
pub(super) fn go(sub: &str, rest: &[Word]) -> Option<Judgement> {
    let mut iter = rest.iter();
    let mut operands = Vec::new();
    while let Some(word) = iter.next() {
        let t = word.text();
        if matches!(t, "--" | "-args" | "--args") {
            break;
        }
        let Some(flag) = t.strip_prefix("--").or_else(|| t.strip_prefix('-')) else {
            operands.push(word);
            continue;
        };
        let (name, attached) = match flag.split_once('=') {
            Some((n, v)) => (n, Some((v, word.is_literal()))),
            None => (flag, None),
        };
        let what = match name {
            "toolexec" => "runs every compiler and tool through a program of the caller's choosing",
            "exec" => "runs the built binaries through a program of the caller's choosing",
            "vettool" => "runs a program of the caller's choosing as the vet tool",
            "overlay" => "replaces source files with files named in a JSON file",
            "gccgoflags" => "gives `gccgo` flags, which can load plugins",
            "ldflags" => {
                let (value, literal) = attached.unwrap_or_else(|| {
                    iter.next()
                        .map_or(("", true), |w| (w.text(), w.is_literal()))
                });
                if !literal {
                    "gives the linker flags only known at run time, which may name the external linker (`-extld`)"
                } else if value.contains("extld") {
                    "names the external linker to run (`-extld`, `-extldflags`)"
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        return Some(dangerous(format!("`go {sub} -{name}` {what}")));
    }
    if sub == "run"
        && let Some(module) = operands.first().filter(|w| w.text().contains('@'))
    {
        return Some(dangerous(format!(
            "`go run {}` downloads and runs a module",
            short(module.text())
        )));
    }
    None
}

// ---- npm, pnpm, yarn --------------------------------------------------------

/// Configuration keys of `npm`, `pnpm` and `yarn` that name a program (or
/// code, or a file naming one), with what they do.
const NODE_KEYS: &[(&str, &str)] = &[
    ("script-shell", "names the shell that runs package scripts"),
    ("shell", "names the shell that runs commands"),
    (
        "node-options",
        "gives Node.js options to every script, which can load code (`--require`)",
    ),
    ("editor", "names the editor to run"),
    ("browser", "names the browser to run"),
    ("viewer", "names the program that shows help"),
    ("git", "names the `git` program to run"),
    ("node-gyp", "names the `node-gyp` program to run"),
    ("onload-script", "names a script to load at start"),
    ("init-module", "names a module to run for `init`"),
    (
        "userconfig",
        "reads another configuration file, which can name programs to run",
    ),
    (
        "globalconfig",
        "reads another configuration file, which can name programs to run",
    ),
    (
        "use-yarnrc",
        "reads another configuration file, which can name programs to run",
    ),
    ("use-node-version", "downloads and runs another Node.js"),
];

/// Options of npm known to be exact, which a prefix test would mistake for
/// abbreviations of a key above (`--global` is not `--globalconfig`).
const NODE_EXACT: &[&str] = &["global", "git-tag-version", "init"];

/// `npm --script-shell=…`, `pnpm --config.node-options=…` and the like,
/// before `--` (what follows goes to the script).
pub(super) fn node_config(name: &str, args: &[Word]) -> Option<Judgement> {
    for t in options(args) {
        let Some(long) = t.strip_prefix("--") else {
            continue;
        };
        let key = long.split_once('=').map_or(long, |(k, _)| k);
        let key = key.strip_prefix("config.").unwrap_or(key);
        let key = key.to_ascii_lowercase().replace('_', "-");
        let key = key.strip_prefix("no-").unwrap_or(&key);
        if key.is_empty() || NODE_EXACT.contains(&key) {
            continue;
        }
        // npm expands an unambiguous prefix of an option (`--script-sh`).
        let found = NODE_KEYS.iter().find(|(k, _)| *k == key).or_else(|| {
            NODE_KEYS
                .iter()
                .find(|(k, _)| key.len() >= 2 && k.starts_with(key))
        });
        if let Some((k, what)) = found {
            return Some(dangerous(format!("`{name} --{k}` {what}")));
        }
    }
    None
}

// ---- make -----------------------------------------------------------------

/// Variables make itself runs as programs, or whose value it passes to
/// them, beyond those the environment rules already know (`CC`, `CFLAGS`).
const MAKE_PROGRAMS: &[&str] = &[
    "SHELL",
    ".SHELLFLAGS",
    "MAKESHELL",
    "MAKE",
    "MAKEFILES",
    "MAKEFLAGS",
    "MFLAGS",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "FC",
    "F77",
    "PC",
    "CO",
    "GET",
    "LEX",
    "YACC",
    "LINT",
    "M2C",
    "MAKEINFO",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "CWEAVE",
    "TANGLE",
    "CTANGLE",
    "RM",
];

/// `make SHELL=…`, `make CC=…`, `make --eval=…`.
pub(super) fn make(args: &[Word]) -> Option<Judgement> {
    for word in args {
        let t = word.text();
        if t == "-E" || t.starts_with("--eval") || (t.starts_with("-E") && !t.starts_with("--")) {
            return Some(dangerous(
                "`make --eval` reads makefile text from the command line, which can run commands (`$(shell …)`)",
            ));
        }
        // `NAME=value`, `NAME:=value`, `NAME::=value`, `NAME+=value`,
        // `NAME?=value`, `NAME!=command` (which make runs at once).
        let Some((name, _)) = t.split_once('=') else {
            continue;
        };
        if t.starts_with('-') {
            continue;
        }
        if name.ends_with('!') {
            return Some(dangerous(format!(
                "`make {}` runs a shell command to set a variable",
                short(t)
            )));
        }
        let name = name.trim_end_matches([':', '+', '?']);
        if name.is_empty() || name.contains(char::is_whitespace) {
            continue;
        }
        if MAKE_PROGRAMS.contains(&name) || classify_variable(name) == VarClass::CodeLoading {
            return Some(dangerous(format!(
                "`make {name}=…` overrides `{name}`, which names a program make runs or the flags it gives one"
            )));
        }
    }
    None
}

// ---- pip, uv ----------------------------------------------------------------

/// `pip --python PY`: pip runs itself under that interpreter.
pub(super) fn pip(args: &[Word]) -> Option<Judgement> {
    long_values(args, "python")
        .next()
        .map(|_| dangerous("`pip --python` runs pip with an interpreter of the caller's choosing"))
}

/// `uv --python PATH` (or `-p PATH`): a path, not a version request,
/// names the interpreter to run.
pub(super) fn uv(args: &[Word]) -> Option<Judgement> {
    let mut iter = args.iter().take_while(|w| w.text() != "--");
    while let Some(word) = iter.next() {
        let t = word.text();
        let value = match t {
            "--python" | "-p" => iter.next(),
            _ if t.starts_with("--python=") || (t.starts_with("-p") && !t.starts_with("--")) => {
                Some(word)
            }
            _ => continue,
        };
        let text = value.map(Word::text).unwrap_or_default();
        let text = text
            .strip_prefix("--python=")
            .or_else(|| text.strip_prefix("-p"))
            .unwrap_or(text);
        if !value.is_some_and(Word::is_literal) || text.contains('/') {
            return Some(dangerous(format!(
                "`uv --python {}` runs an interpreter of the caller's choosing",
                short(text)
            )));
        }
    }
    None
}

// ---- C compilers, cmake, ctest, mypy, javac -----------------------------------

/// A development tool given an option that names a program for it to run.
pub(super) fn dev_tool(name: &str, args: &[Word]) -> Option<Judgement> {
    match name {
        "cmake" => cmake(args),
        "ctest" => args
            .iter()
            .map(Word::text)
            .find(|t| {
                matches!(*t, "-S" | "-SP" | "-SR" | "--script" | "--build-and-test")
                    || t.starts_with("--script=")
            })
            .map(|o| {
                dangerous(format!(
                    "`ctest {o}` runs a script or a build of the caller's choosing"
                ))
            }),
        "mypy" => long_values(args, "python-executable").next().map(|_| {
            dangerous("`mypy --python-executable` runs an interpreter of the caller's choosing")
        }),
        "javac" => args
            .iter()
            .map(Word::text)
            .find(|t| t.starts_with("-J"))
            .map(|_| {
                dangerous("`javac -J` gives the JVM options, which can load agents (`-javaagent`)")
            }),
        _ => cc(name, args),
    }
}

/// `cmake -E`, `-P`, `-C`, `--toolchain`, `--install`, and cache variables
/// naming a program (`-DCMAKE_C_COMPILER=…`, `…_LAUNCHER`, `…_LINKER`).
fn cmake(args: &[Word]) -> Option<Judgement> {
    const PROGRAM_VARIABLES: &[&str] = &[
        "COMPILER",
        "LAUNCHER",
        "LINKER",
        "MAKE_PROGRAM",
        "TOOLCHAIN_FILE",
        "_AR",
        "RANLIB",
        "EXECUTABLE",
        "_COMMAND",
        "_PROGRAM",
        "EMULATOR",
    ];
    let mut iter = args.iter().map(Word::text);
    while let Some(t) = iter.next() {
        let what = match t {
            "-E" => "runs a command of its own (`cmake -E env CMD`, `cmake -E rm`)".to_owned(),
            "-P" => "runs a CMake script, which can run programs".to_owned(),
            "--install" => "installs the project".to_owned(),
            _ if t.starts_with("-C") => {
                "loads a CMake script to fill the cache, which can run programs".to_owned()
            }
            _ if t.starts_with("--toolchain") => {
                "loads a toolchain file, which names the compilers to run".to_owned()
            }
            _ if t.starts_with("-D") => {
                let setting = if t == "-D" {
                    iter.next().unwrap_or_default()
                } else {
                    t.get(2..).unwrap_or_default()
                };
                let var = setting.split(['=', ':']).next().unwrap_or_default();
                let upper = var.to_ascii_uppercase();
                // `CMAKE_PROJECT_INCLUDE` and the like load scripts.
                let script = upper.contains("PROJECT") && upper.contains("INCLUDE");
                if !script && !PROGRAM_VARIABLES.iter().any(|p| upper.contains(p)) {
                    continue;
                }
                format!(
                    "sets `{}`, which names a program or a script to run",
                    short(var)
                )
            }
            _ => continue,
        };
        let option = if t.starts_with("-D") { "-D" } else { t };
        return Some(dangerous(format!("`cmake {}` {what}", short(option))));
    }
    None
}

/// `gcc -B DIR`, `clang -fplugin=x.so` and the like.
fn cc(name: &str, args: &[Word]) -> Option<Judgement> {
    let mut iter = args.iter().map(Word::text).peekable();
    while let Some(t) = iter.next() {
        let what = if t.starts_with("-B") || t == "--prefix" || t.starts_with("--prefix=") {
            "looks for the compiler's own programs (`cc1`, `as`, `ld`) where the caller says"
        } else if t == "-wrapper" {
            "runs the compiler's programs through a program of the caller's choosing"
        } else if t.starts_with("-fplugin") || t.starts_with("-fpass-plugin") {
            "loads a compiler plugin"
        } else if t.starts_with("-specs") || t.starts_with("--specs") {
            "reads a spec file, which can run programs"
        } else if t.starts_with("--ld-path")
            || t.strip_prefix("-fuse-ld=").is_some_and(|v| v.contains('/'))
        {
            "names the linker to run"
        } else if t == "-Xclang" || t.starts_with("-Xclang=") {
            "gives the compiler options of its own, which can load plugins"
        } else if (t.starts_with("-Wl,") && t.contains("plugin"))
            || (t == "-Xlinker" && iter.peek().is_some_and(|n| n.contains("plugin")))
        {
            "loads a linker plugin"
        } else {
            continue;
        };
        let option = t.split_once('=').map_or(t, |(o, _)| o);
        return Some(dangerous(format!("`{name} {}` {what}", short(option))));
    }
    None
}

// ---- git --------------------------------------------------------------------

/// What a `git -c KEY=VALUE` does when the key names a program.
pub(super) fn git_config(setting: &str) -> Option<String> {
    let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
    // Section and variable names are case-insensitive; a subsection (the
    // middle of `diff.<driver>.textconv`) is not, and does not matter here.
    let lower = key.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('.').collect();
    let (first, last) = (parts.first().copied()?, parts.last().copied()?);
    let what = match (first, last, parts.len()) {
        ("alias", _, _) if value.trim_start().starts_with('!') => {
            "defines an alias that runs a shell command"
        }
        ("alias", _, _) => "defines an alias, which can run any git command with any option",
        (
            "core",
            "pager"
            | "editor"
            | "fsmonitor"
            | "sshcommand"
            | "askpass"
            | "gitproxy"
            | "alternaterefscommand",
            2,
        )
        | ("sequence", "editor", 2)
        | ("diff", "external", 2)
        | ("gpg", "program", _)
        | ("credential", "helper", _)
        | ("web", "browser", 2)
        | ("uploadpack", "packobjectshook", 2)
        | ("interactive", "difffilter", 2)
        | ("pager", _, _)
        | ("diff", "textconv" | "command", 3)
        | ("merge", "driver", 3)
        | ("filter", "clean" | "smudge" | "process", 3)
        | ("difftool" | "mergetool" | "man" | "browser", "cmd" | "path", 3)
        | ("remote", "uploadpack" | "receivepack" | "proxy", 3) => "names a program git runs",
        ("core", "hookspath", 2) => "names the directory of the hooks git runs",
        ("include" | "includeif", "path", _) => {
            "loads another configuration file, which can name programs to run"
        }
        ("init", "templatedir", 2) => "names a template directory, whose hooks git installs",
        ("protocol", "allow", _) => "allows transports such as `ext::`, which run commands",
        _ => return None,
    };
    Some(format!("`git -c {}=…` {what}", short(key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_keys() {
        let cases: &[(&str, Option<&[&str]>)] = &[
            ("build.rustc-wrapper", Some(&["build", "rustc-wrapper"])),
            (" build . rustc_wrapper ", Some(&["build", "rustc-wrapper"])),
            (
                "\"build\".'RUSTC-wrapper'",
                Some(&["build", "rustc-wrapper"]),
            ),
            (
                "target.\"cfg(unix)\".runner",
                Some(&["target", "cfg(unix)", "runner"]),
            ),
            ("build", Some(&["build"])),
            ("build..x", None),
            ("build.\"x", None),
            ("{build}", None),
        ];
        for (key, want) in cases {
            let got = toml_key(key);
            let got: Option<Vec<&str>> =
                got.as_ref().map(|v| v.iter().map(String::as_str).collect());
            assert_eq!(got.as_deref(), *want, "{key}");
        }
    }

    #[test]
    fn cargo_config_values() {
        let cases: &[(&str, bool)] = &[
            ("profile.dev.debug=0", false),
            ("profile.release.package.foo.opt-level=3", false),
            ("build.jobs=2", false),
            ("term.color='always'", false),
            ("build.rustc-wrapper='/tmp/x'", true),
            ("build.rustc_wrapper='/tmp/x'", true),
            ("BUILD.RUSTC='/tmp/x'", true),
            ("target.x86_64-unknown-linux-gnu.linker='/tmp/x'", true),
            ("host.linker='/tmp/x'", true),
            ("profile.dev.rustflags=['-Clinker=/tmp/x']", true),
            ("env.LD_PRELOAD='/tmp/x.so'", true),
            ("build={rustc-wrapper='/tmp/x'}", true),
            ("registries.x.credential-provider='/tmp/x'", true),
            ("unknown.key=1", true),
            ("cargo.toml", true),
        ];
        for (value, dangerous) in cases {
            assert_eq!(cargo_config(value).is_some(), *dangerous, "{value}");
        }
    }

    #[test]
    fn git_config_keys() {
        let cases: &[(&str, bool)] = &[
            ("core.pager=less", true),
            ("CORE.PAGER=less", true),
            ("core.fsmonitor=x", true),
            ("alias.l=!id", true),
            ("alias.l=log", true),
            ("diff.pdf.textconv=x", true),
            ("filter.lfs.smudge=x", true),
            ("include.path=/tmp/x", true),
            ("includeIf.gitdir:/x.path=/tmp/x", true),
            ("protocol.ext.allow=always", true),
            ("color.ui=always", false),
            ("core.autocrlf=false", false),
            ("user.name=x", false),
        ];
        for (setting, names) in cases {
            assert_eq!(git_config(setting).is_some(), *names, "{setting}");
        }
    }
}
