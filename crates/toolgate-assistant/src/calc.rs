//! The `calculator` group: `calculator(expression)`, a safe arithmetic
//! evaluator (seed 003's `calculator_tools`).
//!
//! Seed 003 evaluates with a whitelist over Python's AST. Here the
//! expression is read by a small recursive-descent parser that knows only
//! numbers, operators, parentheses and a fixed list of functions and
//! constants, so there is nothing to whitelist: a name, an attribute, a
//! string or an assignment is not part of the grammar, and is refused with
//! a message saying what is allowed. The expression crates on crates.io
//! did not fit exactly: `evalexpr` has strings, variables, assignment and
//! `;` chains, and no `**`; `meval` and `fasteval` are no longer
//! maintained; none accepts `×`, `÷` and the Unicode minus, or bounds the
//! nesting depth.
//!
//! # Grammar
//!
//! ```text
//! expr    = term { ("+" | "-") term }
//! term    = unary { ("*" | "×" | "/" | "÷" | "%") unary }
//! unary   = ("-" | "+") unary | power
//! power   = atom [ ("^" | "**") unary ]       (right-associative)
//! atom    = number | constant | function "(" expr { "," expr } ")" | "(" expr ")"
//! ```
//!
//! As in Python, the power binds tighter than a unary minus on its left
//! (`-2^2` is -4) and looser than one on its right (`2^-1` is 0.5); `%` is
//! the remainder with the sign of the divisor (`-7 % 3` is 2). The minus
//! sign may be `-` or `−` (U+2212).
//!
//! # Rules
//!
//! 1. An expression is at most [`MAX_EXPRESSION_LEN`] bytes and nests at
//!    most [`MAX_DEPTH`] levels (parentheses, function calls, signs and
//!    powers all count), so no input can exhaust the stack or the time.
//! 2. Every number, intermediate result and result is a finite `f64`: a
//!    literal too large (`1e999999`), an overflow (`9**9**9**9`), a division
//!    or remainder by zero, and a value outside a function's domain
//!    (`sqrt(-1)`, `ln(0)`) are refused with a message that says which.
//! 3. Results are shown rounded to 12 significant digits, which removes
//!    the noise of binary floating point (`2^10 * 3.14` is `3215.36`, not
//!    `3215.3600000000001`; `0.1 + 0.2` is `0.3`), in plain notation from
//!    1e-6 to 1e15 and in scientific notation (`1.5e20`) outside.
//! 4. `sin`, `cos` and `tan` take radians; at a multiple of π where the
//!    exact value is 0 they return exactly 0, and `tan` at an odd multiple
//!    of π/2 is refused as undefined.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};

/// The longest expression accepted, in bytes.
pub const MAX_EXPRESSION_LEN: usize = 1000;

/// The deepest nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// How many significant digits a result is shown with (rule 3).
const SIGNIFICANT_DIGITS: usize = 15;

/// The function names the grammar knows, for messages.
const FUNCTIONS: &str =
    "sqrt, abs, round, floor, ceil, ln, log, log10, exp, sin, cos, tan, asin, acos, atan, min, max";

/// The system-prompt block for the `calculator` group.
pub const INSTRUCTIONS: &str = "## Calculator
For any arithmetic beyond the trivial, call `calculator` instead of computing in your head. Functions: sqrt abs round floor ceil ln log log10 exp sin cos tan asin acos atan min max; constants pi, e. Put the numbers in: 15% of 200 is `200 * 15 / 100`.
";

/// The `tools.calculator` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CalculatorConfig {
    /// Whether `calculator` is registered. Default: true (one tool that
    /// only computes).
    pub enabled: bool,
}

impl Default for CalculatorConfig {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// The tools of the `calculator` group: `calculator`. Empty when the
/// group is disabled.
pub fn tools(config: &CalculatorConfig) -> Vec<Arc<dyn Tool>> {
    if !config.enabled {
        return Vec::new();
    }
    vec![Arc::new(Calculator)]
}

/// Arguments of `calculator`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalculatorArgs {
    /// The expression.
    pub expression: String,
}

/// `calculator`: evaluates an arithmetic expression (see the [module
/// rules](self)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Calculator;

#[async_trait]
impl TypedTool for Calculator {
    type Args = CalculatorArgs;
    const NAME: &'static str = "calculator";
    const DESCRIPTION: &'static str = "Evaluate arithmetic exactly, e.g. `2^10 * 3.14`, `sqrt(2) * pi`, `15 % 4`. Numbers only: no variables or units.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// None: it only computes.
    fn effects(&self, _args: &CalculatorArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: CalculatorArgs, _ctx: &ToolContext) -> ToolResult {
        match evaluate(&args.expression) {
            Ok(value) => {
                let shown = format_number(value);
                ToolResult::success(format!("{} = {shown}", args.expression.trim()))
                    .with_metadata("result", shown)
                    .with_metadata("value", json!(value))
            }
            Err(error) => ToolResult::failure(error.to_string()),
        }
    }
}

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CalcError {
    /// Nothing to evaluate.
    #[error("the expression is empty; write something like `2 + 2`")]
    Empty,
    /// Over [`MAX_EXPRESSION_LEN`].
    #[error("the expression is {0} bytes long; at most {MAX_EXPRESSION_LEN} are accepted")]
    TooLong(usize),
    /// Over [`MAX_DEPTH`].
    #[error("the expression nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A name that is neither a function nor a constant.
    #[error(
        "unknown name `{0}`: only numbers, operators and the functions {FUNCTIONS} and the constants pi and e are allowed"
    )]
    UnknownName(String),
    /// A function name without its arguments.
    #[error("`{0}` is a function: write `{0}(x)`")]
    NotCalled(&'static str),
    /// A quote: strings are not part of the grammar.
    #[error("strings are not allowed: the calculator only works on numbers")]
    String,
    /// `=`: assignment and comparison are not part of the grammar.
    #[error("`=` is not allowed: the calculator has no variables or comparisons")]
    Assignment,
    /// A character the grammar does not know.
    #[error("unexpected `{found}` at position {at}")]
    Unexpected {
        /// What was found (a character, or `end of input`).
        found: String,
        /// Where, counting characters from 1.
        at: usize,
    },
    /// A number that does not parse or is not finite.
    #[error("`{0}` is not a number the calculator can use (too large, or malformed)")]
    BadNumber(String),
    /// Division or remainder by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// A result too large for a 64-bit float.
    #[error("the result is too large (overflow)")]
    Overflow,
    /// A function called outside its domain.
    #[error("{0}")]
    Domain(String),
    /// A function called with the wrong number of arguments.
    #[error("`{name}` takes {expected}, got {got}")]
    Arity {
        /// The function.
        name: &'static str,
        /// How many it takes, in words.
        expected: &'static str,
        /// How many it got.
        got: usize,
    },
}

/// Evaluates `expression` (see the [module rules](self)).
pub fn evaluate(expression: &str) -> Result<f64, CalcError> {
    if expression.len() > MAX_EXPRESSION_LEN {
        return Err(CalcError::TooLong(expression.len()));
    }
    let tokens = lex(expression)?;
    if tokens.is_empty() {
        return Err(CalcError::Empty);
    }
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        depth: 0,
    };
    let value = parser.expr()?;
    match parser.peek() {
        None => finite(value),
        Some(token) => Err(token.unexpected()),
    }
}

/// A result as the calculator shows it (rule 3).
pub fn format_number(value: f64) -> String {
    /// Integers up to here are exact in an `f64`.
    const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0; // 2^53
    if value == 0.0 {
        // -0 shows as 0.
        return "0".to_owned();
    }
    if value.fract() == 0.0 && value.abs() <= EXACT_INTEGERS {
        return format!("{value:.0}");
    }
    // Round to 15 significant digits through the decimal exponent form,
    // then let Rust print the shortest text that reads back as that value.
    let rounded: f64 = format!("{value:.prec$e}", prec = SIGNIFICANT_DIGITS - 1)
        .parse()
        .unwrap_or(value);
    if (1e-6..1e15).contains(&rounded.abs()) {
        rounded.to_string()
    } else {
        format!("{rounded:e}")
    }
}

// ------------------------------------------------------------------ lexer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    LParen,
    RParen,
    Comma,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Character position, from 1.
    at: usize,
}

impl Token {
    fn unexpected(&self) -> CalcError {
        let found = match &self.tok {
            Tok::Num(n) => format_number(*n),
            Tok::Name(name) => name.clone(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::Star => "*".into(),
            Tok::Slash => "/".into(),
            Tok::Percent => "%".into(),
            Tok::Caret => "^".into(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::Comma => ",".into(),
        };
        CalcError::Unexpected { found, at: self.at }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, CalcError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        let single = match c {
            '+' => Some(Tok::Plus),
            '-' | '\u{2212}' | '\u{2013}' => Some(Tok::Minus),
            '*' if chars.get(i + 1) == Some(&'*') => {
                i += 1;
                Some(Tok::Caret)
            }
            '*' | '×' | '·' | '⋅' => Some(Tok::Star),
            '/' | '÷' => Some(Tok::Slash),
            '%' => Some(Tok::Percent),
            '^' => Some(Tok::Caret),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ',' => Some(Tok::Comma),
            'π' => Some(Tok::Name("pi".into())),
            _ => None,
        };
        if let Some(tok) = single {
            tokens.push(Token { tok, at });
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            // An exponent only when digits follow: `2e` is 2 then the name `e`.
            if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                let mut j = i + 1;
                if j < chars.len() && matches!(chars[j], '+' | '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal: String = chars[start..i].iter().collect();
            let value: f64 = literal
                .parse()
                .map_err(|_| CalcError::BadNumber(literal.clone()))?;
            if !value.is_finite() {
                return Err(CalcError::BadNumber(literal));
            }
            tokens.push(Token {
                tok: Tok::Num(value),
                at,
            });
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            // Refused here, so that the first problem in the text is the
            // one reported.
            if !matches!(name.as_str(), "pi" | "e") && Function::named(&name).is_none() {
                return Err(CalcError::UnknownName(name));
            }
            tokens.push(Token {
                tok: Tok::Name(name),
                at,
            });
        } else if matches!(c, '"' | '\'' | '`') {
            return Err(CalcError::String);
        } else if c == '=' {
            return Err(CalcError::Assignment);
        } else {
            return Err(CalcError::Unexpected {
                found: c.to_string(),
                at,
            });
        }
    }
    Ok(tokens)
}

// ----------------------------------------------------------------- parser

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek().is_some_and(|t| t.tok == *tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn end_of_input(&self) -> CalcError {
        CalcError::Unexpected {
            found: "end of input".into(),
            at: self.tokens.last().map_or(1, |t| t.at + 1),
        }
    }

    /// Enters one level of nesting (rule 1).
    fn descend(&mut self) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(CalcError::TooDeep)
        } else {
            Ok(())
        }
    }

    fn expr(&mut self) -> Result<f64, CalcError> {
        let mut value = self.term()?;
        loop {
            if self.eat(&Tok::Plus) {
                value = finite(value + self.term()?)?;
            } else if self.eat(&Tok::Minus) {
                value = finite(value - self.term()?)?;
            } else {
                return Ok(value);
            }
        }
    }

    fn term(&mut self) -> Result<f64, CalcError> {
        let mut value = self.unary()?;
        loop {
            if self.eat(&Tok::Star) {
                value = finite(value * self.unary()?)?;
            } else if self.eat(&Tok::Slash) {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err(CalcError::DivisionByZero);
                }
                value = finite(value / divisor)?;
            } else if self.eat(&Tok::Percent) {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err(CalcError::DivisionByZero);
                }
                // Python's remainder: the sign of the divisor.
                value = finite(value - divisor * (value / divisor).floor())?;
            } else {
                return Ok(value);
            }
        }
    }

    fn unary(&mut self) -> Result<f64, CalcError> {
        let negate = if self.eat(&Tok::Minus) {
            true
        } else if self.eat(&Tok::Plus) {
            false
        } else {
            return self.power();
        };
        self.descend()?;
        let value = self.unary()?;
        self.depth -= 1;
        Ok(if negate { -value } else { value })
    }

    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.atom()?;
        if !self.eat(&Tok::Caret) {
            return Ok(base);
        }
        self.descend()?;
        let exponent = self.unary()?;
        self.depth -= 1;
        if base == 0.0 && exponent < 0.0 {
            return Err(CalcError::DivisionByZero);
        }
        let value = base.powf(exponent);
        if value.is_nan() {
            return Err(CalcError::Domain(format!(
                "{} ^ {} is not a real number",
                format_number(base),
                format_number(exponent)
            )));
        }
        finite(value)
    }

    fn atom(&mut self) -> Result<f64, CalcError> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.end_of_input());
        };
        self.pos += 1;
        match &token.tok {
            Tok::Num(n) => Ok(*n),
            Tok::LParen => {
                self.descend()?;
                let value = self.expr()?;
                self.close()?;
                self.depth -= 1;
                Ok(value)
            }
            Tok::Name(name) => self.name(name),
            _ => Err(token.unexpected()),
        }
    }

    fn close(&mut self) -> Result<(), CalcError> {
        if self.eat(&Tok::RParen) {
            return Ok(());
        }
        Err(self
            .peek()
            .map_or_else(|| self.end_of_input(), Token::unexpected))
    }

    fn name(&mut self, name: &str) -> Result<f64, CalcError> {
        match name {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        let Some(function) = Function::named(name) else {
            return Err(CalcError::UnknownName(name.to_owned()));
        };
        if !self.eat(&Tok::LParen) {
            return Err(CalcError::NotCalled(function.name()));
        }
        self.descend()?;
        let mut args = Vec::new();
        if !self.eat(&Tok::RParen) {
            args.push(self.expr()?);
            while self.eat(&Tok::Comma) {
                args.push(self.expr()?);
            }
            self.close()?;
        }
        self.depth -= 1;
        function.apply(&args)
    }
}

/// Rule 2: every value is finite.
fn finite(value: f64) -> Result<f64, CalcError> {
    if value.is_finite() {
        Ok(value)
    } else if value.is_nan() {
        Err(CalcError::Domain("the result is not a number".into()))
    } else {
        Err(CalcError::Overflow)
    }
}

// -------------------------------------------------------------- functions

#[derive(Debug, Clone, Copy)]
enum Function {
    Sqrt,
    Abs,
    Round,
    Floor,
    Ceil,
    Ln,
    Log,
    Log10,
    Exp,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Min,
    Max,
}

impl Function {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "sqrt" => Self::Sqrt,
            "abs" => Self::Abs,
            "round" => Self::Round,
            "floor" => Self::Floor,
            "ceil" => Self::Ceil,
            "ln" => Self::Ln,
            "log" => Self::Log,
            "log10" => Self::Log10,
            "exp" => Self::Exp,
            "sin" => Self::Sin,
            "cos" => Self::Cos,
            "tan" => Self::Tan,
            "asin" => Self::Asin,
            "acos" => Self::Acos,
            "atan" => Self::Atan,
            "min" => Self::Min,
            "max" => Self::Max,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Sqrt => "sqrt",
            Self::Abs => "abs",
            Self::Round => "round",
            Self::Floor => "floor",
            Self::Ceil => "ceil",
            Self::Ln => "ln",
            Self::Log => "log",
            Self::Log10 => "log10",
            Self::Exp => "exp",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Tan => "tan",
            Self::Asin => "asin",
            Self::Acos => "acos",
            Self::Atan => "atan",
            Self::Min => "min",
            Self::Max => "max",
        }
    }

    fn apply(self, args: &[f64]) -> Result<f64, CalcError> {
        let arity = |expected: &'static str| CalcError::Arity {
            name: self.name(),
            expected,
            got: args.len(),
        };
        let domain = |what: &str| {
            CalcError::Domain(format!(
                "{}({}) is undefined: {what}",
                self.name(),
                args.iter()
                    .map(|a| format_number(*a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        };
        let value = match (self, args) {
            (Self::Min, [first, rest @ ..]) => rest.iter().copied().fold(*first, f64::min),
            (Self::Max, [first, rest @ ..]) => rest.iter().copied().fold(*first, f64::max),
            (Self::Min | Self::Max, _) => return Err(arity("at least one argument")),
            (Self::Round, [x]) => x.round(),
            (Self::Round, [x, digits]) => round_to(*x, *digits)?,
            (Self::Round, _) => return Err(arity("one or two arguments")),
            (Self::Log, [x, base]) => {
                if *x <= 0.0 || *base <= 0.0 || base.to_bits() == 1f64.to_bits() {
                    return Err(domain("needs x > 0 and a base > 0 other than 1"));
                }
                x.ln() / base.ln()
            }
            (_, [x]) => self.unary(*x).map_err(domain)?,
            (Self::Log, _) => return Err(arity("one or two arguments")),
            (_, _) => return Err(arity("one argument")),
        };
        finite(value)
    }

    /// A one-argument function; `Err` names why `x` is outside its domain.
    fn unary(self, x: f64) -> Result<f64, &'static str> {
        use std::f64::consts::{FRAC_PI_2, PI};
        // How close to a multiple of π (or of π/2, off by π/2) counts as on
        // it: the argument came through floating point too.
        let on_multiple = |x: f64, step: f64, offset: f64| {
            let k = (x - offset) / step;
            (k - k.round()).abs() < 1e-12
        };
        Ok(match self {
            Self::Sqrt if x < 0.0 => return Err("needs x >= 0"),
            Self::Sqrt => x.sqrt(),
            Self::Abs => x.abs(),
            Self::Round => x.round(),
            Self::Floor => x.floor(),
            Self::Ceil => x.ceil(),
            Self::Ln | Self::Log | Self::Log10 if x <= 0.0 => return Err("needs x > 0"),
            Self::Ln | Self::Log => x.ln(),
            Self::Log10 => x.log10(),
            Self::Exp => x.exp(),
            Self::Sin if on_multiple(x, PI, 0.0) => 0.0,
            Self::Sin => x.sin(),
            Self::Cos if on_multiple(x, PI, FRAC_PI_2) => 0.0,
            Self::Cos => x.cos(),
            Self::Tan if on_multiple(x, PI, FRAC_PI_2) => {
                return Err("tan is infinite at odd multiples of pi/2");
            }
            Self::Tan if on_multiple(x, PI, 0.0) => 0.0,
            Self::Tan => x.tan(),
            Self::Asin | Self::Acos if !(-1.0..=1.0).contains(&x) => {
                return Err("needs -1 <= x <= 1");
            }
            Self::Asin => x.asin(),
            Self::Acos => x.acos(),
            Self::Atan => x.atan(),
            Self::Min | Self::Max => x,
        })
    }
}

/// `round(x, digits)`: digits after the decimal point (negative: before
/// it), as Python rounds, but half away from zero.
fn round_to(x: f64, digits: f64) -> Result<f64, CalcError> {
    if digits.fract() != 0.0 || !(-15.0..=15.0).contains(&digits) {
        return Err(CalcError::Domain(
            "round(x, n) needs a whole number of digits n from -15 to 15".into(),
        ));
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a whole number from -15 to 15"
    )]
    let scale = 10f64.powi(digits as i32);
    finite((x * scale).round() / scale)
}

/// The `calculator` group, `tools.calculator` (on by default).
#[derive(Debug, Clone, Copy, Default)]
pub struct CalculatorGroup;

impl toolgate_core::Group for CalculatorGroup {
    fn name(&self) -> &'static str {
        "calculator"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("calculator")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["calculator"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<CalculatorConfig>()?;
        Ok(toolgate_core::ToolGroup::new(
            "calculator",
            INSTRUCTIONS,
            tools(section),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(clippy::approx_constant, reason = "3.14 is seed 003's example")]
    fn formats_without_float_noise() {
        let cases: &[(f64, &str)] = &[
            (1024.0 * 3.14, "3215.36"),
            (0.1 + 0.2, "0.3"),
            (1.1 * 1.1, "1.21"),
            (1.0 / 3.0, "0.333333333333333"),
            (2.0 / 3.0, "0.666666666666667"),
            (-0.0, "0"),
            (42.0, "42"),
            (-7.0, "-7"),
            (1e15, "1000000000000000"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (1e16, "1e16"),
            (1e17, "1e17"),
            (1.5e20, "1.5e20"),
            (1234.5678e20, "1.2345678e23"),
            (-2.5e-7, "-2.5e-7"),
            (0.000_001, "0.000001"),
            (1e300 * 10.0, "1e301"),
        ];
        for (value, shown) in cases {
            assert_eq!(format_number(*value), *shown, "{value:e}");
        }
    }
}
