//! SKILL.md parsing: every error names the file and the line, valid files
//! come out whole, and what is rendered parses back the same.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::path::Path;

use toolgate_skills::{
    MAX_SKILL_FILE_BYTES, NameRule, Problem, SkillError, SkillFile, validate_name,
};

const FILE: &str = "skills/pdf-forms/SKILL.md";

fn parse(text: &str) -> Result<SkillFile, SkillError> {
    SkillFile::parse(Path::new(FILE), text)
}

#[test]
fn every_error_names_the_file_and_the_line() {
    let long_description = "d".repeat(1025);
    let long_compatibility = "c".repeat(501);
    let long_name = "a".repeat(65);
    let long_name_message = format!("name \"{long_name}\": use 1 to 64 characters");
    // (text, line, the message after `FILE:line: `)
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "no frontmatter: a SKILL.md starts with a `---` line"),
        ("# PDF forms\n", 1, "no frontmatter"),
        ("\n---\nname: pdf-forms\n---\n", 1, "no frontmatter"),
        (
            "--- \nname: pdf-forms\n",
            1,
            "the frontmatter opened here is never closed by a `---` line",
        ),
        ("---", 1, "the frontmatter opened here is never closed"),
        (
            "---\nname: pdf-forms\n  description: indented\n---\n",
            3,
            "invalid YAML in the frontmatter: mapping values are not allowed in this context",
        ),
        (
            "---\nname: pdf-forms\ndescription: [open\n---\nbody\n",
            4,
            "invalid YAML in the frontmatter: did not find expected ',' or ']'",
        ),
        (
            "---\nname: pdf-forms\ndescription: a\ndescription: b\n---\n",
            4,
            "invalid YAML in the frontmatter: duplicate entry with key \"description\"",
        ),
        (
            "---\nname: pdf-forms\ndescription: *nowhere\n---\n",
            3,
            "invalid YAML in the frontmatter: unknown anchor",
        ),
        (
            "---\n- name\n- description\n---\n",
            1,
            "the frontmatter is a list, not a mapping",
        ),
        (
            "---\njust words\n---\n",
            1,
            "the frontmatter is a string, not a mapping",
        ),
        (
            "---\ndescription: Fill in forms.\n---\n",
            1,
            "the required key `name` is missing",
        ),
        ("---\n---\n", 1, "the required key `name` is missing"),
        (
            "---\nname: pdf-forms\n---\n",
            1,
            "the required key `description` is missing",
        ),
        ("---\nname:\ndescription: d\n---\n", 2, "`name` is empty"),
        (
            "---\nname: pdf-forms\ndescription: \"  \"\n---\n",
            3,
            "`description` is empty",
        ),
        (
            "---\ndescription: d\nname: Pdf-Forms\n---\n",
            3,
            "name \"Pdf-Forms\": use lowercase letters, digits and hyphens",
        ),
        (
            "---\nname: pdf_forms\ndescription: d\n---\n",
            2,
            "name \"pdf_forms\": use lowercase letters, digits and hyphens",
        ),
        (
            "---\nname: -pdf\ndescription: d\n---\n",
            2,
            "name \"-pdf\": do not start or end with a hyphen",
        ),
        (
            "---\nname: pdf-\ndescription: d\n---\n",
            2,
            "name \"pdf-\": do not start or end with a hyphen",
        ),
        (
            "---\nname: pdf--forms\ndescription: d\n---\n",
            2,
            "name \"pdf--forms\": do not put two hyphens in a row",
        ),
        (
            "---\nname: other\ndescription: d\n---\n",
            2,
            "name \"other\" must be the name of the skill's directory, \"pdf-forms\"",
        ),
        (
            "---\nname: 12\ndescription: d\n---\n",
            2,
            "`name` must be a string, not a number",
        ),
        (
            "---\nname: pdf-forms\ndescription: [a, b]\n---\n",
            3,
            "`description` must be a string, not a list",
        ),
        (
            "---\nname: pdf-forms\ndescription: d\nlicense: {x: 1}\n---\n",
            4,
            "`license` must be a string, not a mapping",
        ),
        (
            "---\nname: pdf-forms\ndescription: d\nmetadata: [a]\n---\n",
            4,
            "`metadata` must be a mapping of strings, not a list",
        ),
        (
            "---\nname: pdf-forms\ndescription: d\nmetadata:\n  author: [a, b]\n---\n",
            4,
            "`metadata.author` must be a string, not a list",
        ),
        (
            "---\nname: pdf-forms\ndescription: d\nallowed-tools: 5\n---\n",
            4,
            "`allowed-tools` must be tool names separated by spaces, or a list of them, not a number",
        ),
        (
            "---\nname: pdf-forms\ndescription: d\n\nallowed-tools:\n  - read_file\n  - [x]\n---\n",
            5,
            "`allowed-tools` must be a list of tool names, not a list",
        ),
        (
            "---\nname: pdf-forms\ndescription: !custom d\n---\n",
            3,
            "`description` must be a string, not a tagged value",
        ),
        // Line ends and the byte-order mark do not shift the lines.
        (
            "---\r\nname: pdf-forms\r\ndescription: d\r\nname: x\r\n---\r\n",
            4,
            "invalid YAML in the frontmatter: duplicate entry with key \"name\"",
        ),
        (
            "\u{feff}---\r\n# a comment\r\nname: Bad\r\ndescription: d\r\n---\r\n",
            3,
            "name \"Bad\": use lowercase letters",
        ),
        (
            "---\r# a comment\rname: Bad\rdescription: d\r---\r",
            3,
            "name \"Bad\": use lowercase letters",
        ),
        ("\u{feff}# no frontmatter", 1, "no frontmatter"),
    ];
    let mut long_cases = vec![
        (
            format!("---\nname: pdf-forms\ndescription: {long_description}\n---\n"),
            3,
            "`description` is 1025 characters; at most 1024 are allowed",
        ),
        (
            format!(
                "---\nname: pdf-forms\ndescription: d\ncompatibility: {long_compatibility}\n---\n"
            ),
            4,
            "`compatibility` is 501 characters; at most 500 are allowed",
        ),
        (
            format!("---\ndescription: d\nname: {long_name}\n---\n"),
            3,
            &long_name_message,
        ),
    ];
    long_cases.extend(
        cases
            .iter()
            .map(|(text, line, message)| ((*text).to_owned(), *line, *message)),
    );
    for (text, line, message) in &long_cases {
        let error = match parse(text) {
            Ok(file) => panic!("{text:?} parsed: {file:?}"),
            Err(error) => error,
        };
        let shown = error.to_string();
        let prefix = format!("{FILE}:{line}: ");
        assert!(
            shown.starts_with(&prefix) && shown[prefix.len()..].starts_with(message),
            "{text:?}\n  got:  {shown}\n  want: {prefix}{message}"
        );
        assert_eq!(error.line(), Some(*line), "{text:?}");
        assert_eq!(error.file(), Some(Path::new(FILE)), "{text:?}");
        assert!(error.problem().is_some(), "{text:?}");
    }
}

#[test]
fn a_long_name_is_cut_in_the_message() {
    let name = "A".repeat(100_000);
    let error = parse(&format!("---\nname: {name}\ndescription: d\n---\n")).unwrap_err();
    let shown = error.to_string();
    assert!(shown.len() < 300, "{shown}");
    assert!(shown.contains("AAAA\"…: use 1 to 64 characters"), "{shown}");
}

#[test]
fn the_typed_problem_says_which_rule() {
    let error = parse("---\nname: pdf--forms\ndescription: d\n---\n").unwrap_err();
    assert_eq!(
        error.problem(),
        Some(&Problem::InvalidName {
            name: "pdf--forms".into(),
            rule: NameRule::DoubleHyphen,
        })
    );
}

#[test]
fn names_follow_the_format() {
    // (name, expected)
    let cases: &[(&str, Result<(), NameRule>)] = &[
        ("pdf", Ok(())),
        ("pdf-forms-2", Ok(())),
        ("7zip", Ok(())),
        ("a", Ok(())),
        (&"a".repeat(64), Ok(())),
        ("", Err(NameRule::Length)),
        (&"a".repeat(65), Err(NameRule::Length)),
        ("PDF", Err(NameRule::Characters)),
        ("pdf forms", Err(NameRule::Characters)),
        ("pdf.forms", Err(NameRule::Characters)),
        ("pdf/forms", Err(NameRule::Characters)),
        ("../pdf", Err(NameRule::Characters)),
        ("ñandú", Err(NameRule::Characters)),
        ("-pdf", Err(NameRule::EdgeHyphen)),
        ("pdf-", Err(NameRule::EdgeHyphen)),
        ("-", Err(NameRule::EdgeHyphen)),
        ("pdf--forms", Err(NameRule::DoubleHyphen)),
    ];
    for (name, expected) in cases {
        assert_eq!(validate_name(name), *expected, "{name:?}");
    }
}

#[test]
fn a_full_skill_comes_out_whole() {
    let text = "---
name: pdf-forms
description: >
  Fill in PDF forms
  and check them.
license: Apache-2.0
compatibility: Needs pdftk on PATH
metadata:
  author: ana
  version: 1.0
  draft: true
  empty:
allowed-tools: read_file  run_command read_file
x-custom: kept out
---


# Filling forms

1. Run `scripts/fill.sh`.   \n\n";
    let file = parse(text).unwrap();
    assert_eq!(file.name, "pdf-forms");
    assert_eq!(file.description, "Fill in PDF forms and check them.\n");
    assert_eq!(file.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(file.compatibility.as_deref(), Some("Needs pdftk on PATH"));
    let metadata: BTreeMap<String, String> = [
        ("author", "ana"),
        ("version", "1.0"),
        ("draft", "true"),
        ("empty", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(file.metadata, metadata);
    assert_eq!(file.allowed_tools, ["read_file", "run_command"]);
    assert_eq!(file.body, "# Filling forms\n\n1. Run `scripts/fill.sh`.");
    assert_eq!(file.warnings.len(), 1);
    assert_eq!(
        file.warnings[0].to_string(),
        format!("{FILE}:14: unknown key `x-custom` is ignored")
    );
}

#[test]
fn allowed_tools_may_be_a_list() {
    let file = parse(
        "---\nname: pdf-forms\ndescription: d\nallowed-tools:\n  - read_file\n  - run_command grep\n---\n",
    )
    .unwrap();
    assert_eq!(file.allowed_tools, ["read_file", "run_command", "grep"]);
}

#[test]
fn crlf_and_a_bom_are_read_like_plain_lines() {
    let file = parse(
        "\u{feff}---\r\nname: pdf-forms\r\ndescription: Fill forms.\r\n---\r\nStep one.\r\nStep two.\r\n",
    )
    .unwrap();
    assert_eq!(file.description, "Fill forms.");
    assert_eq!(file.body, "Step one.\nStep two.");
    assert!(file.warnings.is_empty());
}

#[test]
fn optional_keys_may_be_empty() {
    let file = parse(
        "---\nname: pdf-forms\ndescription: d\nlicense:\ncompatibility: ''\nmetadata:\nallowed-tools:\n---",
    )
    .unwrap();
    assert_eq!(file.license, None);
    assert_eq!(file.compatibility, None);
    assert!(file.metadata.is_empty());
    assert!(file.allowed_tools.is_empty());
    assert_eq!(file.body, "");
}

#[test]
fn a_path_without_a_directory_skips_the_name_check() {
    let text = "---\nname: anything\ndescription: d\n---\n";
    assert!(SkillFile::parse(Path::new("SKILL.md"), text).is_ok());
    assert!(SkillFile::parse_unplaced(Path::new("https://example.com/x/SKILL.md"), text).is_ok());
    let error = SkillFile::parse(Path::new("/tmp/other/SKILL.md"), text).unwrap_err();
    assert!(error.to_string().contains("\"other\""), "{error}");
}

#[test]
fn what_is_rendered_parses_back_the_same() {
    let text = "---
name: pdf-forms
description: \"Fill: forms # really, with \\\"quotes\\\"\\nand a second line\\u2028\"
license: 'null'
compatibility: yes
metadata:
  'true': 1e3
  key with spaces: \"---\"
allowed-tools: [read_file, \"run_command\"]
---

---
Body with a delimiter-looking line above.
";
    let file = parse(text).unwrap();
    let rendered = file.render();
    let again = parse(&rendered).unwrap();
    assert_eq!(again, file, "{rendered}");
}

#[test]
fn files_are_read_within_limits() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("pdf-forms");
    std::fs::create_dir(&skill).unwrap();
    let path = skill.join("SKILL.md");

    std::fs::write(&path, b"---\nname: pdf-forms\ndescription: caf\xe9\n---\n").unwrap();
    let error = SkillFile::read(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}:3: the file is not UTF-8 text", path.display())
    );

    let big = format!(
        "---\nname: pdf-forms\ndescription: d\n---\n{}",
        "x".repeat(usize::try_from(MAX_SKILL_FILE_BYTES).unwrap())
    );
    std::fs::write(&path, &big).unwrap();
    let error = SkillFile::read(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}: the file is {} bytes; a SKILL.md may be at most 262144 bytes",
            path.display(),
            big.len()
        )
    );

    std::fs::write(&path, "---\nname: pdf-forms\ndescription: d\n---\nok\n").unwrap();
    assert_eq!(SkillFile::read(&path).unwrap().body, "ok");
    let error = SkillFile::read(&skill).unwrap_err();
    assert!(error.to_string().starts_with("cannot read "), "{error}");
}
