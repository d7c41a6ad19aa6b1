//! Guard: policy never keys on a tool's name. Outside a tool's own module,
//! no library source names a built-in tool as a string literal: what a
//! tool may do is on its spec ([`toolgate_core::ToolAnnotations`]), and
//! code that must find one tool uses the constant its own module exports
//! (`TypedTool::NAME`, `SkillTool::NAME`). Tests may name tools; this reads
//! `crates/*/src` only, without the `#[cfg(test)]` modules.
//!
//! A built-in tool is one whose `NAME` constant (`const NAME: &'static str
//! = "…"`, or a constant of its file holding the name) is in the sources;
//! its own module is the directory of the file declaring it, or that file
//! alone when it lies at a crate's `src/` root.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The literals that may stay, each with why: (file, or directory ending in
/// `/`; the literal, or `*` for any; reason).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/toolgate-command/src/",
        "*",
        "the shell parser and command classifier: the words are programs and git's \
         (`echo`, `grep`, `filter.<driver>.process`), not tools",
    ),
    (
        "crates/toolgate-shell/src/",
        "*",
        "the shell parser and command model: the words are programs (`echo`, `grep`), not tools",
    ),
    (
        "crates/toolgate-sandbox/src/gitconfig.rs",
        "grep",
        "a git configuration section",
    ),
    (
        "crates/toolgate-sandbox/src/limits.rs",
        "process",
        "the name of a resource limit",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file beneath `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library sources: `crates/*/src/**/*.rs`, as paths from the root.
fn library_sources() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (relative, without_tests(&text).to_owned())
        })
        .collect()
}

/// The text before its `#[cfg(test)] mod …`, if it has one.
fn without_tests(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let start = from + at;
        let after = text[start + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod ") {
            return &text[..start];
        }
        from = start + 1;
    }
    text
}

/// The lines that are code, not comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

/// The ordinary string literals on a line (raw strings are left out).
fn literals(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            continue;
        }
        let raw = line[..i].ends_with('r') || line[..i].ends_with('#');
        let mut text = String::new();
        let mut escaped = false;
        for (_, c) in chars.by_ref() {
            if escaped {
                escaped = false;
                text.push(c);
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                break;
            } else {
                text.push(c);
            }
        }
        if !raw {
            found.push(text);
        }
    }
    found
}

/// `const IDENT: &str = VALUE;` on a line: the identifier and the value as
/// written (a literal with its quotes, or another constant's name).
fn constant(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start();
    let rest = rest.strip_prefix("pub ").unwrap_or(rest);
    let rest = rest.strip_prefix("const ")?;
    let (ident, rest) = rest.split_once(':')?;
    let (kind, value) = rest.split_once('=')?;
    if !kind.contains("str") || kind.contains('[') {
        return None;
    }
    Some((ident.trim(), value.trim().trim_end_matches(';').trim()))
}

/// The built-in tools' names, each with the file that declares it.
fn builtin_tools(files: &[(String, String)]) -> BTreeMap<String, String> {
    let mut tools = BTreeMap::new();
    for (path, text) in files {
        let constants: BTreeMap<&str, &str> = code_lines(text)
            .filter_map(|(_, line)| constant(line))
            .collect();
        let literal = |value: &str| {
            value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned)
        };
        for (_, line) in code_lines(text) {
            let Some(("NAME", value)) = constant(line) else {
                continue;
            };
            let name = literal(value).or_else(|| {
                let target = value.rsplit("::").next()?;
                constants.get(target).and_then(|v| literal(v))
            });
            if let Some(name) = name {
                tools.insert(name, path.clone());
            }
        }
    }
    tools
}

/// The crate a source path belongs to (`crates/NAME/`).
fn crate_of(path: &str) -> &str {
    let end = path
        .match_indices('/')
        .nth(1)
        .map_or(path.len(), |(at, _)| at + 1);
    &path[..end]
}

/// Whether `path` is part of the module that declares a tool in `home`:
/// the same file, a file in the tool's own directory (not a crate's
/// `src/`), or any file of a crate that declares this one tool only (a
/// crate that is one tool group, such as the cron tool's).
fn own_module(path: &str, home: &str, tools: &BTreeMap<String, String>) -> bool {
    let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
    let single_tool_crate = crate_of(path) == crate_of(home)
        && tools
            .values()
            .filter(|h| crate_of(h) == crate_of(home))
            .count()
            == 1;
    path == home || (!dir(home).ends_with("/src") && dir(path) == dir(home)) || single_tool_crate
}

#[test]
fn no_library_source_names_a_builtin_tool_outside_its_own_module() {
    let files = library_sources();
    let tools = builtin_tools(&files);
    // The scan must see the tools, or it would pass on nothing.
    for expected in ["run_command", "write_file", "skill", "delegate", "process"] {
        assert!(
            tools.contains_key(expected),
            "the scan no longer finds `{expected}`: fix builtin_tools"
        );
    }
    let mut found = Vec::new();
    for (path, text) in &files {
        for (number, line) in code_lines(text) {
            for literal in literals(line) {
                let Some(home) = tools.get(&literal) else {
                    continue;
                };
                let allowed = ALLOWED.iter().any(|(p, l, _)| {
                    let place = p == path || (p.ends_with('/') && path.starts_with(p));
                    place && (*l == "*" || *l == literal)
                });
                if !own_module(path, home, &tools) && !allowed {
                    found.push(format!("{path}:{number}: \"{literal}\" ({home})"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "tool names outside their own module; read what the spec declares, or use \
         the constant the tool's module exports (`TypedTool::NAME`):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_allowed_literal_is_still_there() {
    let files: BTreeMap<String, String> = library_sources().into_iter().collect();
    for (path, literal, reason) in ALLOWED {
        if path.ends_with('/') {
            assert!(
                files.keys().any(|f| f.starts_with(path)),
                "{path} is gone: drop its entry ({reason})"
            );
            continue;
        }
        let text = files
            .get(*path)
            .unwrap_or_else(|| panic!("{path} is gone: drop its entry ({reason})"));
        if *literal != "*" {
            assert!(
                code_lines(text).any(|(_, line)| literals(line).iter().any(|l| l == literal)),
                "{path} no longer has \"{literal}\": drop its entry ({reason})"
            );
        }
    }
}

#[test]
fn the_scanner_reads_literals_and_constants() {
    assert_eq!(literals(r#"a("x", "y\"z") + r"raw""#), ["x", "y\"z"]);
    assert_eq!(
        constant(r#"    const NAME: &'static str = "run_command";"#),
        Some(("NAME", "\"run_command\""))
    );
    assert_eq!(
        constant("pub const NAME: &'static str = DELEGATE;"),
        Some(("NAME", "DELEGATE"))
    );
    assert_eq!(constant("const N: usize = 3;"), None);
    assert_eq!(
        without_tests("fn a() {}\n#[cfg(test)]\nmod tests {}\n"),
        "fn a() {}\n"
    );
    let tools: BTreeMap<String, String> = [
        ("cron", "crates/t/src/cron/tool.rs"),
        ("calculator", "crates/t/src/calc.rs"),
        ("read_file", "crates/t/src/fs.rs"),
        ("schedule", "crates/one/src/tool.rs"),
    ]
    .into_iter()
    .map(|(n, h)| (n.to_owned(), h.to_owned()))
    .collect();
    assert!(own_module(
        "crates/t/src/cron/request.rs",
        "crates/t/src/cron/tool.rs",
        &tools
    ));
    assert!(!own_module(
        "crates/t/src/calc.rs",
        "crates/t/src/fs.rs",
        &tools
    ));
    // A crate that is one tool: all of it is the tool's own module; a
    // crate with several tools is not.
    assert!(own_module(
        "crates/one/src/lib.rs",
        "crates/one/src/tool.rs",
        &tools
    ));
    assert!(!own_module(
        "crates/t/src/lib.rs",
        "crates/t/src/fs.rs",
        &tools
    ));
}
