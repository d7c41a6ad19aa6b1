//! Bounds on what the parser is given.
//!
//! brush-parser is a recursive-descent parser that `unwrap`s a few number
//! parses. These checks run first, on the raw text, so that no input can
//! overflow the stack or reach those `unwrap`s; what they refuse is
//! `dangerous` (unparseable), never a crash.

use crate::parse::ParseError;

/// Commands longer than this are not analysed (they are `dangerous`).
pub const MAX_COMMAND_LEN: usize = 64 * 1024;

/// Commands nesting brackets, braces and compound keywords deeper than this
/// are not analysed (they are `dangerous`).
///
/// The parser is recursive; this keeps its stack use bounded on small thread
/// stacks (a tokio worker has 2 MiB) whatever the input.
pub const MAX_NESTING: usize = 24;

/// The budget for open parentheses and brackets plus twice the open `${`
/// and `case`, the constructs the parser backtracks over (see
/// `check_limits`).
const MAX_TANGLE: usize = 10;

/// Rejects input the recursive parser should not see.
pub(crate) fn check_limits(src: &str) -> Result<(), ParseError> {
    if src.len() > MAX_COMMAND_LEN {
        return Err(ParseError::TooLong {
            len: src.len(),
            max: MAX_COMMAND_LEN,
        });
    }

    // Over-estimates, quoted text included; real commands stay far below.
    //
    // `depth` bounds the parser's recursion (its stack). `tangle` bounds its
    // backtracking: unclosed `(`, `$(`, `${`, `[` and nested `case` make
    // brush-parser's PEG grammars try alternatives exponentially (fuzzing
    // found `((((((((((((…` taking 0.4 s at 24 parens, and here-document
    // bodies with a dozen unclosed `$(` taking as long), so they get a
    // tighter budget of their own.
    //
    // The count ignores quoting, so a closer inside quotes (`$( ')'`) can
    // hide an opener from it: crafted input can still make the parser slow
    // (never hang or crash). Callers running untrusted commands under a
    // deadline should put classification under it too.
    let mut depth: usize = 0;
    let mut max_depth = 0;
    let mut parens: usize = 0;
    let mut cases: usize = 0;
    let mut expansions: usize = 0;
    let mut brackets: usize = 0;
    let mut max_tangle = 0;
    let mut backquotes = 0;
    let bytes = src.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'(' => {
                depth += 1;
                parens += 1;
            }
            b'{' => {
                depth += 1;
                if i > 0 && bytes.get(i - 1) == Some(&b'$') {
                    expansions += 1;
                }
            }
            b'[' => {
                depth += 1;
                brackets += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                parens = parens.saturating_sub(1);
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                expansions = expansions.saturating_sub(1);
            }
            b']' => {
                depth = depth.saturating_sub(1);
                brackets = brackets.saturating_sub(1);
            }
            b'`' => backquotes += 1,
            b'a'..=b'z' => {
                let start = i;
                while bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase) {
                    i += 1;
                }
                let at_boundary = start == 0
                    || bytes
                        .get(start - 1)
                        .is_some_and(|p| !p.is_ascii_alphanumeric() && *p != b'_');
                if at_boundary {
                    match bytes.get(start..=i) {
                        Some(b"if" | b"while" | b"until" | b"for" | b"select") => depth += 1,
                        Some(b"case") => {
                            depth += 1;
                            cases += 1;
                        }
                        Some(b"fi" | b"done") => depth = depth.saturating_sub(1),
                        Some(b"esac") => {
                            depth = depth.saturating_sub(1);
                            cases = cases.saturating_sub(1);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        max_depth = max_depth.max(depth);
        max_tangle = max_tangle.max(parens + brackets + 2 * (expansions + cases));
        i += 1;
    }
    if max_depth + backquotes / 2 > MAX_NESTING {
        return Err(ParseError::TooDeep { max: MAX_NESTING });
    }
    if max_tangle > MAX_TANGLE {
        return Err(ParseError::TooDeep { max: MAX_TANGLE });
    }
    check_numbers(bytes)?;
    check_heredoc_delimiters(bytes)?;
    check_heredoc_arithmetic(src)
}

/// Rejects a here-document operator with no delimiter word after it
/// (`<< <<h`, `<<- |x`), a syntax error for bash, or with a delimiter
/// starting with `$` or `` ` ``, which no real command uses: inside `$(…)`
/// both send brush-parser's tokenizer into an endless loop (found by
/// fuzzing: `$(<<- <<h)| t `, `<<$(<<$( <$(<<$(`).
fn check_heredoc_delimiters(bytes: &[u8]) -> Result<(), ParseError> {
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if b != b'<' || bytes.get(i) != Some(&b'<') {
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&b'<') {
            // `<<<`: a here-string.
            i += 1;
            continue;
        }
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        while bytes.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            i += 1;
        }
        match bytes.get(i) {
            None | Some(b'<' | b'>' | b'|' | b'&' | b';' | b'(' | b')' | b'\n') => {
                return Err(ParseError::Unsupported(
                    "a here-document operator without a delimiter",
                ));
            }
            Some(_) => {}
        }
        // The delimiter word must be a plain name, quoted or not (`EOF`,
        // `'EOF'`, `"END"`, `\EOF`): empty ones (`<<''`), ones quoting a
        // quote (`<<'"'`) and ones with expansions make brush-parser loop
        // forever, and no real command needs them.
        let mut quote = None;
        let mut letters = 0;
        while let Some(&c) = bytes.get(i) {
            match (quote, c) {
                (None, b' ' | b'\t' | b'\n' | b'<' | b'>' | b'|' | b'&' | b';' | b'(' | b')') => {
                    break;
                }
                (None, b'\'' | b'"') => quote = Some(c),
                (Some(q), _) if c == q => quote = None,
                (None, b'\\') => {}
                (_, c) if c.is_ascii_alphanumeric() || b"_-.+:/@%,=".contains(&c) => letters += 1,
                _ => {
                    return Err(ParseError::Unsupported(
                        "a here-document delimiter toolgate does not analyse",
                    ));
                }
            }
            i += 1;
        }
        if letters == 0 || quote.is_some() {
            return Err(ParseError::Unsupported(
                "a here-document operator without a delimiter",
            ));
        }
    }
    Ok(())
}

/// Rejects a here-document together with `$((…))` or `$[…]`: brush-parser's
/// tokenizer can `unwrap` past the end of input when an arithmetic expansion
/// and pending here-document bodies meet (found by fuzzing:
/// `cat <<EOF` / `$(cat <<EOF` / `)` / `$((x)` / `EOF`). Rare in real
/// commands; such a line is `dangerous`.
fn check_heredoc_arithmetic(src: &str) -> Result<(), ParseError> {
    let heredoc = src.match_indices("<<").any(|(at, _)| {
        src.as_bytes().get(at + 2) != Some(&b'<')
            && (at == 0 || src.as_bytes().get(at - 1) != Some(&b'<'))
    });
    if heredoc && (src.contains("$((") || src.contains("$[")) {
        return Err(ParseError::Unsupported(
            "an arithmetic expansion together with a here-document",
        ));
    }
    Ok(())
}

/// Rejects numbers brush-parser would `unwrap` a failed parse of: a file
/// descriptor before a redirection (`4444444444>f`, an `i32`) and a
/// brace-sequence or tilde number (`{1..99999999999999999999}`, an `i64` or
/// `usize`). Found by fuzzing (`fuzz/fuzz_targets/command_classify.rs`).
/// Over-approximated: any run of 19 digits, any run of 10 digits before `<`
/// or `>`; real commands have neither.
fn check_numbers(bytes: &[u8]) -> Result<(), ParseError> {
    let mut run = 0;
    for &b in bytes.iter().chain(std::iter::once(&b' ')) {
        if b.is_ascii_digit() {
            run += 1;
            continue;
        }
        if run >= 19 || (run >= 10 && (b == b'<' || b == b'>')) {
            return Err(ParseError::NumberTooLarge);
        }
        run = 0;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_command;

    #[test]
    fn heredoc_with_arithmetic_is_refused() {
        // Regression: fuzzing found brush-parser's tokenizer unwrapping `None`.
        let crash = "cat <g<EOF\nit$(iccat <<EOF\n)\n$((it$:iwwhiled)\nEOF";
        assert!(matches!(
            parse_command(crash),
            Err(ParseError::Unsupported(_))
        ));
        assert!(parse_command("echo $((1 + 2)) <<< x").is_ok());
        assert!(parse_command("cat <<EOF\n$HOME\nEOF").is_ok());
    }

    #[test]
    fn heredoc_without_delimiter_is_refused() {
        // Regression: fuzzing found brush-parser's tokenizer looping forever.
        for cmd in [
            "ecxx=$(auwlts| '' fs<<- <<| '' fs<<- <<h)h| tue ",
            "$(<< <<h)| t ",
            "cat <<",
        ] {
            assert!(
                matches!(parse_command(cmd), Err(ParseError::Unsupported(_))),
                "{cmd}"
            );
        }
        assert!(parse_command("cat <<EOF\nx\nEOF").is_ok());
        assert!(parse_command("cat <<-'EOF'\n\tx\nEOF").is_ok());
        assert!(parse_command("cat <<\"END\"\nx\nEND").is_ok());
        assert!(parse_command("cat <<\\EOF\nx\nEOF").is_ok());
        assert!(parse_command("grep x <<<'a'").is_ok());
        // The commit-message idiom agents use.
        assert!(parse_command("git commit -m \"$(cat <<'EOF'\nfix: x\n\nbody\nEOF\n)\"").is_ok());
    }

    #[test]
    fn backtracking_is_bounded() {
        // Regression: fuzzing found a here-document with unclosed `$(`
        // taking 0.2 s to reject (a 13 s "slow unit" under the sanitizer).
        let heredoc = "cat <<EOF\nit$([  $([    \u{1}\0\0\u{1}0-(($tho $(s\0\0ech  \u{1}o\0\0\u{1}cat <<EOF\nit$([  $([ it$([  $([    \u{1}\0\0\u{1}0-(($tho   \u{1}\0\0\u{1}0-(($tho $(s\0\u{6})(s\0\0h id)";
        assert!(matches!(
            parse_command(heredoc),
            Err(ParseError::TooDeep { .. })
        ));
        let expansions = format!("cat <<EOF\n{}\nEOF", "${x:-".repeat(6));
        assert!(matches!(
            parse_command(&expansions),
            Err(ParseError::TooDeep { .. })
        ));
        // Regression: fuzzing found unclosed `${` and `[` taking 0.3 s.
        let fuzzed = "t$mount[!(b cfi\u{1}\0\0>| cfiHOe%'^'\\ech\u{1}\0\0\" cfi\0 cx${H[^'^'cG\0&-H ${\"Hp\0 cx${H[^'^'cG\0&${xo~ ${x8-H ${\"Hp\0 cx${H[^'^'cG\0&${x6-id)}";
        assert!(matches!(
            parse_command(fuzzed),
            Err(ParseError::TooDeep { .. })
        ));
        // Regression: fuzzing found unclosed parentheses taking 0.3 s to
        // reject (an 11 s "slow unit" under the sanitizer).
        let slow = "(((((((((((((((*ill --signsigfind /(-((((((*ill --signsigfind / -exec r(n";
        assert!(matches!(
            parse_command(slow),
            Err(ParseError::TooDeep { .. })
        ));
        let nested_case = format!("{}ls", "case x in y) ".repeat(8));
        assert!(matches!(
            parse_command(&nested_case),
            Err(ParseError::TooDeep { .. })
        ));
        assert!(parse_command("(cd a && (cd b && (ls)))").is_ok());
    }

    #[test]
    fn numbers_the_parser_cannot_hold_are_refused() {
        let cases: &[(&str, bool)] = &[
            // Fuzzing found the first one: brush-parser unwraps the fd parse.
            (
                "bash -c 'c4dev14444<(4444444444444444444444444<\u{0}44444argo test'",
                false,
            ),
            ("4444444444>f", false),
            ("ls 99999999999<x", false),
            ("echo {1..99999999999999999999}", false),
            ("echo ~+99999999999999999999", false),
            ("date -d @1700000000", true),
            ("ls 2>/dev/null", true),
        ];
        for (cmd, ok) in cases {
            let result = parse_command(cmd);
            assert_eq!(result.is_ok(), *ok, "{cmd}: {result:?}");
            if !ok {
                assert!(matches!(result, Err(ParseError::NumberTooLarge)), "{cmd}");
            }
        }
    }
}
