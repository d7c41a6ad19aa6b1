//! Commands refused in every mode, yolo included (DESIGN.md §9, layer 1).
//!
//! The rules look at the parsed command, not at its spelling: `rm -fr /`,
//! `rm -r -f /`, `rm --recursive --force ~` and `/bin/rm -rf "$HOME"` are the
//! same command, and `echo 'rm -rf /'` is a different one (quoted text is
//! data). They see every simple command of the line, nested ones included:
//! `$(sudo id)`, `sh -c 'sudo id'`, `find / -exec rm -rf {} \;`.
//!
//! The blocklist stops accidents and the obvious; it cannot stop a determined
//! adversary (`eval "$(echo c3VkbyBpZA== | base64 -d)"` hides its command
//! until run time, and is `dangerous`, not blocked). The OS sandbox (layer 5)
//! is the boundary for that.

use super::model::{Origin, ParsedCommand, SimpleCommand};
use super::tables::{DOWNLOADERS, STDIN_INTERPRETERS};
use super::words::Word;

/// The reason the line is refused, if it is.
pub(crate) fn check(parsed: &ParsedCommand) -> Option<String> {
    let commands = parsed.simple_commands();
    for (idx, cmd) in commands.iter().enumerate() {
        if cmd.is_compound_part() && cmd.redirections().is_empty() {
            continue;
        }
        if let Some(reason) = check_one(cmd) {
            return Some(reason);
        }
        if let Some(reason) = fork_bomb(cmd) {
            return Some(reason);
        }
        if let Some(reason) = download_into_interpreter(commands, idx, cmd) {
            return Some(reason);
        }
    }
    None
}

fn check_one(cmd: &SimpleCommand) -> Option<String> {
    for redirection in cmd.redirections() {
        if redirection.writes_file() && is_disk_device(redirection.target().text()) {
            return Some(format!(
                "`{}{}` overwrites a disk device",
                redirection.kind().operator(),
                redirection.target().text()
            ));
        }
    }
    let name = cmd.program_name();
    let args = cmd.args();
    match name {
        "sudo" | "su" | "doas" | "pkexec" | "run0" => Some(format!(
            "`{name}` runs commands with another user's privileges"
        )),
        "rm" => rm(args),
        "chmod" => chmod(args),
        "dd" => args.iter().find_map(|a| {
            let target = a.text().strip_prefix("of=")?;
            (target.starts_with("/dev/") && !is_harmless_device(target))
                .then(|| format!("`dd of={target}` overwrites a device"))
        }),
        "tee" | "cp" | "shred" | "mv" | "install" => args
            .iter()
            .find(|a| is_disk_device(a.text()))
            .map(|a| format!("`{name} {}` overwrites a disk device", a.text())),
        _ if name.starts_with("mkfs") => Some(format!("`{name}` formats a disk")),
        "mke2fs" | "mkswap" | "wipefs" => Some(format!("`{name}` formats or wipes a disk")),
        "pkill" => pkill(args),
        "killall" => killall(args),
        "kill" => kill_all_processes(args),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(format!("`{name}` stops the machine")),
        "systemctl" => args
            .iter()
            .find(|a| {
                matches!(
                    a.text(),
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "soft-reboot"
                        | "emergency"
                        | "rescue"
                )
            })
            .map(|a| format!("`systemctl {}` stops the machine", a.text())),
        "init" | "telinit" => args
            .iter()
            .find(|a| matches!(a.text(), "0" | "1" | "6" | "s" | "S"))
            .map(|a| format!("`{name} {}` halts or reboots the machine", a.text())),
        _ => None,
    }
}

/// `rm` with a recursive flag on `/`, `~`, `$HOME` or a top-level system
/// directory, in any spelling; or `rm --no-preserve-root`.
fn rm(args: &[Word]) -> Option<String> {
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
        .find_map(critical_target)
        .map(|what| format!("`rm -r` on {what} deletes everything in it"))
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

/// Describes `word` if it names `/`, the home directory, or a top-level
/// system directory (`/*`, `/.`, `//`, `~/`, `"$HOME"/*`, `/usr/` included).
fn critical_target(word: &Word) -> Option<String> {
    let text = word.text();
    let expanded = word.has_expansion();
    let home_rest = if word.has_tilde() {
        text.strip_prefix('~')
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    } else if expanded {
        text.strip_prefix("${HOME}")
            .or_else(|| text.strip_prefix("$HOME"))
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    } else {
        None
    };
    if let Some(rest) = home_rest {
        return match normalise(rest, word.has_glob(), false) {
            Some(parts) if parts.is_empty() => Some(format!("the home directory (`{text}`)")),
            // `~/..`: above home.
            None => Some(format!("the directory above home (`{text}`)")),
            Some(_) => None,
        };
    }
    if !text.starts_with('/') {
        return None;
    }
    match normalise(text, word.has_glob(), true)?.as_slice() {
        [] => Some(format!("the root directory (`{text}`)")),
        [dir] if SYSTEM_DIRS.contains(dir) => Some(format!("a system directory (`{text}`)")),
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

/// `chmod` making anything writable by every user: `777`, `666`, `o+w`,
/// `a+rwx`, `-R 777`.
fn chmod(args: &[Word]) -> Option<String> {
    args.iter().find_map(|arg| {
        let t = arg.text();
        world_writable_mode(t).then(|| format!("`chmod {t}` makes files writable by every user"))
    })
}

fn world_writable_mode(mode: &str) -> bool {
    if (3..=4).contains(&mode.len()) && mode.chars().all(|c| ('0'..='7').contains(&c)) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|others| others & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let Some(op_at) = clause.find(['+', '=']) else {
            return false;
        };
        let (who, perms) = clause.split_at(op_at);
        who.chars().all(|c| "ugoa".contains(c))
            && (who.contains('a') || who.contains('o'))
            && perms.contains('w')
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
        "rdisk", "disk",
    ];
    path.strip_prefix("/dev/")
        .is_some_and(|dev| DISKS.iter().any(|d| dev.starts_with(d)))
}

fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || path.starts_with("/dev/fd/")
}

/// `f(){ f|f& };f` and the like: a function that calls itself in a pipeline
/// or in the background multiplies until the machine stalls.
fn fork_bomb(cmd: &SimpleCommand) -> Option<String> {
    let ctx = cmd.context();
    let function = ctx.function.as_deref()?;
    (cmd.program() == function && (ctx.pipeline.is_some() || ctx.background)).then(|| {
        format!(
            "the function `{function}` calls itself in a pipeline or in the background: a fork bomb"
        )
    })
}

/// `curl … | sh`, `wget -O- … | python3`, `sh <(curl …)`, `bash -c "$(curl …)"`.
fn download_into_interpreter(
    commands: &[SimpleCommand],
    idx: usize,
    cmd: &SimpleCommand,
) -> Option<String> {
    let name = cmd.program_name();
    let interpreter = STDIN_INTERPRETERS.contains(&name) || name.starts_with("python");
    let runs_code = interpreter || matches!(name, "source" | "." | "eval");
    if !runs_code {
        return None;
    }
    // Piped: a downloader earlier in the same pipeline.
    if let Some(slot) = cmd.context().pipeline
        && interpreter
        && slot.index > 0
        && reads_program_from_stdin(cmd.args())
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

/// Whether an interpreter, given these arguments, reads its program from
/// standard input: no `-c`/`-e`/`-m` and no script argument (or `-`).
fn reads_program_from_stdin(args: &[Word]) -> bool {
    for arg in args {
        let t = arg.text();
        if t == "-" || t == "-s" {
            return true;
        }
        if t == "--" {
            continue;
        }
        if let Some(cluster) = t.strip_prefix('-') {
            if !cluster.starts_with('-') && cluster.contains(['c', 'e', 'm', 'E']) {
                return false;
            }
            continue;
        }
        return false;
    }
    true
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
            ("666", true),
            ("755", false),
            ("644", false),
            ("a+rwx", true),
            ("o+w", true),
            ("ugo=rwx", true),
            ("u+w", false),
            ("+x", false),
            ("go-w", false),
            ("u+x,o+w", true),
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
    }
}
