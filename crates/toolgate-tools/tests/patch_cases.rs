//! Case tables for `toolgate_tools::patch`: parsing both formats, placing
//! hunks, line endings, failures; a cross-check against GNU `patch`; and a
//! deterministic mutation run that must never panic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use toolgate_tools::patch::{self, FileKind, PatchError, PatchFormat, Tolerance};

/// Parses `patch`, which must touch exactly one file, and applies it.
fn apply_one(original: &str, text: &str) -> Result<String, String> {
    let parsed = patch::parse(text).map_err(|e| format!("parse: {e}"))?;
    assert_eq!(parsed.files().len(), 1, "expected one file in {text:?}");
    patch::apply(original, &parsed.files()[0]).map_err(|e| format!("apply: {e}"))
}

/// `name: ORIGINAL, PATCH => EXPECTED;` — the patch applies and gives
/// exactly EXPECTED.
macro_rules! applies {
    ($($name:ident: $original:expr, $patch:expr => $expected:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(apply_one($original, $patch), Ok(String::from($expected)));
        }
    )*};
}

/// `name: ORIGINAL, PATCH => "substring";` — parsing or applying fails with
/// a message containing the substring.
macro_rules! fails {
    ($($name:ident: $original:expr, $patch:expr => $needle:expr;)*) => {$(
        #[test]
        fn $name() {
            let err = apply_one($original, $patch).expect_err("must fail");
            assert!(err.contains($needle), "{err:?} should contain {:?}", $needle);
        }
    )*};
}

const ABC: &str = "a\nb\nc\n";
const TEN: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";

// Unified diffs.
applies! {
    unified_simple: ABC, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" => "a\nB\nc\n";
    unified_plain_diff_headers: ABC, "--- f.orig\t2024-01-01 10:00:00.000000000 +0100\n+++ f\t2024-01-01 10:00:01.000000000 +0100\n@@ -2 +2 @@\n-b\n+B\n" => "a\nB\nc\n";
    unified_git_headers_tolerated: ABC, "diff --git a/f b/f\nindex 0123abc..4567def 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" => "a\nB\nc\n";
    unified_leading_prose_and_fence: ABC, "Here is the fix:\n```diff\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n```\n" => "a\nB\nc\n";
    unified_crlf_file_lf_patch: "a\r\nb\r\nc\r\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n" => "a\r\nB\r\nB2\r\nc\r\n";
    unified_crlf_patch_lf_file: ABC, "--- a/f\r\n+++ b/f\r\n@@ -1,3 +1,3 @@\r\n a\r\n-b\r\n+B\r\n c\r\n" => "a\nB\nc\n";
    unified_mixed_endings_kept: "a\r\nb\nc\r\nd\n", "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n" => "a\r\nb\nC\r\nd\n";
    unified_bom_kept: "\u{feff}a\nb\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" => "\u{feff}a\nB\nc\n";
    unified_bom_in_patch_context: "\u{feff}a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n \u{feff}a\n-b\n+B\n" => "\u{feff}a\nB\n";
    unified_offset_down: TEN, "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n 6\n-7\n+seven\n 8\n" => "1\n2\n3\n4\n5\n6\nseven\n8\n9\n10\n";
    unified_offset_up: TEN, "--- a/f\n+++ b/f\n@@ -8,3 +8,3 @@\n 2\n-3\n+three\n 4\n" => "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n";
    unified_fuzz_1_leading_context: TEN, "--- a/f\n+++ b/f\n@@ -3,5 +3,5 @@\n X\n 4\n-5\n+five\n 6\n 7\n" => "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
    unified_fuzz_2_both_ends: TEN, "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n X\n Y\n 4\n-5\n+five\n 6\n Z\n W\n" => "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
    unified_out_of_order_hunks: TEN, "--- a/f\n+++ b/f\n@@ -8,3 +8,3 @@\n 8\n-9\n+nine\n 10\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n" => "1\ntwo\n3\n4\n5\n6\n7\n8\nnine\n10\n";
    unified_same_block_twice_never_overlaps: "x\ny\nx\ny\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-x\n+X\n y\n@@ -1,2 +1,2 @@\n-x\n+X\n y\n" => "X\ny\nX\ny\n";
    unified_pure_insertion: ABC, "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+inserted\n" => "a\ninserted\nb\nc\n";
    unified_insertion_at_start: ABC, "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+first\n" => "first\na\nb\nc\n";
    unified_add_missing_final_newline: "a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n" => "a\nb\n";
    unified_remove_final_newline: "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n" => "a\nb";
    unified_no_newline_on_both_sides: "a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n" => "A\nb";
    unified_append_after_unterminated_line: "a", "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n" => "a\nb\n";
    unified_unmarked_patch_keeps_missing_newline: "a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n" => "a\nb\nc";
    unified_crlf_add_final_newline: "a\r\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n" => "a\r\nb\r\n";
    unified_create_from_dev_null: "", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n" => "one\ntwo\n";
    unified_create_without_final_newline: "", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n" => "one\ntwo";
    unified_create_crlf_patch: "", "--- /dev/null\r\n+++ b/new.txt\r\n@@ -0,0 +1,2 @@\r\n+one\r\n+two\r\n" => "one\r\ntwo\r\n";
    unified_delete_to_dev_null: ABC, "--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n" => "";
    unified_trailing_whitespace_tolerated: "a  \nb\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" => "a  \nB\nc\n";
    unified_bare_header_placed_by_context: TEN, "--- a/f\n+++ b/f\n@@\n 5\n-6\n+six\n 7\n" => "1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n";
    unified_bare_header_with_text: TEN, "--- a/f\n+++ b/f\n@@ fn main @@\n 5\n-6\n+six\n\n" => "1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n";
    unified_empty_context_line_without_space: "a\n\nb\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n" => "a\n\nB\n";
    unified_removed_line_looking_like_header: "-- sql comment\nselect 1;\n", "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- sql comment\n+-- SQL comment\n select 1;\n" => "-- SQL comment\nselect 1;\n";
    unified_format_patch_signature_ignored: ABC, "Subject: fix\n---\n f | 2 +-\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n-- \n2.40.0\n" => "a\nB\nc\n";
}

// Unified failures.
fails! {
    unified_fuzz_exceeded: TEN, "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n X\n Y\n Q\n-5\n+five\n 6\n Z\n W\n" => "hunk 1 of `f` does not match the file near line 2";
    unified_removed_line_mismatch: TEN, "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n 4\n-FIVE\n+five\n 6\n" => "first difference: line 5 is `5` where `FIVE` was expected";
    unified_failure_shows_closest_text: TEN, "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n 4\n-FIVE\n+five\n 6\n" => "the most similar text is at lines 4-6:\n  4 | 4\n  5 | 5\n  6 | 6";
    unified_second_hunk_fails_whole_file: TEN, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-1\n+one\n 2\n@@ -8,2 +8,2 @@\n-nope\n+x\n 9\n" => "hunk 2 of `f`";
    unified_create_over_existing: ABC, "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n" => "cannot add `f`: the file already exists";
    unified_delete_with_extra_lines: "a\nb\nc\nd\n", "--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n" => "refusing to delete `f`";
    unified_insertion_past_end: ABC, "--- a/f\n+++ b/f\n@@ -9,0 +10 @@\n+x\n" => "near line 10";
    unified_huge_line_number: ABC, "--- a/f\n+++ b/f\n@@ -18446744073709551615,0 +1 @@\n+x\n" => "near line 18446744073709551615";
    unified_count_too_small: ABC, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n" => "hunk 1 of `f` (line 3): the header announces 2 old and 2 new lines but the hunk has 3 old and 3 new lines";
    unified_count_too_large: ABC, "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n" => "announces 4 old and 4 new lines but the hunk has 3 old and 3 new lines";
    unified_count_error_names_second_hunk: TEN, "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-1\n+one\n@@ -5,1 +5,1 @@\n-5\n+five\n+extra\n" => "hunk 2 of `f` (line 6)";
    unified_malformed_hunk_header: ABC, "--- a/f\n+++ b/f\n@@ -1,x +1,3 @@\n a\n" => "line 3: malformed hunk header `@@ -1,x +1,3 @@`";
    unified_header_without_plus_line: ABC, "--- a/f\n@@ -1,3 +1,3 @@\n a\n" => "line 2: expected `+++ NEW_PATH` after the `--- OLD_PATH` line";
    unified_plus_line_without_minus_line: ABC, "+++ b/f\n@@ -1,3 +1,3 @@\n a\n" => "line 1: expected `--- OLD_PATH` before the `+++ NEW_PATH` line";
    unified_hunk_without_file_header: ABC, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" => "line 1: expected `--- a/PATH` and `+++ b/PATH` lines before the first hunk";
    unified_bare_header_pure_insertion: ABC, "--- a/f\n+++ b/f\n@@\n+x\n" => "has neither context lines nor line numbers";
    unified_file_header_without_hunks: ABC, "--- a/f\n+++ b/f\n" => "line 1: the update of `f` contains no changes";
    unified_creation_with_context: "", "--- /dev/null\n+++ b/f\n@@ -1,1 +1,2 @@\n a\n+b\n" => "a new file `f` must only add lines";
    unified_binary: ABC, "diff --git a/f b/f\nindex 1..2 100644\nBinary files a/f and b/f differ\n" => "line 3: binary patches are not supported";
    prose_only: ABC, "I changed the function to return early.\n" => "the patch contains no file changes";
    empty_patch: ABC, "" => "the patch is empty";
    whitespace_only_patch: ABC, " \n\t\n" => "the patch is empty";
}

const PY: &str = "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1\n";

// Envelope.
applies! {
    envelope_update: ABC, "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n c\n*** End Patch\n" => "a\nB\nc\n";
    envelope_first_block_without_at: ABC, "*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n*** End Patch" => "a\nB\nc\n";
    envelope_anchor_selects_second_copy: PY, "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def run(self):\n-        return 1\n+        return 2\n*** End Patch\n" => "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 2\n";
    envelope_without_anchor_takes_first_copy: PY, "*** Begin Patch\n*** Update File: m.py\n@@\n     def run(self):\n-        return 1\n+        return 2\n*** End Patch\n" => "class A:\n    def run(self):\n        return 2\n\nclass B:\n    def run(self):\n        return 1\n";
    envelope_nested_anchors: PY, "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n@@     def run(self):\n-        return 1\n+        return 3\n*** End Patch\n" => "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 3\n";
    envelope_anchor_repeated_as_context: PY, "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n class B:\n     def run(self):\n-        return 1\n+        return 4\n*** End Patch\n" => "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 4\n";
    envelope_pure_insertion_after_anchor: PY, "*** Begin Patch\n*** Update File: m.py\n@@ class A:\n+    x = 1\n*** End Patch\n" => "class A:\n    x = 1\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1\n";
    envelope_pure_insertion_appends: ABC, "*** Begin Patch\n*** Update File: f\n@@\n+d\n*** End Patch\n" => "a\nb\nc\nd\n";
    envelope_end_of_file_anchors_last_copy: "x\nend\nx\nend\n", "*** Begin Patch\n*** Update File: f\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch\n" => "x\nend\nx\nEND\n";
    envelope_trailing_whitespace: "a \nb\t\nc\n", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n c\n*** End Patch\n" => "a \nB\nc\n";
    envelope_indentation_tolerated: "    a\n    b\n    c\n", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+    B\n c\n*** End Patch\n" => "    a\n    B\n    c\n";
    envelope_unicode_punctuation: "say(\u{201c}hi\u{201d}) \u{2014} ok\nnext\n", "*** Begin Patch\n*** Update File: f\n@@\n-say(\"hi\") - ok\n+say(\"bye\") - ok\n next\n*** End Patch\n" => "say(\"bye\") - ok\nnext\n";
    envelope_crlf_file: "a\r\nb\r\nc\r\n", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n+B2\n c\n*** End Patch\n" => "a\r\nB\r\nB2\r\nc\r\n";
    envelope_bom_kept: "\u{feff}a\nb\n", "*** Begin Patch\n*** Update File: f\n@@\n-a\n+A\n b\n*** End Patch\n" => "\u{feff}A\nb\n";
    envelope_keeps_missing_final_newline: "a\nb", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n*** End Patch\n" => "a\nB";
    envelope_blocks_out_of_order: TEN, "*** Begin Patch\n*** Update File: f\n@@\n 8\n-9\n+nine\n@@\n 1\n-2\n+two\n*** End Patch\n" => "1\ntwo\n3\n4\n5\n6\n7\n8\nnine\n10\n";
    envelope_blank_separator_lines: TEN, "*** Begin Patch\n*** Update File: f\n@@\n-2\n+two\n\n@@\n-9\n+nine\n\n*** End Patch\n" => "1\ntwo\n3\n4\n5\n6\n7\n8\nnine\n10\n";
    envelope_unified_numbers_in_at_line: ABC, "*** Begin Patch\n*** Update File: f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n*** End Patch\n" => "a\nB\nc\n";
    envelope_heredoc_wrapper: ABC, "<<'EOF'\n*** Begin Patch\n*** Update File: f\n-b\n+B\n*** End Patch\nEOF\n" => "a\nB\nc\n";
    envelope_add_file: "", "*** Begin Patch\n*** Add File: new.txt\n+one\n+\n+two\n*** End Patch\n" => "one\n\ntwo\n";
    envelope_delete_file: ABC, "*** Begin Patch\n*** Delete File: f\n*** End Patch\n" => "";
}

fails! {
    envelope_context_not_found: ABC, "*** Begin Patch\n*** Update File: f\n@@\n a\n-x\n+X\n*** End Patch\n" => "hunk 1 of `f` does not match the file; the most similar text";
    envelope_anchor_not_found: PY, "*** Begin Patch\n*** Update File: m.py\n@@ class C:\n-        return 1\n+        return 2\n*** End Patch\n" => "the anchor line `@@ class C:` is not in the file";
    envelope_missing_end: ABC, "*** Begin Patch\n*** Update File: f\n-b\n+B\n" => "`*** End Patch` is missing after `*** Begin Patch` at line 1";
    envelope_bad_change_line: ABC, "*** Begin Patch\n*** Update File: f\n@@\nb\n*** End Patch\n" => "line 4: expected a change line starting with ` ` (context), `-` or `+`";
    envelope_add_line_without_plus: "", "*** Begin Patch\n*** Add File: n\n+a\nb\n*** End Patch\n" => "line 4: expected a line starting with `+`";
    envelope_unknown_section: ABC, "*** Begin Patch\n*** Rename File: f\n*** End Patch\n" => "line 2: expected `*** Add File: PATH`";
    envelope_update_without_changes: ABC, "*** Begin Patch\n*** Update File: f\n*** End Patch\n" => "line 2: the update of `f` contains no changes";
    envelope_empty: ABC, "*** Begin Patch\n*** End Patch\n" => "the patch contains no file changes";
    envelope_anchor_without_lines: ABC, "*** Begin Patch\n*** Update File: f\n@@ a\n*** End Patch\n" => "hunk 1 of `f` (line 3) has no lines";
    envelope_empty_path: ABC, "*** Begin Patch\n*** Delete File:   \n*** End Patch\n" => "line 2: expected a file path";
    envelope_add_over_existing: ABC, "*** Begin Patch\n*** Add File: f\n+x\n*** End Patch\n" => "the file already exists";
}

#[test]
fn multi_file_git_diff() {
    let diff = "\
diff --git a/src/lib.rs b/src/lib.rs
index 83db48f..bf269f4 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,2 +1,2 @@
-old
+new
 same
@@ -10,2 +10,3 @@
 ten
 eleven
+twelve
diff --git a/docs/new.md b/docs/new.md
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1 @@
+hello
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index e69de29..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
diff --git a/empty.txt b/empty.txt
new file mode 100644
index 0000000..e69de29
diff --git a/script.sh b/script.sh
old mode 100644
new mode 100755
";
    let parsed = patch::parse(diff).unwrap();
    assert_eq!(parsed.format(), PatchFormat::Unified);
    let summary: Vec<_> = parsed
        .files()
        .iter()
        .map(|f| {
            (
                f.kind(),
                f.path(),
                f.move_to(),
                f.target_path(),
                f.hunks().len(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (FileKind::Update, "src/lib.rs", None, Some("src/lib.rs"), 2),
            (FileKind::Add, "docs/new.md", None, Some("docs/new.md"), 1),
            (FileKind::Delete, "gone.txt", None, None, 1),
            (
                FileKind::Update,
                "old name.txt",
                Some("new name.txt"),
                Some("new name.txt"),
                0
            ),
            (FileKind::Add, "empty.txt", None, Some("empty.txt"), 0),
        ]
    );
    let files = parsed.files();
    assert_eq!(patch::apply("", &files[1]).unwrap(), "hello\n");
    assert_eq!(patch::apply("bye\n", &files[2]).unwrap(), "");
    assert_eq!(patch::apply("moved\n", &files[3]).unwrap(), "moved\n");
    assert_eq!(patch::apply("", &files[4]).unwrap(), "");
    let hunk = &files[0].hunks()[1];
    assert_eq!(
        (hunk.old_start(), hunk.line(), hunk.added(), hunk.removed()),
        (Some(10), 9, 1, 0)
    );
}

#[test]
fn multi_file_envelope() {
    let text = "\
*** Begin Patch
*** Add File: hello.txt
+Hello
*** Update File: src/app.py
*** Move to: src/main.py
@@ def main():
-    pass
+    print(1)
*** Delete File: obsolete.txt
*** End Patch
";
    let parsed = patch::parse(text).unwrap();
    assert_eq!(parsed.format(), PatchFormat::Envelope);
    let summary: Vec<_> = parsed
        .files()
        .iter()
        .map(|f| (f.kind(), f.path(), f.target_path()))
        .collect();
    assert_eq!(
        summary,
        [
            (FileKind::Add, "hello.txt", Some("hello.txt")),
            (FileKind::Update, "src/app.py", Some("src/main.py")),
            (FileKind::Delete, "obsolete.txt", None),
        ]
    );
    let update = &parsed.files()[1];
    assert_eq!(update.hunks()[0].anchors(), ["def main():"]);
    assert_eq!(
        patch::apply("def main():\n    pass\n", update).unwrap(),
        "def main():\n    print(1)\n"
    );
    // A move with no change blocks is allowed.
    let moved =
        patch::parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n")
            .unwrap();
    assert_eq!(moved.files()[0].target_path(), Some("b"));
}

#[test]
fn duplicate_paths_are_refused() {
    let cases: &[&str] = &[
        "*** Begin Patch\n*** Delete File: a\n*** Delete File: a\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n-x\n*** Add File: b\n+y\n*** End Patch\n",
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/f\n+++ b/f\n@@ -2 +2 @@\n-c\n+d\n",
    ];
    for text in cases {
        let err = patch::parse(text).unwrap_err();
        assert!(
            matches!(err, PatchError::DuplicatePath { .. }),
            "{text:?}: {err}"
        );
    }
}

#[test]
fn report_says_offset_fuzz_and_tolerance() {
    let diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -3,5 +3,5 @@\n X\n 7\n-8\n+eight\n 9\n 10\n";
    let parsed = patch::parse(diff).unwrap();
    let applied = patch::apply_with_report(TEN, &parsed.files()[0]).unwrap();
    let hunks = &applied.report.hunks;
    assert_eq!(
        (hunks[0].line, hunks[0].offset, hunks[0].fuzz),
        (1, Some(0), 0)
    );
    assert_eq!(
        (hunks[1].line, hunks[1].offset, hunks[1].fuzz),
        (6, Some(3), 1)
    );
    assert!(!applied.report.is_clean());
    assert_eq!(
        applied.report.to_string(),
        "2 hunks applied (+2 -2); hunk 2 at line 6 (offset +3 lines) with fuzz 1"
    );

    let text = "*** Begin Patch\n*** Update File: f\n@@\n-  b\n+B\n*** End Patch\n";
    let parsed = patch::parse(text).unwrap();
    let applied = patch::apply_with_report(ABC, &parsed.files()[0]).unwrap();
    assert_eq!(
        applied.report.hunks[0].tolerance,
        Tolerance::SurroundingWhitespace
    );
    assert_eq!(applied.report.hunks[0].offset, None);
}

#[test]
fn failure_names_hunk_line_and_closest_text() {
    let diff = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,1 +1,1 @@\n-1\n+one\n@@ -6,3 +6,3 @@\n 6\n-seven\n+7\n 8\n";
    let parsed = patch::parse(diff).unwrap();
    let err = patch::apply(TEN, &parsed.files()[0]).unwrap_err();
    let patch::ApplyError::HunkFailed {
        path,
        hunk,
        expected_line,
        closest,
        ..
    } = &err
    else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(
        (path.as_str(), *hunk, *expected_line),
        ("src/x.rs", 2, Some(6))
    );
    assert!(closest.contains("  6 | 6\n  7 | 7\n  8 | 8"), "{closest}");
    assert!(
        closest.contains("line 7 is `7` where `seven` was expected"),
        "{closest}"
    );
    assert!(
        err.to_string()
            .starts_with("hunk 2 of `src/x.rs` does not match the file near line 6; ")
    );
}

/// A 500-hunk, 20 000-line patch applies with every hunk where it belongs:
/// the line index makes the search cheap, and offsets carry from hunk to
/// hunk.
#[test]
fn many_hunks_with_a_shift() {
    let mut original = String::new();
    for i in 0..20_000 {
        writeln!(original, "line {i}").unwrap();
    }
    let mut diff = String::from("--- a/big\n+++ b/big\n");
    let mut expected = String::from("header 1\nheader 2\n");
    for i in 0..20_000 {
        if i % 40 == 20 {
            write!(
                diff,
                "@@ -{},3 +{},3 @@\n line {}\n-line {i}\n+LINE {i}\n line {}\n",
                i,
                i,
                i - 1,
                i + 1
            )
            .unwrap();
            writeln!(expected, "LINE {i}").unwrap();
        } else {
            writeln!(expected, "line {i}").unwrap();
        }
    }
    let parsed = patch::parse(&diff).unwrap();
    assert_eq!(parsed.files()[0].hunks().len(), 500);
    let shifted = format!("header 1\nheader 2\n{original}");
    let applied = patch::apply_with_report(&shifted, &parsed.files()[0]).unwrap();
    assert_eq!(applied.content, expected);
    assert!(applied.report.hunks.iter().all(|h| h.offset == Some(2)));
}

// ---------------------------------------------------------------------------
// Cross-check against GNU patch.

#[path = "../../toolgate-core/tests/common/xorshift.rs"]
mod xorshift;
use xorshift::Rng;

fn tool_available(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A random text: lines from a small vocabulary (so context repeats), maybe
/// without a final newline.
fn random_text(rng: &mut Rng, lines: usize, vocabulary: usize) -> Vec<String> {
    (0..lines)
        .map(|_| match rng.below(10) {
            0 => String::new(),
            1 => format!("    indented {}", rng.below(vocabulary)),
            _ => format!("word {} {}", rng.below(vocabulary), rng.below(vocabulary)),
        })
        .collect()
}

fn join(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

/// Random edits: replace, insert and delete runs of lines.
fn mutate(rng: &mut Rng, lines: &[String]) -> Vec<String> {
    let mut out = lines.to_vec();
    for _ in 0..=rng.below(6) {
        let at = rng.below(out.len() + 1);
        match rng.below(3) {
            0 => {
                let n = 1 + rng.below(3);
                for k in 0..n {
                    out.insert(at.min(out.len()), format!("new {} {k}", rng.next() % 1000));
                }
            }
            1 if !out.is_empty() => {
                let end = (at + 1 + rng.below(3)).min(out.len());
                out.drain(at.min(end)..end);
            }
            _ if at < out.len() => out[at] = format!("changed {}", rng.next() % 1000),
            _ => {}
        }
    }
    out
}

fn gnu_patch(dir: &Path, original: &str, diff: &str) -> Option<String> {
    std::fs::write(dir.join("orig.txt"), original).unwrap();
    std::fs::write(dir.join("change.diff"), diff).unwrap();
    let _ = std::fs::remove_file(dir.join("out.txt"));
    let status = Command::new("patch")
        .current_dir(dir)
        .args(["-s", "--batch", "-o", "out.txt", "orig.txt", "change.diff"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    status
        .success()
        .then(|| std::fs::read_to_string(dir.join("out.txt")).unwrap())
}

fn gnu_diff(dir: &Path, old: &str, new: &str) -> String {
    std::fs::write(dir.join("a.txt"), old).unwrap();
    std::fs::write(dir.join("b.txt"), new).unwrap();
    let out = Command::new("diff")
        .current_dir(dir)
        .args(["-u", "a.txt", "b.txt"])
        .output()
        .unwrap();
    assert!(out.status.code() == Some(1) || out.status.code() == Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// `diff -u` of random edits, applied by us and by GNU `patch` to the
/// original and to the original with lines inserted at the top (an offset):
/// the bytes must be the same.
#[test]
fn same_bytes_as_gnu_patch() {
    if !tool_available("patch") || !tool_available("diff") {
        eprintln!("skipped: GNU patch and diff are needed for this cross-check");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for round in 0..60 {
        let vocabulary = if round % 2 == 0 { 8 } else { 10_000 };
        let count = 5 + rng.below(120);
        let lines = random_text(&mut rng, count, vocabulary);
        let changed = mutate(&mut rng, &lines);
        let old = join(&lines, rng.below(4) != 0);
        let new = join(&changed, rng.below(4) != 0);
        let diff = gnu_diff(dir.path(), &old, &new);
        if diff.is_empty() {
            continue;
        }
        let parsed = patch::parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
        let ours = patch::apply(&old, &parsed.files()[0]).unwrap_or_else(|e| panic!("{e}\n{diff}"));
        let theirs = gnu_patch(dir.path(), &old, &diff).expect("GNU patch applies its own diff");
        assert_eq!(ours, theirs, "round {round}\n{diff}");
        assert_eq!(ours, new);
        compared += 1;

        // The same diff on a file with unique lines prepended: both tools
        // must find the offset (unique vocabulary only, so the place is not
        // ambiguous).
        if vocabulary > 100 {
            let mut header = String::new();
            for i in 0..=rng.below(30) {
                writeln!(header, "prepended {i}").unwrap();
            }
            let shifted = format!("{header}{old}");
            let ours = patch::apply(&shifted, &parsed.files()[0])
                .unwrap_or_else(|e| panic!("{e}\n{diff}"));
            // GNU refuses to move a hunk whose header says line 1 and that
            // has less leading than trailing context ("can only match the
            // start of the file"); we place it by its context.
            match gnu_patch(dir.path(), &shifted, &diff) {
                Some(theirs) => assert_eq!(ours, theirs, "shifted round {round}\n{diff}"),
                None => assert_eq!(
                    ours,
                    format!("{header}{new}"),
                    "shifted round {round}\n{diff}"
                ),
            }
        }
    }
    assert!(compared > 40, "only {compared} rounds compared");
}

// ---------------------------------------------------------------------------
// Hostile input: the same property the `patch_parse` fuzz target checks, as a
// deterministic test that runs everywhere.

const SEEDS: &[&str] = &[
    "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n\\ No newline at end of file\n",
    "diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -2,0 +3 @@\n+z\n@@\n q\n-r\n",
    "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+1\n+2\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
    "*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@ class A\n@@ def b\n  x\n-y\n+z\n*** End of File\n*** Add File: h\n+q\n*** Delete File: i\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n\n@@\n+tail\n*** End Patch\n",
];

const FRAGMENTS: &[&str] = &[
    "@@",
    "@@ -0,0 +0,0 @@",
    "@@ -18446744073709551615,1 +1 @@",
    "@@ -18446744073709551615,0 +1 @@",
    "@@ -1,99999999 +1 @@",
    "--- ",
    "+++ ",
    "--- /dev/null",
    "+++ /dev/null",
    "\\ No newline at end of file",
    "*** Begin Patch",
    "*** End Patch",
    "*** End of File",
    "*** Update File: ",
    "*** Move to: f",
    "diff --git a/f b/f",
    "rename from f",
    "\"a/\\377\\",
    "\u{feff}",
    "\r",
    "é",
    "\u{2014}",
    "",
    " ",
    "-",
    "+",
    "\t",
];

const TARGET: &str = "a\nb\nc\r\n\u{feff}d\n\n    e \u{201c}f\u{201d}\nb\nc";

fn mutated(rng: &mut Rng) -> String {
    let seed = SEEDS[rng.below(SEEDS.len())];
    let mut lines: Vec<String> = seed.split('\n').map(str::to_owned).collect();
    for _ in 0..=rng.below(5) {
        let at = rng.below(lines.len() + 1);
        match rng.below(7) {
            0 => lines.insert(at, FRAGMENTS[rng.below(FRAGMENTS.len())].to_owned()),
            1 if at < lines.len() => {
                lines.remove(at);
            }
            2 if at < lines.len() => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())];
                lines[at] = format!("{fragment}{}", lines[at]);
            }
            3 if at < lines.len() => {
                let line = lines[at].clone();
                lines.insert(at, line);
            }
            4 => lines.truncate(at),
            5 if at < lines.len() => {
                // Flip a byte, keeping whatever is still UTF-8.
                let mut bytes = lines[at].clone().into_bytes();
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                lines[at] = String::from_utf8_lossy(&bytes).into_owned();
            }
            _ if !lines.is_empty() => {
                let other = rng.below(lines.len());
                let last = lines.len() - 1;
                lines.swap(at.min(last), other);
            }
            _ => {}
        }
    }
    lines.join(if rng.below(5) == 0 { "\r\n" } else { "\n" })
}

#[test]
fn mutated_patches_never_panic() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut parsed, mut applied) = (0, 0);
    for _ in 0..5_000 {
        let text = mutated(&mut rng);
        let Ok(patch) = patch::parse(&text) else {
            continue;
        };
        parsed += 1;
        for file in patch.files() {
            for original in ["", TARGET, "b\n"] {
                if patch::apply_with_report(original, file).is_ok() {
                    applied += 1;
                }
            }
        }
    }
    // The mutations must leave enough valid patches to exercise `apply`.
    assert!(
        parsed > 500 && applied > 200,
        "parsed {parsed}, applied {applied}"
    );
}

/// Every way a patch can delete a file parses as [`FileKind::Delete`]:
/// `apply_patch` refuses deletions unless `workspace.allow_delete`, and it
/// decides on the parsed kind, so a form missing here would slip through.
/// A rename is an update with a new name, not a deletion.
#[test]
fn every_deletion_form_parses_as_a_deletion() {
    let cases: &[(&str, FileKind, &str)] = &[
        (
            "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
            FileKind::Delete,
            "f",
        ),
        (
            "--- f\t2024-01-01 10:00:00\n+++ f\t1970-01-01 00:00:00 +0000\n@@ -1 +0,0 @@\n-a\n",
            FileKind::Delete,
            "f",
        ),
        (
            "diff --git a/f b/f\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
            FileKind::Delete,
            "f",
        ),
        (
            "diff --git a/f b/f\ndeleted file mode 100644\nindex e69de29..0000000\n",
            FileKind::Delete,
            "f",
        ),
        (
            "*** Begin Patch\n*** Delete File: f\n*** End Patch",
            FileKind::Delete,
            "f",
        ),
        (
            "diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\n",
            FileKind::Update,
            "f",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@\n-a\n+b\n*** End Patch",
            FileKind::Update,
            "f",
        ),
        (
            "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n",
            FileKind::Update,
            "f",
        ),
    ];
    for (text, kind, path) in cases {
        let parsed = patch::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let file = &parsed.files()[0];
        assert_eq!((file.kind(), file.path()), (*kind, *path), "{text:?}");
    }
}
