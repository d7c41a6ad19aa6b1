//! The shell parser front-end: brush-parser's syntax tree, flattened into our
//! own types.
//!
//! Everything a policy needs to know about a command line is a list of
//! [`SimpleCommand`]s, each with its program, argv, redirections and context,
//! plus a summary of the shell features used ([`ShellFeatures`]). Commands
//! nested in substitutions (`$(…)`, `<(…)`), in `sh -c '…'` / `eval '…'`
//! scripts, in `find -exec … \;`, in function bodies and in compound commands
//! (`if`, `for`, `while`, `case`, `{ …; }`, `( … )`) are in the list too, each
//! with its [`Origin`].

use std::panic::{self, AssertUnwindSafe};

use brush_parser::ParserOptions;
use brush_parser::ast;

use crate::forks;
use crate::limits::check_limits;
use crate::model::{
    CommandContext, Kind, Origin, ParsedCommand, PipelineSlot, Script, ShellFeatures, SimpleCommand,
};
use crate::words::{self, Nested, Word};
use context::{child_context, looping};
use inline::{SHELLS, find_exec_commands, shell_script_arg};

pub use error::ParseError;

mod context;
mod error;
mod inline;
mod simple;

/// How deep substitutions and inline scripts may nest inside each other.
const MAX_SCRIPT_DEPTH: usize = 8;

/// Parses a command line as bash.
///
/// Quoted text is data: `echo 'rm -rf /'` is one simple command, `echo`,
/// with the argument `rm -rf /`. Commands nested in substitutions, inline
/// scripts and `find -exec` are parsed too.
///
/// # Errors
///
/// [`ParseError`] when the line is not valid shell, is longer than
/// [`MAX_COMMAND_LEN`](crate::MAX_COMMAND_LEN) or nests deeper than [`MAX_NESTING`](crate::MAX_NESTING). This function
/// does not panic.
///
/// # Example
///
/// ```
/// use toolgate_shell::parse_command;
///
/// let parsed = parse_command("echo 'rm -rf /' | tee out.txt")?;
/// let [echo, tee] = parsed.simple_commands() else { panic!() };
/// assert_eq!(echo.args()[0].text(), "rm -rf /");
/// assert_eq!(echo.context().piped_into.as_deref(), Some("tee"));
/// assert_eq!(tee.program(), "tee");
/// # Ok::<(), toolgate_shell::ParseError>(())
/// ```
pub fn parse_command(cmd: &str) -> Result<ParsedCommand, ParseError> {
    let mut builder = Builder {
        out: Vec::new(),
        features: ShellFeatures::default(),
        pipelines: 0,
        opts: ParserOptions::default(),
    };
    builder.source(cmd, &CommandContext::default())?;
    // No program can be given a NUL byte (argv holds C strings): what a line
    // with one would run is not what it says.
    if cmd.contains('\0') {
        return Err(ParseError::Unsupported("a NUL byte"));
    }
    let recursive = forks::mark_recursion(&mut builder.out);
    Ok(ParsedCommand {
        commands: builder.out,
        features: builder.features,
        recursive,
    })
}

/// Runs a parser call, turning a panic into [`ParseError::ParserFailed`].
///
/// brush-parser is fuzzed by us and by its authors, but a panic in a
/// security check must never become a crash or an allow: it becomes
/// "unparseable", which is `dangerous`. (With `panic = "abort"` this cannot
/// catch anything; the fuzz target is what keeps that case away.)
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, ParseError> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|_| ParseError::ParserFailed)
}

struct Builder {
    out: Vec<SimpleCommand>,
    features: ShellFeatures,
    pipelines: usize,
    opts: ParserOptions,
}

impl Builder {
    /// Parses `src` and adds its commands with the context `ctx`.
    fn source(&mut self, src: &str, ctx: &CommandContext) -> Result<(), ParseError> {
        if ctx.depth > MAX_SCRIPT_DEPTH {
            return Err(ParseError::TooDeep {
                max: MAX_SCRIPT_DEPTH,
            });
        }
        check_limits(src)?;
        let opts = &self.opts;
        let program = guarded(|| {
            brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), opts).parse_program()
        })?
        .map_err(|err| ParseError::Syntax(Box::new(err)))?;
        if ctx.depth == 0 && program.complete_commands.len() > 1 {
            self.features.newline = true;
        }
        for list in &program.complete_commands {
            self.compound_list(list, src, ctx)?;
        }
        Ok(())
    }

    fn nested(
        &mut self,
        nested: Vec<Nested>,
        ctx: &CommandContext,
        parent: usize,
    ) -> Result<(), ParseError> {
        for n in nested {
            if n.origin == Origin::CommandSubstitution {
                self.features.command_substitution = true;
            }
            let child = child_context(ctx, n.origin, parent);
            self.source(&n.source, &child)?;
        }
        Ok(())
    }

    fn compound_list(
        &mut self,
        list: &ast::CompoundList,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        if list.0.len() > 1 {
            self.features.sequence = true;
        }
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            if matches!(separator, ast::SeparatorOperator::Async) {
                self.features.background = true;
                let mut bg = ctx.clone();
                bg.background = true;
                bg.background_repeats |= ctx.in_loop;
                self.and_or(and_or, src, &bg)?;
            } else {
                self.and_or(and_or, src, ctx)?;
            }
        }
        Ok(())
    }

    fn and_or(
        &mut self,
        list: &ast::AndOrList,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        self.pipeline(&list.first, src, ctx)?;
        for next in &list.additional {
            let pipeline = match next {
                ast::AndOr::And(p) => {
                    self.features.and_list = true;
                    p
                }
                ast::AndOr::Or(p) => {
                    self.features.or_list = true;
                    p
                }
            };
            self.pipeline(pipeline, src, ctx)?;
        }
        Ok(())
    }

    fn pipeline(
        &mut self,
        pipeline: &ast::Pipeline,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        let len = pipeline.seq.len();
        if len < 2 {
            for command in &pipeline.seq {
                self.command(command, src, ctx)?;
            }
            return Ok(());
        }
        self.features.pipeline = true;
        let id = self.pipelines;
        self.pipelines += 1;
        let start = self.out.len();
        for (index, command) in pipeline.seq.iter().enumerate() {
            let mut stage = ctx.clone();
            stage.pipeline = Some(PipelineSlot { id, index, len });
            self.command(command, src, &stage)?;
        }
        // Each stage's output goes to the first program of the next stage.
        let mut firsts: Vec<Option<String>> = vec![None; len];
        for command in self.out.iter().skip(start) {
            if let Some(slot) = command.context.pipeline.filter(|s| s.id == id)
                && let Some(first @ None) = firsts.get_mut(slot.index)
                && command.kind == Kind::Simple
                && !command.program().is_empty()
            {
                *first = Some(command.program_name().to_owned());
            }
        }
        for command in self.out.iter_mut().skip(start) {
            if let Some(slot) = command.context.pipeline.filter(|s| s.id == id) {
                command.context.piped_into = firsts.get(slot.index + 1).cloned().flatten();
            }
        }
        Ok(())
    }

    fn command(
        &mut self,
        command: &ast::Command,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, src, ctx),
            ast::Command::Compound(compound, redirects) => {
                if feeds_stdin(redirects.as_ref()) {
                    let mut inner = ctx.clone();
                    inner.stdin_redirected = true;
                    self.compound(compound, src, &inner)?;
                } else {
                    self.compound(compound, src, ctx)?;
                }
                self.redirect_list(redirects.as_ref(), src, ctx)
            }
            ast::Command::Function(function) => {
                self.features.function_definition = true;
                let mut body_ctx = ctx.clone();
                body_ctx.function = Some(function.fname.value.clone());
                // The definition itself runs nothing in the background or in
                // a pipeline; its body runs when called.
                body_ctx.pipeline = None;
                body_ctx.background = false;
                body_ctx.background_repeats = false;
                body_ctx.stdin_redirected |= feeds_stdin(function.body.1.as_ref());
                self.compound(&function.body.0, src, &body_ctx)?;
                self.redirect_list(function.body.1.as_ref(), src, &body_ctx)
            }
            ast::Command::ExtendedTest(test, redirects) => {
                let idx = self.reserve();
                let mut words = vec![Word::literal("[[")];
                self.test_words(&test.expr, ctx, idx, &mut words)?;
                words.push(Word::literal("]]"));
                let redirections = match redirects {
                    Some(list) => self.redirections(&list.0, src, ctx, idx)?,
                    None => Vec::new(),
                };
                self.fill(
                    idx,
                    SimpleCommand::keyword(words, redirections, ctx.clone()),
                );
                Ok(())
            }
        }
    }

    fn test_words(
        &mut self,
        expr: &ast::ExtendedTestExpr,
        ctx: &CommandContext,
        idx: usize,
        out: &mut Vec<Word>,
    ) -> Result<(), ParseError> {
        match expr {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test_words(a, ctx, idx, out)?;
                self.test_words(b, ctx, idx, out)
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.test_words(a, ctx, idx, out)
            }
            ast::ExtendedTestExpr::UnaryTest(predicate, w) => {
                let word = self.word(&w.value, ctx, idx)?;
                // `-v a[i]` evaluates the subscript.
                let evaluates = matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                ) && word
                    .text()
                    .split_once('[')
                    .is_some_and(|(_, sub)| words::refers_to_variable(sub));
                out.push(if evaluates {
                    word.with_arithmetic()
                } else {
                    word
                });
                Ok(())
            }
            ast::ExtendedTestExpr::BinaryTest(predicate, a, b) => {
                // `-eq`, `-lt`, …: both sides are arithmetic expressions.
                let arithmetic = matches!(
                    predicate,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                );
                for side in [a, b] {
                    let word = self.word(&side.value, ctx, idx)?;
                    out.push(if arithmetic && words::refers_to_variable(word.text()) {
                        word.with_arithmetic()
                    } else {
                        word
                    });
                }
                Ok(())
            }
        }
    }

    fn compound(
        &mut self,
        compound: &ast::CompoundCommand,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        match compound {
            ast::CompoundCommand::Arithmetic(arith) => {
                let raw = format!("(({}))", arith.expr.value);
                self.keyword_words(vec![arith_word(&raw)], ctx);
                Ok(())
            }
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                self.features.compound = true;
                let parts = [&clause.initializer, &clause.condition, &clause.updater];
                let words = parts
                    .iter()
                    .filter_map(|p| p.as_ref())
                    .map(|e| arith_word(&e.value))
                    .collect::<Vec<_>>();
                let mut all = vec![Word::literal("for")];
                all.extend(words);
                self.keyword_words(all, ctx);
                self.compound_list(&clause.body.list, src, &looping(ctx))
            }
            ast::CompoundCommand::BraceGroup(group) => {
                self.features.brace_group = true;
                self.compound_list(&group.list, src, ctx)
            }
            ast::CompoundCommand::Subshell(sub) => {
                self.features.subshell = true;
                let mut inner = ctx.clone();
                inner.in_subshell = true;
                self.compound_list(&sub.list, src, &inner)
            }
            ast::CompoundCommand::ForClause(clause) => {
                self.features.compound = true;
                let idx = self.reserve();
                let mut words = vec![Word::literal("for"), Word::literal(&clause.variable_name)];
                if let Some(values) = &clause.values {
                    words.push(Word::literal("in"));
                    for value in values {
                        words.push(self.word(&value.value, ctx, idx)?);
                    }
                }
                self.fill(idx, SimpleCommand::keyword(words, Vec::new(), ctx.clone()));
                self.compound_list(&clause.body.list, src, &looping(ctx))
            }
            ast::CompoundCommand::CaseClause(clause) => {
                self.features.compound = true;
                let idx = self.reserve();
                let mut words = vec![
                    Word::literal("case"),
                    self.word(&clause.value.value, ctx, idx)?,
                ];
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        words.push(self.word(&pattern.value, ctx, idx)?);
                    }
                }
                self.fill(idx, SimpleCommand::keyword(words, Vec::new(), ctx.clone()));
                for item in &clause.cases {
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, src, ctx)?;
                    }
                }
                Ok(())
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.features.compound = true;
                self.compound_list(&clause.condition, src, ctx)?;
                self.compound_list(&clause.then, src, ctx)?;
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.compound_list(condition, src, ctx)?;
                    }
                    self.compound_list(&branch.body, src, ctx)?;
                }
                Ok(())
            }
            ast::CompoundCommand::WhileClause(clause)
            | ast::CompoundCommand::UntilClause(clause) => {
                self.features.compound = true;
                // The condition runs before every pass, as the body does.
                let inner = looping(ctx);
                self.compound_list(&clause.0, src, &inner)?;
                self.compound_list(&clause.1.list, src, &inner)
            }
            ast::CompoundCommand::Coprocess(coproc) => {
                self.features.background = true;
                let mut bg = ctx.clone();
                bg.background = true;
                bg.background_repeats |= ctx.in_loop;
                self.command(&coproc.body, src, &bg)
            }
        }
    }

    fn keyword_words(&mut self, words: Vec<Word>, ctx: &CommandContext) {
        self.out
            .push(SimpleCommand::keyword(words, Vec::new(), ctx.clone()));
    }

    fn redirect_list(
        &mut self,
        list: Option<&ast::RedirectList>,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        let Some(list) = list else { return Ok(()) };
        if list.0.is_empty() {
            return Ok(());
        }
        let idx = self.reserve();
        let redirections = self.redirections(&list.0, src, ctx, idx)?;
        self.fill(
            idx,
            SimpleCommand::keyword(Vec::new(), redirections, ctx.clone()),
        );
        Ok(())
    }

    /// Reserves the slot of a command, so commands nested in its words can
    /// name it as their parent.
    fn reserve(&mut self) -> usize {
        self.out.push(SimpleCommand::default());
        self.out.len() - 1
    }

    fn fill(&mut self, idx: usize, command: SimpleCommand) {
        if let Some(slot) = self.out.get_mut(idx) {
            *slot = command;
        }
    }

    fn word(&mut self, raw: &str, ctx: &CommandContext, parent: usize) -> Result<Word, ParseError> {
        let (word, nested) = words::convert(raw, &self.opts)?;
        self.nested(nested, ctx, parent)?;
        Ok(word)
    }

    /// Parses the scripts a command runs from its arguments: `sh -c SCRIPT`,
    /// `eval ARGS`, `find … -exec CMD ;`.
    fn inline(
        &mut self,
        command: &mut SimpleCommand,
        ctx: &CommandContext,
        idx: usize,
    ) -> Result<(), ParseError> {
        let name = command.program_name();
        if name == "find" {
            let execs = find_exec_commands(command.args());
            for words in execs {
                // `find -exec` runs its command for every file.
                let mut child = child_context(ctx, Origin::FindExec, idx);
                child.in_loop = true;
                // `find -exec find -exec …` nests: the depth bounds the
                // recursion (each level is one deeper).
                if child.depth > MAX_SCRIPT_DEPTH {
                    return Err(ParseError::TooDeep {
                        max: MAX_SCRIPT_DEPTH,
                    });
                }
                let mut nested = SimpleCommand::new(words, Vec::new(), Vec::new(), child.clone());
                self.inline(&mut nested, &child, self.out.len())?;
                self.out.push(nested);
            }
            return Ok(());
        }
        let script = if let Some(word) = command.wrapper_script.clone() {
            word
        } else if SHELLS.contains(&name) {
            match shell_script_arg(command.args()) {
                Some(word) => word.clone(),
                None => return Ok(()),
            }
        } else if name == "eval" {
            if command.args().is_empty() {
                return Ok(());
            }
            let text = command
                .args()
                .iter()
                .map(Word::text)
                .collect::<Vec<_>>()
                .join(" ");
            if command.args().iter().all(Word::is_literal) {
                Word::literal(&text)
            } else {
                Word::process_substitution(text)
            }
        } else {
            return Ok(());
        };
        // `xargs -I{} sh -c 'echo {}'` and `find -exec sh -c 'echo {}' \;`
        // paste input (file names, lines) into the script: code injection.
        let pasted = command
            .xargs_replace
            .as_deref()
            .or((command.context().origin == Origin::FindExec).then_some("{}"))
            .filter(|r| !r.is_empty() && script.text().contains(r));
        if let Some(r) = pasted {
            command.script = Script::Opaque(format!(
                "`{name}` runs a script built at run time from its input (`{r}`)"
            ));
            return Ok(());
        }
        if !script.is_literal() {
            command.script = Script::Opaque(format!(
                "`{name}` runs a script only known at run time (`{}`)",
                script.raw()
            ));
            return Ok(());
        }
        self.features.inline_script = true;
        let mut child = child_context(ctx, Origin::InlineScript, idx);
        // `xargs sh -c …` and `find -exec sh -c …` run the script for every
        // input; `watch` runs it every few seconds.
        child.in_loop |= command.context().in_loop
            || command.wrappers().iter().any(|w| w == "xargs")
            || name == "watch";
        let before = self.out.len();
        match self.source(script.text(), &child) {
            Ok(()) => command.script = Script::Parsed,
            Err(err) => {
                self.out.truncate(before);
                command.script = Script::Opaque(format!(
                    "the script given to `{name}` could not be analysed ({})",
                    toolgate_core::error_chain(&err)
                ));
            }
        }
        Ok(())
    }
}

/// Whether a compound command's redirections give it a standard input of
/// its own: `< file`, `<> file`, `<&fd`, a here-document or a here-string.
fn feeds_stdin(list: Option<&ast::RedirectList>) -> bool {
    let stdin = |fd: &Option<i32>| fd.is_none_or(|fd| fd == 0);
    list.is_some_and(|list| {
        list.0.iter().any(|r| match r {
            ast::IoRedirect::File(fd, kind, _) => {
                stdin(fd)
                    && matches!(
                        kind,
                        ast::IoFileRedirectKind::Read
                            | ast::IoFileRedirectKind::ReadAndWrite
                            | ast::IoFileRedirectKind::DuplicateInput
                    )
            }
            ast::IoRedirect::HereDocument(fd, _) | ast::IoRedirect::HereString(fd, _) => stdin(fd),
            ast::IoRedirect::OutputAndError(..) => false,
        })
    })
}

/// A word for arithmetic text: its value is computed at run time, a
/// substitution inside it runs a command, and a variable named in it has
/// its value evaluated as arithmetic (see [`Word::evaluates_variables`]).
fn arith_word(raw: &str) -> Word {
    let word = if raw.contains("$(") || raw.contains('`') {
        Word::process_substitution(raw.to_owned())
    } else {
        Word::literal(raw).with_expansion()
    };
    if words::refers_to_variable(raw) {
        word.with_arithmetic()
    } else {
        word
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_limit_is_enforced_before_parsing() {
        let deep = format!("{}ls{}", "{ ".repeat(40), "; }".repeat(40));
        assert!(matches!(
            parse_command(&deep),
            Err(ParseError::TooDeep { .. })
        ));
        let ok = format!("{}ls{}", "( ".repeat(10), " )".repeat(10));
        assert!(parse_command(&ok).is_ok());
    }

    #[test]
    fn shell_script_argument_is_found() {
        let words = |s: &str| s.split(' ').map(Word::literal).collect::<Vec<_>>();
        let cases: &[(&str, Option<&str>)] = &[
            ("-c ls", Some("ls")),
            ("-lc ls", Some("ls")),
            ("-e -c ls", Some("ls")),
            ("-o pipefail -c ls", Some("ls")),
            ("script.sh", None),
            ("-x script.sh", None),
        ];
        for (args, want) in cases {
            let args = words(args);
            assert_eq!(shell_script_arg(&args).map(Word::text), *want, "{args:?}");
        }
    }
}
