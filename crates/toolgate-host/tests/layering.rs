//! Front ends reach the tool crates through the host only (DESIGN.md §2):
//! neither the CLI nor the web UI names `toolgate-tools`, `toolgate-web`,
//! `toolgate-assistant` or `toolgate-dynamic`, in a source file or in its
//! `Cargo.toml`. What they need of them, the host re-exports or wraps
//! (`toolgate_host::dynamic`, `toolgate_host::cron`,
//! `toolgate_host::download_text`).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

/// The crates only the host may use, as packages and as Rust paths.
const TOOL_CRATES: &[(&str, &str)] = &[
    ("toolgate-tools", "toolgate_tools"),
    ("toolgate-web", "toolgate_web"),
    ("toolgate-assistant", "toolgate_assistant"),
    ("toolgate-dynamic", "toolgate_dynamic"),
];

/// The front ends, as directories beside this crate.
const FRONT_ENDS: &[&str] = &["toolgate-cli", "toolgate-ui"];

fn crate_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)
}

/// Every `.rs` file beneath `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn front_end_sources_name_no_tool_crate() {
    let mut offences = Vec::new();
    let mut checked = 0;
    for front in FRONT_ENDS {
        let mut files = Vec::new();
        rust_files(&crate_dir(front).join("src"), &mut files);
        assert!(!files.is_empty(), "no sources found for {front}");
        for file in files {
            checked += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                for (_, path) in TOOL_CRATES {
                    // The crate as a path (`toolgate_web::x`), in a `use`
                    // list or renamed (`use toolgate_web as w`).
                    let named = line.match_indices(path).any(|(at, _)| {
                        let before = line[..at].chars().next_back();
                        let after = line[at + path.len()..].chars().next();
                        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    });
                    if named {
                        offences.push(format!("{}:{}: {line}", file.display(), number + 1));
                    }
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} files checked");
    assert!(
        offences.is_empty(),
        "front ends must reach the tool crates through toolgate-host:\n{}",
        offences.join("\n")
    );
}

#[test]
fn front_end_manifests_depend_on_no_tool_crate() {
    for front in FRONT_ENDS {
        let manifest = std::fs::read_to_string(crate_dir(front).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("toolgate-host"),
            "{front} does not depend on the host"
        );
        for (package, _) in TOOL_CRATES {
            let depends = manifest.lines().any(|line| {
                let key = line.split('=').next().unwrap_or("").trim();
                key == *package
                    || key.starts_with(&format!("{package}."))
                    || line.trim().ends_with(&format!(".{package}]"))
            });
            assert!(
                !depends,
                "{front}/Cargo.toml depends on {package}: go through toolgate-host"
            );
        }
    }
}
