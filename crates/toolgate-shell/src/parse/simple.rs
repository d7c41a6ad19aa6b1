//! A simple command as the parser flattens it: its words, its variable
//! assignments, the process substitutions in its words, and its
//! redirections.

use brush_parser::ast;

use super::Builder;
use super::context::child_context;
use super::error::ParseError;
use crate::model::{CommandContext, Origin, Redirection, RedirectionKind, SimpleCommand};
use crate::words::{self, Word};

impl Builder {
    pub(super) fn simple(
        &mut self,
        simple: &ast::SimpleCommand,
        src: &str,
        ctx: &CommandContext,
    ) -> Result<(), ParseError> {
        let idx = self.reserve();
        let mut argv = Vec::new();
        let mut assignments = Vec::new();
        let mut redirections = Vec::new();
        let prefix = simple.prefix.iter().flat_map(|p| p.0.iter());
        for item in prefix {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    assignments.push(self.assignment(assignment, word, ctx, idx)?);
                }
                other => self.item(other, src, ctx, idx, &mut argv, &mut redirections)?,
            }
        }
        if let Some(word) = &simple.word_or_name {
            argv.push(self.word(&word.value, ctx, idx)?);
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                // `export A=1`, `declare -x B=$(id)`: arguments of the builtin.
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    argv.push(self.assignment(assignment, word, ctx, idx)?);
                }
                other => self.item(other, src, ctx, idx, &mut argv, &mut redirections)?,
            }
        }
        let mut command = SimpleCommand::new(argv, assignments, redirections, ctx.clone());
        self.inline(&mut command, ctx, idx)?;
        self.fill(idx, command);
        Ok(())
    }

    pub(super) fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        src: &str,
        ctx: &CommandContext,
        idx: usize,
        argv: &mut Vec<Word>,
        redirections: &mut Vec<Redirection>,
    ) -> Result<(), ParseError> {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                redirections.push(self.redirection(r, src, ctx, idx)?);
            }
            ast::CommandPrefixOrSuffixItem::Word(w) => argv.push(self.word(&w.value, ctx, idx)?),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                argv.push(self.assignment(a, w, ctx, idx)?);
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                argv.push(self.process_substitution(kind, sub, src, ctx, idx)?);
            }
        }
        Ok(())
    }

    pub(super) fn assignment(
        &mut self,
        assignment: &ast::Assignment,
        word: &ast::Word,
        ctx: &CommandContext,
        idx: usize,
    ) -> Result<Word, ParseError> {
        // `a[i]=1`: the subscript of an indexed array is arithmetic.
        let subscript = match &assignment.name {
            ast::AssignmentName::ArrayElementName(_, index) => words::refers_to_variable(index),
            ast::AssignmentName::VariableName(_) => false,
        };
        let whole = match &assignment.value {
            ast::AssignmentValue::Scalar(_) => self.word(&word.value, ctx, idx)?,
            ast::AssignmentValue::Array(items) => {
                // `a=(x $(y))`: check each element, keep the whole as one word.
                let mut any_substitution = false;
                let mut any_expansion = false;
                let mut any_arithmetic = false;
                for (key, value) in items {
                    for w in key.iter().chain(std::iter::once(value)) {
                        let converted = self.word(&w.value, ctx, idx)?;
                        any_substitution |= converted.has_substitution();
                        any_expansion |= converted.has_expansion();
                        any_arithmetic |= converted.evaluates_variables();
                    }
                    // `a=([i]=x)`: so is a key.
                    any_arithmetic |= key
                        .as_ref()
                        .is_some_and(|k| words::refers_to_variable(&k.value));
                }
                let mut whole = Word::literal(&word.value);
                if any_substitution {
                    whole = Word::process_substitution(word.value.clone());
                } else if any_expansion {
                    whole = whole.with_expansion();
                }
                if any_arithmetic {
                    whole = whole.with_arithmetic();
                }
                whole
            }
        };
        Ok(if subscript {
            whole.with_arithmetic()
        } else {
            whole
        })
    }

    pub(super) fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        sub: &ast::SubshellCommand,
        src: &str,
        ctx: &CommandContext,
        parent: usize,
    ) -> Result<Word, ParseError> {
        self.features.process_substitution = true;
        let operator = match kind {
            ast::ProcessSubstitutionKind::Read => "<",
            ast::ProcessSubstitutionKind::Write => ">",
        };
        let body = src
            .get(sub.loc.start.index..sub.loc.end.index)
            .unwrap_or("(…)");
        let raw = if body.starts_with('(') {
            format!("{operator}{body}")
        } else {
            format!("{operator}({body})")
        };
        let mut child = child_context(ctx, Origin::ProcessSubstitution, parent);
        // `>(sh)` reads what its parent writes: its input is fed to it, as
        // a pipe would feed it.
        child.stdin_redirected = matches!(kind, ast::ProcessSubstitutionKind::Write);
        self.compound_list(&sub.list, src, &child)?;
        Ok(Word::process_substitution(raw))
    }

    pub(super) fn redirections(
        &mut self,
        list: &[ast::IoRedirect],
        src: &str,
        ctx: &CommandContext,
        idx: usize,
    ) -> Result<Vec<Redirection>, ParseError> {
        list.iter()
            .map(|r| self.redirection(r, src, ctx, idx))
            .collect()
    }

    pub(super) fn redirection(
        &mut self,
        redirect: &ast::IoRedirect,
        src: &str,
        ctx: &CommandContext,
        idx: usize,
    ) -> Result<Redirection, ParseError> {
        Ok(match redirect {
            ast::IoRedirect::File(fd, kind, target) => {
                let kind = match kind {
                    ast::IoFileRedirectKind::Read => RedirectionKind::Input,
                    ast::IoFileRedirectKind::Write => RedirectionKind::Output,
                    ast::IoFileRedirectKind::Append => RedirectionKind::Append,
                    ast::IoFileRedirectKind::ReadAndWrite => RedirectionKind::ReadWrite,
                    ast::IoFileRedirectKind::Clobber => RedirectionKind::Clobber,
                    ast::IoFileRedirectKind::DuplicateInput => RedirectionKind::DuplicateInput,
                    ast::IoFileRedirectKind::DuplicateOutput => RedirectionKind::DuplicateOutput,
                };
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w)
                    | ast::IoFileRedirectTarget::Duplicate(w) => self.word(&w.value, ctx, idx)?,
                    ast::IoFileRedirectTarget::Fd(fd) => Word::literal(&fd.to_string()),
                    ast::IoFileRedirectTarget::ProcessSubstitution(kind, sub) => {
                        self.process_substitution(kind, sub, src, ctx, idx)?
                    }
                };
                Redirection {
                    fd: *fd,
                    kind,
                    target,
                }
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                self.features.heredoc = true;
                let (target, nested) =
                    words::convert_heredoc(&doc.doc.value, doc.requires_expansion, &self.opts)?;
                self.nested(nested, ctx, idx)?;
                Redirection {
                    fd: *fd,
                    kind: RedirectionKind::HereDocument,
                    target,
                }
            }
            ast::IoRedirect::HereString(fd, w) => {
                self.features.here_string = true;
                Redirection {
                    fd: *fd,
                    kind: RedirectionKind::HereString,
                    target: self.word(&w.value, ctx, idx)?,
                }
            }
            ast::IoRedirect::OutputAndError(w, append) => Redirection {
                fd: None,
                kind: if *append {
                    RedirectionKind::AppendOutputAndError
                } else {
                    RedirectionKind::OutputAndError
                },
                target: self.word(&w.value, ctx, idx)?,
            },
        })
    }
}
