//! `calculator` through the gate: arithmetic as seed 003 shows it, and
//! every way out of arithmetic refused with a message that says why.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::json;
use toolgate_assistant::calc::{self, CalculatorConfig, MAX_DEPTH, MAX_EXPRESSION_LEN};
use toolgate_core::{Registry, ToolCall, ToolContext};
use toolgate_engine::{Decision, ExecutionEngine};

fn engine() -> ExecutionEngine {
    let registry = Registry::new();
    for tool in calc::tools(&CalculatorConfig::default()) {
        registry.register_arc(tool).unwrap();
    }
    ExecutionEngine::builder(Arc::new(registry)).build()
}

/// What a good expression gives.
const VALUES: &[(&str, &str)] = &[
    ("2^10 * 3.14", "3215.36"),
    ("2 ** 10 * 3.14", "3215.36"),
    ("0.1 + 0.2", "0.3"),
    ("1 + 2 * 3", "7"),
    ("(1 + 2) * 3", "9"),
    ("7 / 2", "3.5"),
    ("6 × 7", "42"),
    ("84 ÷ 2", "42"),
    ("10 − 3", "7"),
    ("−3 + 1", "-2"),
    ("-2^2", "-4"),
    ("(-2)^2", "4"),
    ("2^-1", "0.5"),
    ("2^3^2", "512"),
    ("--3", "3"),
    ("+5", "5"),
    ("17 % 5", "2"),
    ("-7 % 3", "2"),
    ("7.5 % 2", "1.5"),
    ("sqrt(16) + 1", "5"),
    ("abs(-3.5)", "3.5"),
    ("round(2.5)", "3"),
    ("round(3.14159, 2)", "3.14"),
    ("floor(-1.5)", "-2"),
    ("ceil(1.2)", "2"),
    ("ln(e)", "1"),
    ("log(e^2)", "2"),
    ("log(8, 2)", "3"),
    ("log10(1000)", "3"),
    ("exp(0)", "1"),
    ("sin(pi)", "0"),
    ("cos(pi)", "-1"),
    ("sin(pi / 6)", "0.5"),
    ("tan(pi / 4)", "1"),
    ("asin(1) * 2", "3.14159265358979"),
    ("acos(1)", "0"),
    ("atan(1) * 4", "3.14159265358979"),
    ("min(3, 1, 2)", "1"),
    ("max(3, 1, 2)", "3"),
    ("π", "3.14159265358979"),
    ("1e3 + .5", "1000.5"),
    ("2e-3", "0.002"),
    ("1 / 3", "0.333333333333333"),
    ("10^20", "1e20"),
    ("2^53", "9007199254740992"),
    ("  1+1  ", "2"),
];

/// What a refused expression says (a part of its message).
const REFUSALS: &[(&str, &str)] = &[
    // Escape attempts: nothing but arithmetic exists.
    ("__import__('os')", "unknown name `__import__`"),
    ("open('/etc/passwd')", "unknown name `open`"),
    ("os.system('id')", "unknown name `os`"),
    ("(1).__class__", "unexpected `.`"),
    ("sqrt.__globals__", "unexpected `.` at position 5"),
    ("sqrt + 1", "`sqrt` is a function: write `sqrt(x)`"),
    ("a=1", "unknown name `a`"),
    ("pi = 3", "`=` is not allowed"),
    ("2 == 2", "`=` is not allowed"),
    ("\"x\"", "strings are not allowed"),
    ("'x' * 3", "strings are not allowed"),
    ("lambda: 1", "unknown name `lambda`"),
    ("[1, 2]", "unexpected `[`"),
    ("1; 2", "unexpected `;`"),
    ("x", "unknown name `x`"),
    ("pow(2, 3)", "unknown name `pow`"),
    ("PI", "unknown name `PI`"),
    // Bounds: numbers, results, nesting, length.
    (
        "1e999999",
        "`1e999999` is not a number the calculator can use",
    ),
    ("9**9**9**9", "too large"),
    ("10^400", "too large"),
    ("exp(1000)", "too large"),
    ("1/0", "division by zero"),
    ("5 % 0", "division by zero"),
    ("0^-1", "division by zero"),
    ("sqrt(-1)", "sqrt(-1) is undefined"),
    ("ln(0)", "ln(0) is undefined"),
    ("log(8, 1)", "log(8, 1) is undefined"),
    ("asin(2)", "asin(2) is undefined"),
    ("tan(pi / 2)", "tan(1.5707963267949) is undefined"),
    ("(-8)^(1/3)", "is not a real number"),
    ("round(1.5, 0.5)", "whole number of digits"),
    ("min()", "`min` takes at least one argument, got 0"),
    ("sqrt(1, 2)", "`sqrt` takes one argument, got 2"),
    // Grammar.
    ("", "the expression is empty"),
    ("   ", "the expression is empty"),
    ("2 +", "unexpected `end of input`"),
    ("(1 + 2", "unexpected `end of input`"),
    ("1 + 2)", "unexpected `)`"),
    ("2 pi", "unexpected `pi`"),
    ("2 (3)", "unexpected `(`"),
    ("1.2.3", "`1.2.3` is not a number"),
    ("3 # comment", "unexpected `#`"),
];

#[tokio::test]
async fn values_through_the_gate() {
    let engine = engine();
    for (expression, expected) in VALUES {
        let out = engine
            .execute(ToolCall::new(
                "c",
                "calculator",
                json!({"expression": expression}),
            ))
            .await;
        assert_eq!(out.decision, Decision::Executed, "{expression}");
        assert!(out.result.success, "{expression}: {:?}", out.result.error);
        assert_eq!(out.result.metadata["result"], *expected, "{expression}");
        assert_eq!(
            out.result.output,
            format!("{} = {expected}", expression.trim()),
            "{expression}"
        );
        assert!(out.effects.list().is_empty(), "{expression}");
    }
}

#[tokio::test]
async fn refusals_say_why() {
    let tool = calc::tools(&CalculatorConfig::default()).remove(0);
    for (expression, message) in REFUSALS {
        let result = tool
            .execute(json!({"expression": expression}), &ToolContext::new("c"))
            .await;
        assert!(
            !result.success,
            "{expression}: accepted as {}",
            result.output
        );
        let error = result.error.unwrap();
        assert!(error.contains(message), "{expression}: {error}");
    }
}

#[tokio::test]
async fn length_and_depth_are_bounded() {
    let tool = calc::tools(&CalculatorConfig::default()).remove(0);
    let run = |expression: String| {
        let tool = Arc::clone(&tool);
        async move {
            tool.execute(json!({"expression": expression}), &ToolContext::new("c"))
                .await
        }
    };
    let deep = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    let cases: Vec<(String, Result<&str, &str>)> = vec![
        // 10,000 open parentheses: refused by length, before any parsing.
        ("(".repeat(10_000), Err("10000 bytes long")),
        (deep(10_000), Err("20001 bytes long")),
        // Within the length limit, nesting is bounded by depth.
        (deep(MAX_DEPTH - 1), Ok("1")),
        (deep(MAX_DEPTH + 1), Err("nests deeper than 64 levels")),
        (format!("{}1", "-".repeat(200)), Err("nests deeper")),
        (format!("2{}", "^2".repeat(200)), Err("nests deeper")),
        (
            format!("{}1{}", "sqrt(".repeat(100), ")".repeat(100)),
            Err("nests deeper"),
        ),
        // The longest accepted expression.
        (
            format!("1{}", "+1".repeat((MAX_EXPRESSION_LEN - 1) / 2)),
            Ok("500"),
        ),
        (
            format!("1{}", " ".repeat(MAX_EXPRESSION_LEN)),
            Err("1001 bytes long"),
        ),
    ];
    for (expression, expected) in cases {
        let shown: String = expression.chars().take(20).collect();
        let result = run(expression).await;
        match expected {
            Ok(value) => {
                assert!(result.success, "{shown}…: {:?}", result.error);
                assert_eq!(result.metadata["result"], value, "{shown}…");
            }
            Err(message) => {
                let error = result.error.unwrap_or_default();
                assert!(error.contains(message), "{shown}…: {error}");
            }
        }
    }
}

#[tokio::test]
async fn the_gate_refuses_arguments_beyond_the_expression() {
    let out = engine()
        .execute(ToolCall::new(
            "c",
            "calculator",
            json!({"expression": "1+1", "globals": {"os": 1}}),
        ))
        .await;
    assert_eq!(out.decision, Decision::InvalidArguments);
    assert!(calc::tools(&CalculatorConfig { enabled: false }).is_empty());
}
