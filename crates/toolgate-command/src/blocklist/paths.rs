//! Paths whose recursive deletion destroys the system or the user's data:
//! `/`, the home directory, the top-level system directories, however they
//! are spelt (globs, `..`, `$HOME`, a `cd` earlier in the line).

use toolgate_shell::model::SimpleCommand;
use toolgate_shell::words::Word;

/// The directory the line is in at a given command, as far as `cd` and
/// `pushd` earlier in the line tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cwd {
    Unknown,
    /// An absolute directory, as its components.
    At(Vec<String>),
    /// The home directory, or below it.
    Home(Vec<String>),
}

impl Cwd {
    /// The directory after `cmd` runs.
    pub(super) fn after(&self, cmd: &SimpleCommand) -> Self {
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
pub(super) fn rm(args: &[Word], cwd: &Cwd) -> Option<String> {
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
pub(super) fn find_delete(args: &[Word], cwd: &Cwd) -> Option<String> {
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
        return home_target("the home directory", text, rest, glob);
    }
    if let Some((user, rest)) = user_home(word) {
        return home_target(&format!("the home directory of `{user}`"), text, rest, glob);
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
            home_target("the home directory", &shown, &format!("{dir}/{text}"), glob)
        }
        Cwd::Unknown => None,
    }
}

/// Describes `rest` below `home` (the home directory, or a user's) if it is
/// that directory, everything in it, or above it.
fn home_target(home: &str, shown: &str, rest: &str, glob: bool) -> Option<String> {
    match normalise(rest, glob, false) {
        Some(parts) if parts.is_empty() => Some(format!("{home} (`{shown}`)")),
        Some(parts) if glob && parts.len() == 1 && parts.iter().all(|p| is_pattern(p)) => {
            Some(format!("everything in {home} (`{shown}`)"))
        }
        // `~/..`: above home.
        None => Some(format!("the directory above {home} (`{shown}`)")),
        Some(_) => None,
    }
}

/// The user and the rest of a word naming a user's home directory: `~root`,
/// `~bob/`, `~bob/*` (not `~+` and `~-`, the working directories).
fn user_home(word: &Word) -> Option<(&str, &str)> {
    if !word.has_tilde() {
        return None;
    }
    let after = word.text().strip_prefix('~')?;
    let (user, rest) = after.split_at(after.find('/').unwrap_or(after.len()));
    let login = !user.is_empty()
        && !user.starts_with('-')
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '$'));
    login.then_some((user, rest))
}

fn root_target(shown: &str, path: &str, glob: bool) -> Option<String> {
    match normalise(path, glob, true)?.as_slice() {
        [] => Some(format!("the root directory (`{shown}`)")),
        [dir] if SYSTEM_DIRS.contains(dir) => Some(format!("a system directory (`{shown}`)")),
        [dir] if glob && is_pattern(dir) => Some(format!("top-level directories (`{shown}`)")),
        ["home" | "Users", _] => Some(format!("a user's home directory (`{shown}`)")),
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
pub(super) fn normalise_path(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let parts = normalise(path, false, true)?;
    Some(format!("/{}", parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn home_spellings() {
        let word = |raw: &str| {
            let opts = brush_parser::ParserOptions::default();
            toolgate_shell::words::convert(raw, &opts)
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
        let users: &[(&str, Option<(&str, &str)>)] = &[
            ("~root", Some(("root", ""))),
            ("~bob/", Some(("bob", "/"))),
            ("~bob/*", Some(("bob", "/*"))),
            ("~www-data/x", Some(("www-data", "/x"))),
            ("~+", None),
            ("~-", None),
            ("~", None),
            ("'~bob'", None),
        ];
        for (raw, want) in users {
            assert_eq!(user_home(&word(raw)), *want, "{raw}");
        }
    }
}
