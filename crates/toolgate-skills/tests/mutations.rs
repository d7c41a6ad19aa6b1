//! The `skill_frontmatter` fuzz target's property, without libFuzzer: a few
//! thousand mutated SKILL.md files never panic the parser, every error has
//! a line the file has, and whatever parses renders to a file that parses
//! back the same.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

use toolgate_skills::{MAX_DESCRIPTION_CHARS, SkillFile, validate_name};

const SEEDS: &[&str] = &[
    "---\nname: pdf-forms\ndescription: Fill in PDF forms.\nlicense: MIT\ncompatibility: pdftk\nmetadata:\n  author: ana\n  version: 1.0\nallowed-tools: read_file run_command\n---\n\n# Steps\n\n1. Run it.\n",
    "\u{feff}---\r\nname: x\r\ndescription: >\r\n  folded\r\n  text\r\nallowed-tools:\r\n  - a\r\n  - b c\r\n---\r\nbody\r\n",
    "---\nname: \"quoted\"\ndescription: 'single ''quoted'''\nmetadata: {a: 1, b: true, c: ~}\n---",
];

/// Pieces inserted by the mutations: YAML syntax and the format's keys.
const FRAGMENTS: &[&str] = &[
    "---",
    "...",
    "name: ",
    "description: ",
    "description: |",
    "license: ",
    "metadata:",
    "  key: value",
    "allowed-tools: ",
    "  - ",
    "x-unknown: 1",
    "\"",
    "'",
    "\\u2028",
    "\u{2028}",
    "\u{85}",
    "\r",
    "\t",
    "&a ",
    "*a",
    "!tag ",
    "<<: ",
    "[a, b",
    "{a: 1}",
    "~",
    "#",
    ": ",
    "--",
    "Ñ",
];

#[path = "../../toolgate-core/tests/common/xorshift.rs"]
mod xorshift;
use xorshift::Rng;

fn mutated(rng: &mut Rng) -> String {
    let seed = SEEDS[rng.below(SEEDS.len())];
    let mut lines: Vec<String> = seed.split('\n').map(str::to_owned).collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(lines.len() + 1);
        match rng.below(6) {
            0 => lines.insert(at, FRAGMENTS[rng.below(FRAGMENTS.len())].to_owned()),
            1 if at < lines.len() => {
                lines.remove(at);
            }
            2 if at < lines.len() => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())];
                let line = &lines[at];
                let mut cut = rng.below(line.len() + 1);
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines[at] = format!("{}{fragment}{}", &line[..cut], &line[cut..]);
            }
            3 if at < lines.len() => {
                let line = lines[at].clone();
                lines.insert(at, line);
            }
            4 if at < lines.len() => {
                let mut bytes = lines[at].clone().into_bytes();
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                lines[at] = String::from_utf8_lossy(&bytes).into_owned();
            }
            _ => lines.truncate(at),
        }
    }
    lines.join("\n")
}

/// The lines of `text` as the parser counts them.
fn line_count(text: &str) -> usize {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    1 + text.replace("\r\n", "\n").matches(['\n', '\r']).count()
}

/// The fuzz target's property for one input; whether it parsed.
fn check(text: &str) -> bool {
    let source = Path::new("fuzz/SKILL.md");
    let file = match SkillFile::parse_unplaced(source, text) {
        Ok(file) => file,
        Err(error) => {
            let line = error.line().unwrap();
            assert!(
                (1..=line_count(text)).contains(&line),
                "line {line} of {}: {error}\n{text:?}",
                line_count(text)
            );
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("fuzz/SKILL.md:{line}: ")),
                "{error}"
            );
            return false;
        }
    };
    assert_eq!(validate_name(&file.name), Ok(()));
    assert!((1..=MAX_DESCRIPTION_CHARS).contains(&file.description.chars().count()));
    let rendered = file.render();
    let placed: PathBuf = [file.name.as_str(), "SKILL.md"].iter().collect();
    let again = SkillFile::parse(&placed, &rendered)
        .unwrap_or_else(|e| panic!("{e}\n--- rendered:\n{rendered}\n--- from:\n{text:?}"));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(
        (
            &again.name,
            &again.description,
            &again.license,
            &again.compatibility,
            &again.metadata,
            &again.allowed_tools,
            &again.body
        ),
        (
            &file.name,
            &file.description,
            &file.license,
            &file.compatibility,
            &file.metadata,
            &file.allowed_tools,
            &file.body
        ),
        "{rendered}\n--- from:\n{text:?}"
    );
    true
}

#[test]
fn mutated_files_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    for _ in 0..5_000 {
        if check(&mutated(&mut rng)) {
            parsed += 1;
        }
    }
    // The mutations must leave enough valid files to exercise rendering.
    assert!(parsed > 500, "parsed {parsed}");
}

#[test]
fn the_seeds_hold() {
    for seed in SEEDS {
        assert!(check(seed), "{seed:?}");
    }
}
