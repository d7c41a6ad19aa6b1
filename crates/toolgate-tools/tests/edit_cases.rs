//! Case tables for `toolgate_tools::edit`: exact replacement with line
//! endings, BOM, overlapping matches, `replace_all`, the hints of a failed
//! match, and the diff shown after an edit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use toolgate_tools::edit::{self, EditError};
use toolgate_tools::patch;

/// `name: CONTENT, OLD, NEW, REPLACE_ALL => (EXPECTED, REPLACEMENTS, FIRST_LINE);`
macro_rules! edits {
    ($($name:ident: $content:expr, $old:expr, $new:expr, $all:expr => ($expected:expr, $count:expr, $line:expr);)*) => {$(
        #[test]
        fn $name() {
            let outcome = edit::replace_exact($content, $old, $new, $all).unwrap();
            assert_eq!(
                (outcome.content.as_str(), outcome.replacements, outcome.first_line),
                ($expected, $count, $line)
            );
        }
    )*};
}

/// `name: CONTENT, OLD, NEW, REPLACE_ALL => PATTERN,` — the edit is refused
/// with an error matching PATTERN.
macro_rules! refuses {
    ($($name:ident: $content:expr, $old:expr, $new:expr, $all:expr => $pattern:pat,)*) => {$(
        #[test]
        fn $name() {
            let err = edit::replace_exact($content, $old, $new, $all).unwrap_err();
            assert!(matches!(err, $pattern), "{err:?}");
        }
    )*};
}

/// `name: CONTENT, OLD => ["substring", ...];` — not found, and the hint
/// contains every substring.
macro_rules! hints {
    ($($name:ident: $content:expr, $old:expr => [$($needle:expr),*];)*) => {$(
        #[test]
        fn $name() {
            let err = edit::replace_exact($content, $old, "replacement", false).unwrap_err();
            let EditError::NotFound { hint } = &err else { panic!("{err:?}") };
            $(assert!(hint.contains($needle), "{hint:?} should contain {:?}", $needle);)*
            assert!(err.to_string().starts_with("`old_str` was not found in the file"));
        }
    )*};
}

edits! {
    unique: "a = 1\nb = 2\n", "b = 2", "b = 3", false => ("a = 1\nb = 3\n", 1, 2);
    multi_line: "fn f() {\n    1\n}\n", "    1\n}", "    2\n}", false => ("fn f() {\n    2\n}\n", 1, 2);
    delete_text: "keep\ndrop\nkeep2\n", "drop\n", "", false => ("keep\nkeep2\n", 1, 2);
    crlf_file_lf_edit: "a\r\nb\r\nc\r\n", "a\nb\n", "a\nB\nB2\n", false => ("a\r\nB\r\nB2\r\nc\r\n", 1, 1);
    crlf_file_crlf_edit: "a\r\nb\r\nc\r\n", "b\r\nc", "x\r\ny", false => ("a\r\nx\r\ny\r\n", 1, 2);
    crlf_file_single_line: "a\r\nb\r\n", "b", "b\nc", false => ("a\r\nb\r\nc\r\n", 1, 2);
    lf_file_crlf_edit: "a\nb\nc\n", "a\r\nb", "A\r\nB", false => ("A\nB\nc\n", 1, 1);
    bom_kept: "\u{feff}x = 1\ny = 2\n", "x = 1", "x = 9", false => ("\u{feff}x = 9\ny = 2\n", 1, 1);
    bom_kept_crlf: "\u{feff}x\r\ny\r\n", "x\ny", "z\nw", false => ("\u{feff}z\r\nw\r\n", 1, 1);
    no_final_newline_stays: "a\nlast", "last", "LAST", false => ("a\nLAST", 1, 2);
    no_final_newline_crlf: "a\r\nlast", "a\nlast", "b\nlast", false => ("b\r\nlast", 1, 1);
    mixed_lf_region: "crlf\r\nlf1\nlf2\n", "lf1\nlf2", "x\ny", false => ("crlf\r\nx\ny\n", 1, 2);
    mixed_crlf_region: "crlf1\r\ncrlf2\r\nlf\n", "crlf1\ncrlf2", "x\ny", false => ("x\r\ny\r\nlf\n", 1, 1);
    mixed_exact_with_cr: "a\r\na\nb\n", "a\r\n", "A\r\n", false => ("A\r\na\nb\n", 1, 1);
    mixed_single_line_uses_its_line: "a\r\nb\nc\r\n", "c", "c\nd", false => ("a\r\nb\nc\r\nd\r\n", 1, 3);
    replace_all_counts: "x, x, x", "x", "y", true => ("y, y, y", 3, 1);
    replace_all_non_overlapping: "aaa", "aa", "b", true => ("ba", 1, 1);
    replace_all_crlf: "v\r\nv\r\n", "v\n", "w\nw\n", true => ("w\r\nw\r\nw\r\nw\r\n", 2, 1);
    replace_all_single: "only one", "one", "two", true => ("only two", 1, 1);
    unicode_text: "héllo wörld\n", "wörld", "мир", false => ("héllo мир\n", 1, 1);
    first_line_counts_lines: "1\n2\n3\n4\n", "4", "four", false => ("1\n2\n3\nfour\n", 1, 4);
    whole_file: "abc", "abc", "", false => ("", 1, 1);
}

refuses! {
    empty_old: "abc", "", "x", false => EditError::EmptyOld,
    identical: "abc", "b", "b", false => EditError::NoChange,
    identical_after_line_endings: "a\r\nb\r\n", "a\r\n", "a\n", false => EditError::NoChange,
    two_matches: "x\nx\n", "x", "y", false => EditError::NotUnique { count: 2 },
    overlapping_matches: "aaa", "aa", "b", false => EditError::NotUnique { count: 2 },
    overlapping_pattern: "abababa", "aba", "c", false => EditError::NotUnique { count: 3 },
    crlf_matches_counted_normalised: "a\r\nb\r\na\r\nb\r\n", "a\nb", "c", false => EditError::NotUnique { count: 2 },
    mixed_matches_both_endings: "x\r\nx\n", "x\n", "y\n", false => EditError::NotUnique { count: 2 },
    not_found: "abc", "abd", "x", false => EditError::NotFound { .. },
    not_found_replace_all: "abc", "zzz", "x", true => EditError::NotFound { .. },
    bom_is_not_text: "\u{feff}abc", "\u{feff}abc", "x", false => EditError::NotFound { .. },
}

const CODE: &str = "use std::io;\n\nfn main() {\n    let x = compute();\n    println!(\"{x}\");\n}\n\nfn compute() -> u32 {\n    42\n}\n";

hints! {
    hint_wrong_indentation: CODE, "fn main() {\n  let x = compute();\n  println!(\"{x}\");\n}" => ["lines 3-6:", "  3 | fn main() {", "  4 |     let x = compute();", "(it differs only in whitespace or indentation)", "first difference: line 4 is `    let x = compute();` where `  let x = compute();` was expected"];
    hint_typo_in_one_line: CODE, "fn compute() -> u32 {\n    43\n}" => ["lines 8-10:", "  9 |     42", "first difference: line 9 is `    42` where `    43` was expected"];
    hint_similar_line_only: CODE, "fn computed() -> u64 {" => ["the most similar text is at line 8:", "8 | fn compute() -> u32 {"];
    hint_nothing_similar: CODE, "zzzz qqqq" => ["no similar text was found in the file"];
    hint_empty_file: "", "anything" => ["the file is empty"];
    hint_line_numbers_copied: CODE, "3\tfn main() {\n4\t    let x = compute();" => ["seems to start its lines with line numbers"];
}

#[test]
fn not_unique_message_tells_what_to_do() {
    let err = edit::replace_exact("x x", "x", "y", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`old_str` occurs 2 times in the file (counting overlapping occurrences); include more \
         surrounding lines to make it unique, or set `replace_all` to replace every occurrence"
    );
}

/// `name: OLD, NEW => DIFF;`
macro_rules! diffs {
    ($($name:ident: $old:expr, $new:expr => $expected:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(edit::unified_diff("src/f.txt", $old, $new), $expected);
        }
    )*};
}

diffs! {
    diff_simple: "a\nb\nc\n", "a\nB\nc\n" => "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    diff_equal_is_empty: "a\n", "a\n" => "";
    diff_no_newline_added: "a\nb", "a\nb\n" => "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
    diff_context_is_three_lines: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nV\n6\n7\n8\n9\n" => "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+V\n 6\n 7\n 8\n";
    diff_creation: "", "new\n" => "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -0,0 +1 @@\n+new\n";
}

/// An edit's diff fed back to the patch engine reproduces the edit, line
/// endings and missing final newline included.
#[test]
fn diff_round_trips_through_patch() {
    let cases: &[(&str, &str, &str)] = &[
        (CODE, "    42", "    43"),
        ("a\r\nb\r\nc", "b\nc", "B\nC"),
        ("\u{feff}one\ntwo\n", "two\n", "two\nthree"),
        ("x\n", "x\n", "y\nz\n"),
    ];
    for &(content, old, new) in cases {
        let edited = edit::replace_exact(content, old, new, false)
            .unwrap()
            .content;
        let diff = edit::unified_diff("f", content, &edited);
        let parsed = patch::parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
        assert_eq!(
            patch::apply(content, &parsed.files()[0]).unwrap(),
            edited,
            "{diff}"
        );
    }
}

/// Pathological input stays linear: counting overlapping occurrences of a
/// long run in a long run (quadratic with a naive rescan).
#[test]
fn overlapping_count_is_linear() {
    let content = "a".repeat(2_000_000);
    let needle = "a".repeat(5_000);
    let err = edit::replace_exact(&content, &needle, "b", false).unwrap_err();
    assert_eq!(
        err,
        EditError::NotUnique {
            count: 2_000_000 - 5_000 + 1
        }
    );
}
