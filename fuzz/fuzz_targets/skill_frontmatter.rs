//! Arbitrary bytes as a SKILL.md. Nothing may panic, and:
//!
//! - an error names the file it was given and a line the input has (from 1
//!   to the number of lines, counting `\n`, `\r\n` and `\r` as one break
//!   each, after a byte-order mark);
//! - a file that parses has a name `validate_name` accepts and a
//!   description of 1 to 1024 characters;
//! - what it renders parses back, in a directory of its name, with no
//!   warnings and the same name, description, license, compatibility,
//!   metadata, allowed tools and body.
//!
//! The same property runs without libFuzzer, over a few thousand mutated
//! files, in `crates/toolgate-skills/tests/mutations.rs`
//! (`mutated_files_never_panic`). Run with:
//!
//!     cargo +nightly fuzz run skill_frontmatter -- -dict=skill_frontmatter.dict -max_total_time=60
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use toolgate_skills::{MAX_DESCRIPTION_CHARS, SkillFile, validate_name};

/// The lines of `text` as the parser counts them.
fn lines(text: &str) -> usize {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    1 + text.replace("\r\n", "\n").matches(['\n', '\r']).count()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let source = Path::new("fuzz/SKILL.md");
    let file = match SkillFile::parse_unplaced(source, &text) {
        Ok(file) => file,
        Err(error) => {
            let message = error.to_string();
            assert_eq!(error.file(), Some(source), "{message}");
            let line = error.line().expect("a parse error has a line");
            assert!(
                (1..=lines(&text)).contains(&line),
                "line {line} of {} in {message}",
                lines(&text)
            );
            assert!(
                message.starts_with(&format!("fuzz/SKILL.md:{line}: ")),
                "{message}"
            );
            return;
        }
    };
    assert_eq!(validate_name(&file.name), Ok(()), "{:?}", file.name);
    let chars = file.description.chars().count();
    assert!((1..=MAX_DESCRIPTION_CHARS).contains(&chars), "{chars}");

    let rendered = file.render();
    let placed: PathBuf = [file.name.as_str(), "SKILL.md"].iter().collect();
    let again = match SkillFile::parse(&placed, &rendered) {
        Ok(again) => again,
        Err(error) => panic!("{error}\n--- rendered:\n{rendered}\n--- from:\n{text}"),
    };
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(again.name, file.name, "{rendered}");
    assert_eq!(again.description, file.description, "{rendered}");
    assert_eq!(again.license, file.license, "{rendered}");
    assert_eq!(again.compatibility, file.compatibility, "{rendered}");
    assert_eq!(again.metadata, file.metadata, "{rendered}");
    assert_eq!(again.allowed_tools, file.allowed_tools, "{rendered}");
    assert_eq!(again.body, file.body, "{rendered}");
});
