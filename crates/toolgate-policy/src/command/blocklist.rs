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
//! The blocklist stops accidents and the obvious; it cannot stop a determined
//! adversary (`eval "$(echo c3VkbyBpZA== | base64 -d)"` hides its command
//! until run time, and is `dangerous`, not blocked). The OS sandbox (layer 5)
//! is the boundary for that.

use super::forks;
use super::model::{Origin, ParsedCommand, RedirectionKind, SimpleCommand};
use super::tables::{DOWNLOADERS, STDIN_INTERPRETERS};
use super::words::Word;
use super::wrappers::basename;

/// The reason the line is refused, if it is.
pub(crate) fn check(parsed: &ParsedCommand) -> Option<String> {
    let commands = parsed.simple_commands();
    let mut cwd = Cwd::Unknown;
    for (idx, cmd) in commands.iter().enumerate() {
        if cmd.is_compound_part() && cmd.redirections().is_empty() {
            continue;
        }
        cwd = cwd.after(cmd);
        let reason = check_one(cmd, &cwd)
            .or_else(|| fork_bomb(cmd, parsed.recursive_functions()))
            .or_else(|| download_into_interpreter(commands, idx, cmd))
            .or_else(|| stdin_program(commands, cmd))
            .or_else(|| behind_unknown_wrapper(cmd));
        if reason.is_some() {
            return reason;
        }
    }
    None
}

/// Programs refused whatever their arguments: they run commands as another
/// user, or stop the machine.
fn always_blocked(name: &str) -> Option<String> {
    match name {
        "sudo" | "sudoedit" | "su" | "doas" | "pkexec" | "run0" | "runuser" => Some(format!(
            "`{name}` runs commands with another user's privileges"
        )),
        "sg" => Some("`sg` runs commands with another group's privileges".to_owned()),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(format!("`{name}` stops the machine")),
        _ if name.starts_with("mkfs") => Some(format!("`{name}` formats a disk")),
        "mke2fs" | "mkswap" | "wipefs" => Some(format!("`{name}` formats or wipes a disk")),
        _ => None,
    }
}

fn check_one(cmd: &SimpleCommand, cwd: &Cwd) -> Option<String> {
    for redirection in cmd.redirections() {
        if !redirection.writes_file() {
            continue;
        }
        let target = redirection.target().text();
        if is_disk_device(target) {
            return Some(format!(
                "`{}{}` overwrites a disk device",
                redirection.kind().operator(),
                target
            ));
        }
        if is_sysrq(target) {
            return Some(format!(
                "`{}{}` can reboot or halt the machine through SysRq",
                redirection.kind().operator(),
                target
            ));
        }
    }
    let name = cmd.program_name();
    let args = cmd.args();
    if let Some(reason) = always_blocked(name) {
        return Some(reason);
    }
    match name {
        "rm" => rm(args, cwd),
        "find" => find_delete(args, cwd),
        "chmod" => chmod(args),
        "dd" => args.iter().find_map(|a| {
            let target = a.text().strip_prefix("of=")?;
            if is_sysrq(target) {
                return Some(format!(
                    "`dd of={target}` can reboot or halt the machine through SysRq"
                ));
            }
            let target = normalise_path(target)?;
            (target.starts_with("/dev/") && !is_harmless_device(&target))
                .then(|| format!("`dd of={target}` overwrites a device"))
        }),
        "tee" | "cp" | "shred" | "mv" | "install" | "truncate" => args.iter().find_map(|a| {
            if is_disk_device(a.text()) {
                Some(format!("`{name} {}` overwrites a disk device", a.text()))
            } else if is_sysrq(a.text()) {
                Some(format!(
                    "`{name} {}` can reboot or halt the machine through SysRq",
                    a.text()
                ))
            } else {
                None
            }
        }),
        "sysctl" => args.iter().any(|a| a.text().contains("sysrq")).then(|| {
            "`sysctl kernel.sysrq` controls the SysRq key, which can reboot or halt the machine"
                .to_owned()
        }),
        "pkill" => pkill(args),
        "killall" => killall(args),
        "kill" => kill_all_processes(args),
        "systemctl" => systemctl(args),
        "loginctl" => args
            .iter()
            .find(|a| POWER_VERBS.contains(&a.text()))
            .map(|a| format!("`loginctl {}` stops or suspends the machine", a.text())),
        "kexec" => args
            .iter()
            .any(|a| matches!(a.text(), "-e" | "--exec" | "-f" | "--force"))
            .then(|| "`kexec -e` reboots into another kernel".to_owned()),
        "busctl" | "dbus-send" | "gdbus" => {
            let login = args.iter().any(|a| a.text().contains("login1"));
            let power = args.iter().find(|a| {
                [
                    "PowerOff",
                    "Reboot",
                    "Halt",
                    "Suspend",
                    "Hibernate",
                    "KExec",
                ]
                .iter()
                .any(|m| a.text().contains(m))
            });
            power
                .filter(|_| login)
                .map(|a| format!("`{name} … {}` stops or suspends the machine", a.text()))
        }
        "init" | "telinit" => args
            .iter()
            .find(|a| matches!(a.text(), "0" | "1" | "6" | "s" | "S"))
            .map(|a| format!("`{name} {}` halts or reboots the machine", a.text())),
        _ => None,
    }
}

/// `systemctl` verbs that stop, reboot or suspend the machine.
const POWER_VERBS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "emergency",
    "rescue",
    "default",
    "isolate",
    "switch-root",
];

/// Targets whose start stops, reboots or suspends the machine.
const POWER_TARGETS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "rescue",
    "emergency",
    "shutdown",
    "ctrl-alt-del",
    "runlevel0",
    "runlevel1",
    "runlevel6",
    "exit",
    "final",
];

fn systemctl(args: &[Word]) -> Option<String> {
    if let Some(verb) = args.iter().find(|a| POWER_VERBS.contains(&a.text())) {
        return Some(format!(
            "`systemctl {}` stops, reboots or suspends the machine",
            verb.text()
        ));
    }
    let starts = args.iter().any(|a| {
        matches!(
            a.text(),
            "start" | "restart" | "try-restart" | "reload-or-restart" | "try-reload-or-restart"
        )
    });
    let target = args.iter().find(|a| {
        let unit = a.text().strip_suffix(".target").unwrap_or(a.text());
        POWER_TARGETS.contains(&unit) && a.text().ends_with(".target")
    });
    match target {
        Some(t) if starts => Some(format!(
            "`systemctl start {}` stops, reboots or suspends the machine",
            t.text()
        )),
        _ => None,
    }
}

/// The directory the line is in at a given command, as far as `cd` and
/// `pushd` earlier in the line tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cwd {
    Unknown,
    /// An absolute directory, as its components.
    At(Vec<String>),
    /// The home directory, or below it.
    Home(Vec<String>),
}

impl Cwd {
    /// The directory after `cmd` runs.
    fn after(&self, cmd: &SimpleCommand) -> Self {
        match cmd.program_name() {
            "cd" | "pushd" => {}
            "popd" => return Self::Unknown,
            _ => return self.clone(),
        }
        let target = cmd
            .args()
            .iter()
            .find(|a| !(a.text().starts_with('-') && a.text().len() > 1));
        let Some(target) = target else {
            return Self::Home(Vec::new());
        };
        let text = target.text();
        if let Some(rest) = home_rest(target) {
            return match normalise(rest, false, false) {
                Some(parts) => Self::Home(owned(&parts)),
                None => Self::Unknown,
            };
        }
        if !target.is_literal() || text == "-" {
            return Self::Unknown;
        }
        if text.starts_with('/') {
            return normalise(text, false, true).map_or(Self::Unknown, |p| Self::At(owned(&p)));
        }
        match self {
            Self::At(base) => {
                let joined = format!("/{}/{text}", base.join("/"));
                normalise(&joined, false, true).map_or(Self::Unknown, |p| Self::At(owned(&p)))
            }
            Self::Home(base) => {
                let joined = format!("/{}/{text}", base.join("/"));
                normalise(&joined, false, false).map_or(Self::Unknown, |p| Self::Home(owned(&p)))
            }
            Self::Unknown => Self::Unknown,
        }
    }
}

fn owned(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

/// `rm` with a recursive flag on `/`, `~`, `$HOME` or a top-level system
/// directory, in any spelling; or `rm --no-preserve-root`.
fn rm(args: &[Word], cwd: &Cwd) -> Option<String> {
    const LONG: &[&str] = &[
        "force",
        "interactive",
        "one-file-system",
        "no-preserve-root",
        "preserve-root",
        "recursive",
        "dir",
        "verbose",
        "help",
        "version",
    ];
    let mut recursive = false;
    let mut options_done = false;
    let mut targets = Vec::new();
    for arg in args {
        let t = arg.text();
        if !options_done && t == "--" {
            options_done = true;
            continue;
        }
        if !options_done && t.starts_with("--") {
            // GNU accepts any unambiguous prefix: `--rec`, `--no-p`.
            let name = t.get(2..).unwrap_or_default();
            let name = name.split_once('=').map_or(name, |(n, _)| n);
            let matches: Vec<&&str> = LONG.iter().filter(|l| l.starts_with(name)).collect();
            let full = match matches.as_slice() {
                [one] => **one,
                _ => name,
            };
            match full {
                "recursive" => recursive = true,
                "no-preserve-root" => {
                    return Some(
                        "`rm --no-preserve-root` can delete the whole filesystem".to_owned(),
                    );
                }
                _ => {}
            }
            continue;
        }
        if !options_done && t.starts_with('-') && t.len() > 1 {
            if t.contains(['r', 'R']) {
                recursive = true;
            }
            continue;
        }
        targets.push(arg);
    }
    if !recursive {
        return None;
    }
    targets
        .into_iter()
        .find_map(|t| critical_target(t, cwd))
        .map(|what| format!("`rm -r` on {what} deletes everything in it"))
}

/// `find / -delete`, `find ~ -delete`.
fn find_delete(args: &[Word], cwd: &Cwd) -> Option<String> {
    if !args.iter().any(|a| a.text() == "-delete") {
        return None;
    }
    args.iter()
        .take_while(|a| !a.text().starts_with('-') && !matches!(a.text(), "(" | "!"))
        .find_map(|a| critical_target(a, cwd))
        .map(|what| format!("`find -delete` on {what} deletes everything in it"))
}

/// Top-level directories whose recursive deletion breaks the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "Users",
    "System",
    "Library",
    "Applications",
];

/// The rest of a word naming the home directory, if it does: `~`, `~/x`,
/// `$HOME`, `${HOME}`, `${HOME:?}`, `${HOME%/}/x` (any operator: the value
/// is the home directory or an error).
fn home_rest(word: &Word) -> Option<&str> {
    let text = word.text();
    let rest = if word.has_tilde() {
        text.strip_prefix('~')?
    } else if word.has_expansion() {
        if let Some(rest) = text.strip_prefix("$HOME") {
            if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                return None;
            }
            rest
        } else {
            let rest = text.strip_prefix("${HOME")?;
            if !rest.starts_with(['}', ':', '?', '-', '=', '+', '%', '#', '/', '^', ',', '@']) {
                return None;
            }
            rest.split_once('}').map(|(_, after)| after)?
        }
    } else {
        return None;
    };
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// Whether a path component is a pattern the shell expands (`*`, `u*`,
/// `[a-z]*`, `{a,b}`, `@(x)`).
fn is_pattern(component: &str) -> bool {
    component.contains(['*', '?', '[', '{'])
        || ["@(", "!(", "+("].iter().any(|p| component.contains(p))
}

/// Describes `word` if it names `/`, the home directory, or a top-level
/// system directory (`/*`, `/.`, `//`, `~/`, `"$HOME"/*`, `/usr/`, `/u*`,
/// `/{a,b}` included), directly or relative to a known `cwd`.
fn critical_target(word: &Word, cwd: &Cwd) -> Option<String> {
    let text = word.text();
    let glob = word.has_glob();
    if let Some(rest) = home_rest(word) {
        return home_target(text, rest, glob);
    }
    if text.starts_with('/') {
        return root_target(text, text, glob);
    }
    if text.starts_with('$') || text.starts_with('~') {
        return None;
    }
    match cwd {
        Cwd::At(base) => {
            let dir = format!("/{}", base.join("/"));
            let shown = format!("{text}` after `cd {dir}");
            root_target(&shown, &format!("{dir}/{text}"), glob)
        }
        Cwd::Home(base) => {
            let dir = format!("/{}", base.join("/"));
            let shown = format!("{text}` after `cd ~{}", dir.trim_end_matches('/'));
            home_target(&shown, &format!("{dir}/{text}"), glob)
        }
        Cwd::Unknown => None,
    }
}

fn home_target(shown: &str, rest: &str, glob: bool) -> Option<String> {
    match normalise(rest, glob, false) {
        Some(parts) if parts.is_empty() => Some(format!("the home directory (`{shown}`)")),
        Some(parts) if glob && parts.len() == 1 && parts.iter().all(|p| is_pattern(p)) => {
            Some(format!("everything in the home directory (`{shown}`)"))
        }
        // `~/..`: above home.
        None => Some(format!("the directory above home (`{shown}`)")),
        Some(_) => None,
    }
}

fn root_target(shown: &str, path: &str, glob: bool) -> Option<String> {
    match normalise(path, glob, true)?.as_slice() {
        [] => Some(format!("the root directory (`{shown}`)")),
        [dir] if SYSTEM_DIRS.contains(dir) => Some(format!("a system directory (`{shown}`)")),
        [dir] if glob && is_pattern(dir) => Some(format!("top-level directories (`{shown}`)")),
        _ => None,
    }
}

/// The components of a path, `.` and empty ones dropped, `..` applied, and a
/// trailing `*` dropped when the word is a pattern (`/*` means everything in
/// `/`). When `..` climbs above the start: `None`, or, with `clamp` (as at
/// `/`, where `/..` is `/`), nothing.
fn normalise(path: &str, glob: bool, clamp: bool) -> Option<Vec<&str>> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() && !clamp {
                    return None;
                }
            }
            _ => parts.push(part),
        }
    }
    if glob && parts.last().is_some_and(|p| p.chars().all(|c| c == '*')) {
        parts.pop();
    }
    Some(parts)
}

/// An absolute path with `//`, `.` and `..` resolved: `/./dev/../dev/sda`
/// is `/dev/sda`. `None` for a relative path.
fn normalise_path(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let parts = normalise(path, false, true)?;
    Some(format!("/{}", parts.join("/")))
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

fn is_disk_device(path: &str) -> bool {
    const DISKS: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "disk/", "mapper/", "loop", "sr",
        "rdisk", "disk", "nbd", "zd", "block/",
    ];
    normalise_path(path).is_some_and(|p| {
        p.strip_prefix("/dev/")
            .is_some_and(|dev| DISKS.iter().any(|d| dev.starts_with(d)))
    })
}

/// `/proc/sysrq-trigger` and `/proc/sys/kernel/sysrq`, however spelt.
fn is_sysrq(path: &str) -> bool {
    normalise_path(path)
        .is_some_and(|p| matches!(p.as_str(), "/proc/sysrq-trigger" | "/proc/sys/kernel/sysrq"))
}

fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || path.starts_with("/dev/fd/")
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

fn is_stdin_interpreter(name: &str) -> bool {
    STDIN_INTERPRETERS.contains(&name) || name.starts_with("python") || name.starts_with("pypy")
}

/// `curl … | sh`, `wget -O- … | python3`, `sh <(curl …)`, `bash -c "$(curl …)"`.
fn download_into_interpreter(
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
fn stdin_program(commands: &[SimpleCommand], cmd: &SimpleCommand) -> Option<String> {
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
    let how = match own.map(super::model::Redirection::kind) {
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

    #[test]
    fn paths() {
        assert_eq!(normalise("/", false, true), Some(vec![]));
        assert_eq!(normalise("//./", false, true), Some(vec![]));
        assert_eq!(normalise("/*", true, true), Some(vec![]));
        assert_eq!(normalise("/usr/..", false, true), Some(vec![]));
        assert_eq!(normalise("/..", false, true), Some(vec![]));
        assert_eq!(normalise("/..", false, false), None);
        assert_eq!(normalise("/etc/", false, true), Some(vec!["etc"]));
        assert_eq!(normalise_path("//dev/sda").as_deref(), Some("/dev/sda"));
        assert_eq!(
            normalise_path("/./dev/../dev/sda").as_deref(),
            Some("/dev/sda")
        );
        assert!(is_disk_device("/dev//sda1"));
        assert!(!is_disk_device("dev/sda"));
        assert!(is_sysrq("/proc//sysrq-trigger"));
    }

    #[test]
    fn home_spellings() {
        let word = |raw: &str| {
            let opts = brush_parser::ParserOptions::default();
            super::super::words::convert(raw, &opts)
                .map(|(w, _)| w)
                .unwrap()
        };
        let cases: &[(&str, Option<&str>)] = &[
            ("~", Some("")),
            ("~/x", Some("/x")),
            ("$HOME", Some("")),
            ("\"$HOME\"/", Some("/")),
            ("${HOME}", Some("")),
            ("\"${HOME:?}\"", Some("")),
            ("${HOME%/}/", Some("/")),
            ("$HOMEDIR", None),
            ("${HOMEDIR}", None),
            ("'$HOME'", None),
            ("~user", None),
        ];
        for (raw, want) in cases {
            assert_eq!(home_rest(&word(raw)), *want, "{raw}");
        }
    }
}
