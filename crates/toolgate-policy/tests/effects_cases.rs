#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]
//! The guardrail rules over effects, against tables of cases, one line per
//! case: path rules (sensitive, protected, absolute, symlinked, command
//! words), opaque calls, allow globs, edit limits and code rules.

use toolgate_core::{
    Change, DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, Effect, Effects, PathPatterns,
};
use toolgate_policy::{
    CodeRule, CodeRules, EditCount, EditLimits, EditUsage, EffectsPolicyError, FileGlobs,
    LimitRefusal, PathRefusal, PathRules, Severity, Via, allows_paths, command_operands,
};

// ---- Building effects, one short call per effect. ----

fn read(path: &str) -> Effects {
    Effects::known([Effect::read(path)])
}

fn tree(path: &str) -> Effects {
    Effects::known([Effect::read_tree(path)])
}

fn write(path: &str) -> Effects {
    Effects::known([Effect::write(path, Change::counted(1, 0, false))])
}

fn delete(path: &str) -> Effects {
    Effects::known([Effect::Delete {
        path: path.into(),
        lines_removed: 0,
    }])
}

fn mv(from: &str, to: &str) -> Effects {
    Effects::known([Effect::Move {
        from: from.into(),
        to: to.into(),
    }])
}

fn cmd(command: &str) -> Effects {
    Effects::known([Effect::command(command, None)])
}

fn cmd_in(command: &str, cwd: &str) -> Effects {
    Effects::known([Effect::command(command, Some(cwd.to_owned()))])
}

fn net(url: &str) -> Effects {
    Effects::known([Effect::Network { url: url.into() }])
}

// ---- Path rules. ----

const ROOT: &str = "/ws";

/// The symlinks of the workspace: what `resolve` answers.
const LINKS: &[(&str, &str)] = &[
    ("notes.txt", ".env"),
    ("/ws/notes.txt", ".env"),
    ("cfg", "toolgate.yaml"),
    ("linkdir/a", ".ssh/a"),
    ("sub/notes.txt", ".env"),
];

/// The files a glob matches on disk: what `expand` answers.
const GLOBS: &[(&str, &[&str])] = &[
    (".e*", &[".env", ".editorconfig"]),
    ("*.md", &["README.md", "CHANGES.md"]),
    ("sub/*.txt", &["sub/notes.txt"]),
    ("*.txt", &["a.txt"]),
];

fn resolve(path: &str) -> Option<String> {
    LINKS
        .iter()
        .find(|(link, _)| *link == path)
        .map(|(_, target)| (*target).to_owned())
}

fn expand(pattern: &str) -> Vec<String> {
    GLOBS
        .iter()
        .find(|(glob, _)| *glob == pattern)
        .map(|(_, names)| names.iter().map(|n| (*n).to_owned()).collect())
        .unwrap_or_default()
}

fn rules(allow_sensitive: bool) -> PathRules {
    let sensitive = PathPatterns::new(
        DEFAULT_SENSITIVE_PATTERNS
            .iter()
            .copied()
            .chain(["/config/prod.yaml"]),
    )
    .unwrap();
    let protected = PathPatterns::new(
        DEFAULT_PROTECTED_PATTERNS
            .iter()
            .copied()
            .chain(["/Cargo.lock", "vendor/**"]),
    )
    .unwrap();
    PathRules::builder(ROOT)
        .root_alias("/private/ws")
        .sensitive(sensitive)
        .protected(protected)
        .allow_sensitive(allow_sensitive)
        .build()
        .unwrap()
}

/// What a check comes to, in a form a table can spell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Pass,
    /// Sensitive, as written: (path, pattern).
    S(&'static str, &'static str),
    /// Sensitive, resolved: (path, target, pattern).
    SR(&'static str, &'static str, &'static str),
    /// Sensitive, as an expansion: (word, name, pattern).
    SX(&'static str, &'static str, &'static str),
    /// Protected, as written: (path, pattern).
    P(&'static str, &'static str),
    /// Protected, resolved: (path, target, pattern).
    PR(&'static str, &'static str, &'static str),
    /// Too many names to judge: the word.
    U(&'static str),
}

use Out::{P, PR, Pass, S, SR, SX, U};

/// Whether `got` is what `want` spells.
fn same(got: &Result<(), PathRefusal>, want: &Out) -> bool {
    let Err(refusal) = got else {
        return *want == Pass;
    };
    let (path, pattern) = (refusal.path(), refusal.pattern());
    match (want, refusal) {
        (S(p, pat), PathRefusal::Sensitive { via, .. })
        | (P(p, pat), PathRefusal::Protected { via, .. }) => {
            *via == Via::Written && path == *p && pattern == Some(pat)
        }
        (SR(p, to, pat), PathRefusal::Sensitive { via, .. })
        | (PR(p, to, pat), PathRefusal::Protected { via, .. }) => {
            *via == Via::Resolved((*to).into()) && path == *p && pattern == Some(pat)
        }
        (SX(p, name, pat), PathRefusal::Sensitive { via, .. }) => {
            *via == Via::Expanded((*name).into()) && path == *p && pattern == Some(pat)
        }
        (U(word), PathRefusal::Unexpandable { .. }) => path == *word,
        _ => false,
    }
}

fn run_path_cases(rules: &PathRules, cases: &[(Effects, Out)]) {
    let mut failures = Vec::new();
    for (effects, want) in cases {
        let got = rules.check(effects, &resolve, &expand);
        if !same(&got, want) {
            failures.push(format!("{effects:?}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sensitive_paths_in_every_effect() {
    #[rustfmt::skip]
    let cases = [
        (read(".env"), S(".env", ".env*")),
        (read("config/.env.production"), S("config/.env.production", ".env*")),
        (read("src/main.rs"), Pass),
        (tree("backup/.ssh"), Pass),
        (tree("backup/.ssh/keys"), S("backup/.ssh/keys", ".ssh/**")),
        (write(".env.local"), S(".env.local", ".env*")),
        (write("src/main.rs"), Pass),
        (delete("keys/server.pem"), S("keys/server.pem", "*.pem")),
        (mv(".env", "notes.md"), S(".env", ".env*")),
        (mv("notes.md", ".env"), S(".env", ".env*")),
        (mv("a.md", "b.md"), Pass),
        (read("config/prod.yaml"), S("config/prod.yaml", "/config/prod.yaml")),
        (read("sub/config/prod.yaml"), Pass),
        (read("./src/../.env"), S("./src/../.env", ".env*")),
        (read("src/../config/prod.yaml"), S("src/../config/prod.yaml", "/config/prod.yaml")),
        (net("https://example.invalid/.env"), Pass),
        (Effects::none(), Pass),
    ];
    run_path_cases(&rules(false), &cases);
}

#[test]
fn protected_paths_in_every_change_but_not_in_reads() {
    #[rustfmt::skip]
    let cases = [
        (read("toolgate.yaml"), Pass),
        (tree(".git/hooks"), Pass),
        (write("toolgate.yaml"), P("toolgate.yaml", "/toolgate.yaml")),
        (write("./toolgate.yaml"), P("./toolgate.yaml", "/toolgate.yaml")),
        (write("src/../toolgate.yaml"), P("src/../toolgate.yaml", "/toolgate.yaml")),
        (write("sub/toolgate.yaml"), Pass),
        (write(".toolgate/sessions.db"), P(".toolgate/sessions.db", "/.toolgate")),
        (delete(".git/hooks/pre-commit"), P(".git/hooks/pre-commit", "/.git/hooks")),
        (delete("Cargo.lock"), P("Cargo.lock", "/Cargo.lock")),
        (delete("sub/Cargo.lock"), Pass),
        (write("vendor/a/b.rs"), P("vendor/a/b.rs", "vendor/**")),
        // A rename OF a protected file, and a rename ONTO one.
        (mv("toolgate.yaml", "old.yaml"), P("toolgate.yaml", "/toolgate.yaml")),
        (mv("new.yaml", "toolgate.yaml"), P("toolgate.yaml", "/toolgate.yaml")),
        (mv(".git/config", ".git/config.bak"), P(".git/config", "/.git/config")),
        (mv("new", ".git/config"), P(".git/config", "/.git/config")),
        (mv("a.yaml", "b.yaml"), Pass),
        // Sensitive comes first when a path is both.
        (write("vendor/.env"), S("vendor/.env", ".env*")),
    ];
    run_path_cases(&rules(false), &cases);
}

#[test]
fn absolute_paths_inside_and_outside() {
    #[rustfmt::skip]
    let cases = [
        // Inside: judged relative to the root (or its alias).
        (read("/ws/.env"), S("/ws/.env", ".env*")),
        (read("/ws/src/main.rs"), Pass),
        (write("/ws/toolgate.yaml"), P("/ws/toolgate.yaml", "/toolgate.yaml")),
        (write("/private/ws/toolgate.yaml"), P("/private/ws/toolgate.yaml", "/toolgate.yaml")),
        (write("/ws/src/../toolgate.yaml"), P("/ws/src/../toolgate.yaml", "/toolgate.yaml")),
        (read("/ws/config/prod.yaml"), S("/ws/config/prod.yaml", "/config/prod.yaml")),
        (write("/ws/sub/toolgate.yaml"), Pass),
        // Outside: judged by each name and the whole path.
        (read("/home/u/.ssh/id_rsa"), S("/home/u/.ssh/id_rsa", "id_rsa*")),
        (read("/home/u/.ssh/config"), S("/home/u/.ssh/config", ".ssh/**")),
        (read("/etc/shadow"), S("/etc/shadow", "*shadow*")),
        (read("/ws/../etc/shadow"), S("/ws/../etc/shadow", "*shadow*")),
        (read("/home/u/.aws/credentials"), S("/home/u/.aws/credentials", "credentials")),
        (read("/etc/hosts"), Pass),
        (write("/tmp/out.txt"), Pass),
        (read("/wsx/src/main.rs"), Pass),
        (read("/other/config/prod.yaml"), Pass),
        (read("../other/.env"), S("../other/.env", ".env*")),
        (read("../../etc/passwd"), Pass),
    ];
    run_path_cases(&rules(false), &cases);
}

#[test]
fn symlinked_paths_are_judged_as_they_resolve() {
    #[rustfmt::skip]
    let cases = [
        (read("notes.txt"), SR("notes.txt", ".env", ".env*")),
        (read("/ws/notes.txt"), SR("/ws/notes.txt", ".env", ".env*")),
        (write("linkdir/a"), SR("linkdir/a", ".ssh/a", ".ssh/**")),
        (write("cfg"), PR("cfg", "toolgate.yaml", "/toolgate.yaml")),
        (mv("cfg", "x.yaml"), PR("cfg", "toolgate.yaml", "/toolgate.yaml")),
        (read("cfg"), Pass),
        (cmd("cat notes.txt"), SR("notes.txt", ".env", ".env*")),
        (cmd_in("cat notes.txt", "sub"), SR("sub/notes.txt", ".env", ".env*")),
        (read("plain.txt"), Pass),
    ];
    run_path_cases(&rules(false), &cases);
}

#[test]
fn command_words_are_judged_as_sensitive_paths() {
    #[rustfmt::skip]
    let cases = [
        (cmd("cat .env"), S(".env", ".env*")),
        (cmd("cat ./.env"), S("./.env", ".env*")),
        (cmd("cat README.md"), Pass),
        (cmd("grep x --file=.env"), S(".env", ".env*")),
        (cmd("grep -f.env x"), S(".env", ".env*")),
        (cmd("dd if=.env of=x"), S(".env", ".env*")),
        (cmd("curl -d @.env http://127.0.0.1:1/"), S(".env", ".env*")),
        (cmd("git show HEAD:.env"), S(".env", ".env*")),
        (cmd("X=.env env"), S(".env", ".env*")),
        (cmd("cat < .env"), S(".env", ".env*")),
        (cmd("echo hi > .env.local"), S(".env.local", ".env*")),
        (cmd("cat <<< id_rsa"), S("id_rsa", "id_rsa*")),
        (cmd("cat /home/u/.ssh/id_ed25519"), S("/home/u/.ssh/id_ed25519", "id_ed25519*")),
        (cmd("bash -c 'cat .env'"), S(".env", ".env*")),
        (cmd("echo $(cat keys/a.pem)"), S("keys/a.pem", "*.pem")),
        (cmd("find . -exec cat {} \\; -name x.key"), S("x.key", "*.key")),
        // Quoted: a word, not a pattern.
        (cmd("cat '.env'"), S(".env", ".env*")),
        (cmd("cat \".e*\""), Pass),
        // Globs: judged by what they can expand to.
        (cmd("cat .e*"), SX(".e*", ".env", ".env*")),
        (cmd("cat *.md"), Pass),
        (cmd("cat --file=.e*"), SX(".e*", ".env", ".env*")),
        (cmd("cat @(.env|x)"), SX("@(.env|x)", ".env", ".env*")),
        (cmd("cat {a,.env}"), SX("{a,.env}", ".env", ".env*")),
        (cmd("cat .{e..e}nv"), SX(".{e..e}nv", ".env", ".env*")),
        (cmd("cat x.p{11..13}"), SX("x.p{11..13}", "x.p12", "*.p12")),
        (cmd("cat sub/*.txt"), SX("sub/*.txt", "sub/notes.txt", ".env*")),
        (cmd("cat {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"), U("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}")),
        (cmd("cat .{a..z}{a..z}{a..z}"), U(".{a..z}{a..z}{a..z}")),
        (cmd("cat '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}'"), Pass),
        // The directory a command runs in.
        (cmd_in("cat prod.yaml", "config"), S("config/prod.yaml", "/config/prod.yaml")),
        (cmd_in("cat server.pem", "keys"), S("keys/server.pem", "*.pem")),
        (cmd_in("ls", "backup/.ssh/sub"), S("backup/.ssh/sub", ".ssh/**")),
        (cmd_in("ls", "credentials"), S("credentials", "credentials")),
        (cmd_in("cat prod.yaml", "src"), Pass),
        (cmd_in("cat *.txt", "src"), Pass),
        // Unparsable lines are split crudely, never let through.
        (cmd("cat .env $("), S(".env", ".env*")),
        (cmd("cat '.env"), S(".env", ".env*")),
        (cmd("cat x (.env"), S(".env", ".env*")),
        (cmd("cat README.md $("), Pass),
        // Protected files are the kernel's business in commands.
        (cmd("cat toolgate.yaml"), Pass),
    ];
    run_path_cases(&rules(false), &cases);
    // The unparsable lines above really are: they test the fallback.
    for line in [
        "cat .env $(",
        "cat '.env",
        "cat x (.env",
        "cat README.md $(",
    ] {
        assert!(command_operands(line).is_err(), "{line} parses");
    }
}

#[test]
fn allowing_sensitive_files_keeps_protected_ones() {
    #[rustfmt::skip]
    let cases = [
        (read(".env"), Pass),
        (write("keys/a.pem"), Pass),
        (mv(".env", ".env.bak"), Pass),
        (cmd("cat .env .e*"), Pass),
        (read("notes.txt"), Pass),
        (write("toolgate.yaml"), P("toolgate.yaml", "/toolgate.yaml")),
        (mv("new.yaml", "toolgate.yaml"), P("toolgate.yaml", "/toolgate.yaml")),
        (write("cfg"), PR("cfg", "toolgate.yaml", "/toolgate.yaml")),
    ];
    let rules = rules(true);
    assert!(rules.allows_sensitive());
    run_path_cases(&rules, &cases);
}

#[test]
fn effects_are_judged_in_order_and_the_first_refusal_wins() {
    let effects = Effects::known([
        Effect::read("src/a.rs"),
        Effect::write("toolgate.yaml", Change::counted(1, 0, false)),
        Effect::read(".env"),
    ]);
    let got = rules(false).check(&effects, &resolve, &expand);
    assert!(same(&got, &P("toolgate.yaml", "/toolgate.yaml")), "{got:?}");
}

#[test]
fn refusals_read_as_today() {
    #[rustfmt::skip]
    let cases: &[(Effects, &str)] = &[
        (read(".env"), "`.env` is a sensitive file (pattern `.env*`); it may not be read, searched or written. To allow it, set `workspace.allow_sensitive: true`"),
        (read("notes.txt"), "`notes.txt` is a sensitive file (pattern `.env*`); it may not be read, searched or written. To allow it, set `workspace.allow_sensitive: true`"),
        (write("Cargo.lock"), "`Cargo.lock` is a protected file (pattern `/Cargo.lock` in `guardrails.protected_files`); it may be read but not changed"),
        (write("toolgate.yaml"), "`toolgate.yaml` is a protected file (pattern `/toolgate.yaml`, protected by default); it may be read but not changed"),
        (cmd("cat .e*"), "`.e*` can expand to the sensitive file `.env` (pattern `.env*`); name the files you need explicitly"),
        (cmd("cat .{a..z}{a..z}{a..z}"), "`.{a..z}{a..z}{a..z}` expands to more names than toolgate checks (at most 256, from a word of at most 4096 bytes); name the files you need explicitly"),
    ];
    for (effects, want) in cases {
        let refusal = rules(false).check(effects, &resolve, &expand).unwrap_err();
        assert_eq!(refusal.to_string(), *want, "{effects:?}");
    }
}

// ---- Opaque calls. ----

#[test]
fn opaque_calls_pass_deny_rules_and_match_no_allow_rule() {
    let opaque = Effects::Opaque;
    for allow_sensitive in [false, true] {
        assert!(
            rules(allow_sensitive)
                .check(&opaque, &resolve, &expand)
                .is_ok()
        );
    }
    assert!(
        EditLimits::new()
            .max_files_modified(Some(0))
            .max_lines_changed(Some(0))
            .check(&EditUsage::new(), &EditCount::of(&opaque))
            .is_ok()
    );
    let code = CodeRules::new([CodeRule::new(".").severity(Severity::Block)]).unwrap();
    assert!(code.check(&opaque).is_empty());
    let sets: [&[&str]; 4] = [&["**"], &["*"], &["**/*"], &[]];
    for globs in sets {
        let globs = FileGlobs::new(globs.iter().copied()).unwrap();
        assert!(!allows_paths(&opaque, &globs), "{:?}", globs.patterns());
    }
}

#[test]
fn allow_globs_match_only_calls_whose_every_change_they_cover() {
    let globs = FileGlobs::new(["src/**", "docs/*.md", "/Makefile"]).unwrap();
    let with = |effects: Effects, extra: Effect| {
        let mut list = effects.list().to_vec();
        list.push(extra);
        Effects::known(list)
    };
    #[rustfmt::skip]
    let cases: &[(Effects, bool)] = &[
        (write("src/a.rs"), true),
        (write("./src/a.rs"), true),
        (write("src/deep/er/a.rs"), true),
        (write("src/../src/a.rs"), true),
        (write("docs/a.md"), true),
        (write("docs/sub/a.md"), false),
        (write("Makefile"), true),
        (write("lib/a.rs"), false),
        (write("/ws/src/a.rs"), false),
        (write("src/../../x"), false),
        (delete("src/a.rs"), true),
        (mv("src/a.rs", "src/b.rs"), true),
        (mv("src/a.rs", "toolgate.yaml"), false),
        (mv("toolgate.yaml", "src/a.rs"), false),
        (with(write("src/a.rs"), Effect::write("lib/b.rs", Change::counted(1, 0, true))), false),
        (with(write("src/a.rs"), Effect::read("anything/at/all")), true),
        (with(write("src/a.rs"), Effect::command("make", None)), false),
        (with(write("src/a.rs"), Effect::Network { url: "http://127.0.0.1:1/".into() }), false),
        (read("src/a.rs"), false),
        (Effects::none(), false),
        (cmd("true"), false),
        (Effects::Opaque, false),
    ];
    for (effects, want) in cases {
        assert_eq!(allows_paths(effects, &globs), *want, "{effects:?}");
    }
    let empty = FileGlobs::new(Vec::<String>::new()).unwrap();
    assert!(empty.is_empty());
    assert!(!allows_paths(&write("src/a.rs"), &empty));
}

// ---- Edit limits. ----

fn write_lines(path: &str, added: usize, removed: usize) -> Effects {
    Effects::known([Effect::write(path, Change::counted(added, removed, false))])
}

fn delete_lines(path: &str, lines: usize) -> Effects {
    Effects::known([Effect::Delete {
        path: path.into(),
        lines_removed: lines,
    }])
}

#[test]
fn edits_are_counted_from_effects() {
    #[rustfmt::skip]
    let cases: &[(Effects, &[&str], usize)] = &[
        (write_lines("a.rs", 3, 2), &["a.rs"], 5),
        (Effects::known([Effect::write("a.rs", Change::from_texts(Some("x\ny\n"), "x\nz\n"))]), &["a.rs"], 2),
        (delete_lines("a.rs", 7), &["a.rs"], 7),
        (mv("a.rs", "b.rs"), &["a.rs", "b.rs"], 0),
        (Effects::known([
            Effect::Move { from: "a.rs".into(), to: "b.rs".into() },
            Effect::write("./b.rs", Change::counted(1, 1, false)),
            Effect::write("b.rs", Change::counted(1, 0, false)),
        ]), &["a.rs", "b.rs"], 3),
        (Effects::known([Effect::read("a.rs"), Effect::write("x/../c.rs", Change::counted(4, 0, true))]), &["c.rs"], 4),
        (read("a.rs"), &[], 0),
        (cmd("sed -i s/a/b/ a.rs"), &[], 0),
        (Effects::Opaque, &[], 0),
    ];
    for (effects, files, lines) in cases {
        let count = EditCount::of(effects);
        let got: Vec<&str> = count.files().iter().map(String::as_str).collect();
        assert_eq!(
            (got.as_slice(), count.lines()),
            (*files, *lines),
            "{effects:?}"
        );
    }
}

/// Limits as (max files, max lines).
type Limits = (Option<usize>, Option<usize>);

/// A limit refusal as (which, and its numbers): `F(max, modified)`,
/// `L(max, so_far, lines)`.
#[derive(Debug, PartialEq, Eq)]
enum Lim {
    Ok,
    F(usize, usize),
    L(usize, usize, usize),
}

#[test]
fn limits_at_and_past_the_limit() {
    // The session so far: two files, ten lines.
    let mut usage = EditUsage::new();
    usage.record(&EditCount::of(&write_lines("a.rs", 6, 0)));
    usage.record(&EditCount::of(&write_lines("./b.rs", 2, 2)));
    assert_eq!((usage.files_modified(), usage.lines_changed()), (2, 10));
    assert_eq!(usage.files().collect::<Vec<_>>(), ["a.rs", "b.rs"]);

    let both: Limits = (Some(3), Some(20));
    #[rustfmt::skip]
    let cases: &[(Limits, Effects, Lim)] = &[
        (both, write_lines("c.rs", 5, 0), Lim::Ok),
        (both, write_lines("c.rs", 10, 0), Lim::Ok),
        (both, write_lines("c.rs", 6, 5), Lim::L(20, 10, 11)),
        (both, delete_lines("c.rs", 10), Lim::Ok),
        (both, delete_lines("c.rs", 11), Lim::L(20, 10, 11)),
        (both, Effects::known([
            Effect::write("c.rs", Change::counted(1, 0, true)),
            Effect::write("d.rs", Change::counted(1, 0, true)),
        ]), Lim::F(3, 2)),
        (both, write_lines("./a.rs", 1, 0), Lim::Ok),
        (both, mv("a.rs", "c.rs"), Lim::Ok),
        (both, mv("c.rs", "d.rs"), Lim::F(3, 2)),
        (both, read("z.rs"), Lim::Ok),
        (both, Effects::Opaque, Lim::Ok),
        // Files are judged before lines.
        (both, Effects::known([
            Effect::write("c.rs", Change::counted(50, 0, true)),
            Effect::write("d.rs", Change::counted(1, 0, true)),
        ]), Lim::F(3, 2)),
        ((Some(2), None), write_lines("a.rs", 1000, 0), Lim::Ok),
        ((Some(2), None), write_lines("c.rs", 1, 0), Lim::F(2, 2)),
        ((None, Some(10)), write_lines("a.rs", 0, 0), Lim::Ok),
        ((None, Some(10)), write_lines("a.rs", 1, 0), Lim::L(10, 10, 1)),
        ((None, None), write_lines("z.rs", usize::MAX, 1), Lim::Ok),
        ((None, Some(usize::MAX)), write_lines("z.rs", usize::MAX, 0), Lim::Ok),
    ];
    for ((files, lines), effects, want) in cases {
        let limits = EditLimits::new()
            .max_files_modified(*files)
            .max_lines_changed(*lines);
        let got = match limits.check(&usage, &EditCount::of(effects)) {
            Ok(()) => Lim::Ok,
            Err(LimitRefusal::Files { max, modified, .. }) => Lim::F(max, modified),
            Err(LimitRefusal::Lines {
                max, so_far, lines, ..
            }) => Lim::L(max, so_far, lines),
            Err(other) => panic!("unexpected {other:?}"),
        };
        assert_eq!(&got, want, "{files:?} {lines:?} {effects:?}");
    }
}

#[test]
fn limit_refusals_read_as_today() {
    let mut usage = EditUsage::new();
    usage.record(&EditCount::of(&write_lines("a.rs", 7, 0)));
    let limits = EditLimits::new()
        .max_files_modified(Some(1))
        .max_lines_changed(Some(8));
    let files = limits
        .check(&usage, &EditCount::of(&write_lines("b.rs", 1, 0)))
        .unwrap_err();
    assert_eq!(
        files.to_string(),
        "this session may modify at most 1 files (`guardrails.max_files_modified`) and has modified 1; finish with the files already changed"
    );
    let lines = limits
        .check(&usage, &EditCount::of(&write_lines("a.rs", 2, 0)))
        .unwrap_err();
    assert_eq!(
        lines.to_string(),
        "this change of 2 lines would take the session past 8 changed lines (`guardrails.max_lines_changed`; 7 so far); make smaller changes"
    );
}

// ---- Code rules. ----

fn code_rules() -> CodeRules {
    CodeRules::new([
        CodeRule::new(r"\.unwrap\(\)")
            .name("no-unwrap")
            .severity(Severity::Block)
            .files(["src/**/*.rs"])
            .message("handle the error"),
        // No name: named by its pattern.
        CodeRule::new("TODO"),
        CodeRule::new("AKIA[0-9A-Z]{16}")
            .name("aws-key")
            .severity(Severity::Block),
        CodeRule::new(r"print\(").name("no-print").files(["*.py"]),
    ])
    .unwrap()
}

fn write_text(path: &str, text: &str) -> Effects {
    Effects::known([Effect::write(path, Change::from_texts(None, text))])
}

/// A broken rule as (name, path, block?, unchecked?).
type Broken = (&'static str, &'static str, bool, bool);

const UNWRAP: Broken = ("no-unwrap", "src/a.rs", true, false);

#[test]
fn code_rules_on_known_and_unknown_content() {
    let key = "AKIAABCDEFGHIJKLMNOP";
    #[rustfmt::skip]
    let cases: &[(Effects, &[Broken])] = &[
        // Known content.
        (write_text("src/a.rs", "x.unwrap()\n"), &[UNWRAP]),
        (write_text("src/a.rs", "x?\n"), &[]),
        (write_text("src/a.rs", "// TODO x.unwrap()\n"), &[UNWRAP, ("TODO", "src/a.rs", false, false)]),
        (write_text("src/deep/a.rs", "x.unwrap()\n"), &[("no-unwrap", "src/deep/a.rs", true, false)]),
        (write_text("./src/a.rs", "x.unwrap()\n"), &[("no-unwrap", "./src/a.rs", true, false)]),
        (write_text("/ws/src/a.rs", "x.unwrap()\n"), &[("no-unwrap", "/ws/src/a.rs", true, false)]),
        (write_text("README.md", &format!("key {key}\n")), &[("aws-key", "README.md", true, false)]),
        (write_text("src/a.txt", "x.unwrap()\n"), &[]),
        (write_text("lib/a.rs", "x.unwrap()\n"), &[]),
        // `*` does not cross `/`.
        (write_text("main.py", "print(1)\n"), &[("no-print", "main.py", false, false)]),
        (write_text("pkg/main.py", "print(1)\n"), &[]),
        // Unknown content: every rule that applies, unchecked.
        (write_lines("src/a.rs", 1, 0), &[("no-unwrap", "src/a.rs", true, true), ("TODO", "src/a.rs", false, true), ("aws-key", "src/a.rs", true, true)]),
        (write_lines("main.py", 1, 0), &[("TODO", "main.py", false, true), ("aws-key", "main.py", true, true), ("no-print", "main.py", false, true)]),
        (write_lines("pkg/main.py", 1, 0), &[("TODO", "pkg/main.py", false, true), ("aws-key", "pkg/main.py", true, true)]),
        // A rename brings unseen content under a name only some rules cover.
        (mv("notes.txt", "src/a.rs"), &[("no-unwrap", "src/a.rs", true, true)]),
        (mv("src/b.rs", "src/a.rs"), &[]),
        (mv("src/a.rs", "notes.txt"), &[]),
        (Effects::known([
            Effect::Move { from: "notes.txt".into(), to: "src/a.rs".into() },
            Effect::write("src/a.rs", Change::from_texts(None, "ok\n")),
        ]), &[]),
        // Nothing written.
        (delete_lines("src/a.rs", 3), &[]),
        (read("src/a.rs"), &[]),
        (cmd("echo 'x.unwrap()' > src/a.rs"), &[]),
        (Effects::Opaque, &[]),
    ];
    let rules = code_rules();
    assert!(!rules.is_empty());
    for (effects, want) in cases {
        let got: Vec<(String, String, bool, bool)> = rules
            .check(effects)
            .iter()
            .map(|b| {
                (
                    b.name().to_owned(),
                    b.path().to_owned(),
                    b.severity() == Severity::Block,
                    b.is_unchecked(),
                )
            })
            .collect();
        let want: Vec<(String, String, bool, bool)> = want
            .iter()
            .map(|(n, p, block, unchecked)| ((*n).to_owned(), (*p).to_owned(), *block, *unchecked))
            .collect();
        assert_eq!(got, want, "{effects:?}");
    }
}

#[test]
fn broken_rules_read_as_today() {
    let rules = code_rules();
    #[rustfmt::skip]
    let cases: &[(Effects, &[&str])] = &[
        (write_text("src/a.rs", "x.unwrap() // TODO\n"), &[
            "code rule `no-unwrap` (src/a.rs): handle the error",
            "code rule `TODO` (src/a.rs): the content matches it",
        ]),
        (write_lines("notes.md", 1, 0), &[
            "code rule `TODO` (notes.md): the content cannot be checked before writing",
            "code rule `aws-key` (notes.md): the content cannot be checked before writing",
        ]),
    ];
    for (effects, want) in cases {
        let got: Vec<String> = rules
            .check(effects)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, *want, "{effects:?}");
    }
}

// ---- Building. ----

#[test]
fn bad_configuration_is_refused_with_a_typed_error() {
    let regex = CodeRules::new([CodeRule::new("(").name("broken")]).unwrap_err();
    assert!(
        matches!(&regex, EffectsPolicyError::Regex { rule, .. } if rule == "broken"),
        "{regex:?}"
    );
    assert_eq!(
        regex.to_string(),
        "code rule `broken` has an invalid regular expression"
    );
    let glob = CodeRules::new([CodeRule::new("x").files(["src/[a"])]).unwrap_err();
    assert!(
        matches!(&glob, EffectsPolicyError::Glob { pattern, .. } if pattern == "src/[a"),
        "{glob:?}"
    );
    assert!(std::error::Error::source(&glob).is_some());
    for root in ["ws", "", "./ws"] {
        let err = PathRules::builder(root).build().unwrap_err();
        assert!(matches!(err, EffectsPolicyError::Root { .. }), "{root}");
    }
    let err = PathRules::builder("/ws")
        .root_alias("relative")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the workspace root `relative` is not an absolute UTF-8 path"
    );
}
