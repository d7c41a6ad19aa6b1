//! Arbitrary effects, decoded from bytes, through every guardrail rule over
//! effects (`toolgate_policy::PathRules`, `allows_paths`, `EditLimits`,
//! `CodeRules`). Nothing may panic, and:
//!
//! - a write, delete or move that names a path matching a protected pattern
//!   (as written, or as the resolver says it resolves) is always refused,
//!   whether or not sensitive files are allowed;
//! - unless sensitive files are allowed, any file effect naming a path that
//!   matches a sensitive pattern as written is refused;
//! - `allows_paths` never matches an opaque call, nor one with a command or
//!   network effect, nor one that changes nothing.
//!
//! Paths are built from a vocabulary of the names the rules care about
//! (`toolgate.yaml`, `.git`, `hooks`, `.env`, `..`, `/ws`, a symlink…) so
//! that the fuzzer reaches matches quickly; commands mix that vocabulary
//! with shell punctuation, or are raw bytes.
//!
//!     cargo +nightly fuzz run effect_rules -- -max_total_time=600

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgate_core::{
    Change, DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, Effect, Effects, PathPatterns,
};
use toolgate_policy::{
    CodeRule, CodeRules, EditCount, EditLimits, EditUsage, FileGlobs, PathRules, Severity,
    allows_paths,
};

/// Path components the rules care about.
const NAMES: &[&str] = &[
    "toolgate.yaml",
    ".toolgate",
    ".git",
    "config",
    "hooks",
    "modules",
    "commondir",
    "Cargo.lock",
    "vendor",
    "src",
    "a.rs",
    ".env",
    ".env.local",
    "id_rsa",
    ".ssh",
    "credentials",
    "server.pem",
    "..",
    ".",
    "",
    "ws",
    "private",
    "lnk",
    "lnkdir",
    "*",
    ".e*",
    "{a,.env}",
    "x y",
    "é",
    "-",
];

/// Shell punctuation between command words.
const GLUE: &[&str] = &[
    " ", " | ", " > ", " < ", "; ", " && ", "$(", ")", "'", "\"", "--file=", "-f", "@", "HEAD:",
    "{", "}", ",", "..", "<<< ", "=", "\\", "`", "(", "\n",
];

/// The workspace's symlinks, for the resolver.
const LINKS: &[(&str, &str)] = &[
    ("lnk", "toolgate.yaml"),
    ("lnkdir/x", ".git/hooks/x"),
    ("src/lnk", ".env"),
];

struct World {
    /// Rules without and with `allow_sensitive`.
    rules: [PathRules; 2],
    sensitive: PathPatterns,
    protected: PathPatterns,
    globs: FileGlobs,
    code: CodeRules,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let sensitive = PathPatterns::new(DEFAULT_SENSITIVE_PATTERNS.iter().copied()).unwrap();
        let protected = PathPatterns::new(
            DEFAULT_PROTECTED_PATTERNS
                .iter()
                .copied()
                .chain(["/Cargo.lock", "vendor/**"]),
        )
        .unwrap();
        let rules = [false, true].map(|allow| {
            PathRules::builder("/ws")
                .root_alias("/private/ws")
                .sensitive(sensitive.clone())
                .protected(protected.clone())
                .allow_sensitive(allow)
                .build()
                .unwrap()
        });
        let code = CodeRules::new([
            CodeRule::new("unwrap")
                .severity(Severity::Block)
                .files(["src/**"]),
            CodeRule::new("TODO"),
        ])
        .unwrap();
        World {
            rules,
            sensitive,
            protected,
            globs: FileGlobs::new(["src/**", "*.rs"]).unwrap(),
            code,
        }
    })
}

/// Reads the input a byte at a time; zeros once it runs out.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn pick<'t>(&mut self, table: &[&'t str]) -> &'t str {
        table[usize::from(self.byte()) % table.len()]
    }

    fn raw(&mut self) -> String {
        let len = usize::from(self.byte() % 48).min(self.data.len());
        let (text, rest) = self.data.split_at(len);
        self.data = rest;
        String::from_utf8_lossy(text).into_owned()
    }

    fn path(&mut self) -> String {
        let mode = self.byte();
        if mode % 16 == 15 {
            return self.raw();
        }
        let mut path = match mode % 6 {
            0 => "/ws/".to_owned(),
            1 => "./".to_owned(),
            2 => "/private/ws/".to_owned(),
            3 => "/".to_owned(),
            _ => String::new(),
        };
        let parts = 1 + self.byte() % 4;
        for i in 0..parts {
            if i > 0 {
                path.push('/');
            }
            path.push_str(self.pick(NAMES));
        }
        path
    }

    fn command(&mut self) -> String {
        if self.byte() % 4 == 0 {
            return self.raw();
        }
        let mut line = String::new();
        for _ in 0..1 + self.byte() % 8 {
            line.push_str(self.pick(GLUE));
            if self.byte() % 2 == 0 {
                line.push_str(&self.path());
            } else {
                line.push_str(self.pick(NAMES));
            }
        }
        line
    }

    fn effect(&mut self) -> Effect {
        match self.byte() % 7 {
            0 => Effect::read(self.path()),
            1 => Effect::read_tree(self.path()),
            2 => {
                let path = self.path();
                let change = if self.byte() % 2 == 0 {
                    let before = self.raw();
                    let after = self.raw();
                    Change::from_texts(Some(&before), after)
                } else {
                    let (added, removed) = (self.byte(), self.byte());
                    // Extreme declared counts too: nothing may overflow.
                    let big = |b: u8| if b == 255 { usize::MAX } else { usize::from(b) };
                    Change::counted(big(added), big(removed), self.byte() % 2 == 0)
                };
                Effect::write(path, change)
            }
            3 => Effect::Delete {
                path: self.path(),
                lines_removed: usize::from(self.byte()),
            },
            4 => Effect::Move {
                from: self.path(),
                to: self.path(),
            },
            5 => {
                let command = self.command();
                let cwd = (self.byte() % 3 == 0).then(|| self.path());
                Effect::command(command, cwd)
            }
            _ => Effect::Network { url: self.raw() },
        }
    }
}

fn resolve(path: &str) -> Option<String> {
    let path = path.trim_start_matches("/ws/").trim_start_matches("./");
    LINKS
        .iter()
        .find(|(link, _)| *link == path)
        .map(|(_, target)| (*target).to_owned())
}

fn expand(pattern: &str) -> Vec<String> {
    if pattern.len() % 2 == 0 {
        vec![".env".to_owned(), "src/a.rs".to_owned()]
    } else {
        Vec::new()
    }
}

fuzz_target!(|data: &[u8]| {
    let w = world();
    let mut input = Input { data };
    let opaque = input.byte() == 0xff;
    let effects = if opaque {
        Effects::Opaque
    } else {
        let count = 1 + input.byte() % 4;
        Effects::known((0..count).map(|_| input.effect()).collect::<Vec<_>>())
    };

    let matches = |set: &PathPatterns, path: &str| {
        set.matches(Path::new(path)).is_some()
            || resolve(path).is_some_and(|to| set.matches(Path::new(&to)).is_some())
    };
    let changes_protected = effects
        .list()
        .iter()
        .filter(|e| e.changes_files())
        .flat_map(Effect::paths)
        .any(|path| matches(&w.protected, path));
    let names_sensitive = effects
        .list()
        .iter()
        .flat_map(Effect::paths)
        .any(|path| w.sensitive.matches(Path::new(path)).is_some());

    for (rules, allow_sensitive) in w.rules.iter().zip([false, true]) {
        let verdict = rules.check(&effects, &resolve, &expand);
        if let Err(refusal) = &verdict {
            // Every refusal has a message for the model.
            assert!(!refusal.to_string().is_empty());
        }
        assert!(
            !changes_protected || verdict.is_err(),
            "a change to a protected path passed: {effects:?}"
        );
        assert!(
            allow_sensitive || !names_sensitive || verdict.is_err(),
            "a sensitive path passed: {effects:?}"
        );
        if opaque {
            assert!(verdict.is_ok(), "deny rules cannot see into an opaque call");
        }
    }

    let allowed = allows_paths(&effects, &w.globs);
    let list = effects.list();
    if allowed {
        assert!(!opaque);
        assert!(!effects.changed_paths().is_empty(), "{effects:?}");
        assert!(
            list.iter()
                .all(|e| !matches!(e, Effect::Command { .. } | Effect::Network { .. })),
            "{effects:?}"
        );
    }

    let count = EditCount::of(&effects);
    let mut usage = EditUsage::new();
    usage.record(&count);
    usage.record(&count);
    let limits = EditLimits::new()
        .max_files_modified(Some(usize::from(data.len() % 4)))
        .max_lines_changed(Some(data.len()));
    if let Err(refusal) = limits.check(&usage, &count) {
        assert!(!refusal.to_string().is_empty());
    }

    for broken in w.code.check(&effects) {
        let _ = (broken.to_string(), broken.severity(), broken.is_unchecked());
    }
});
