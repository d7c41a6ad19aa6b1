//! The parsed form of a command line: what the rest of toolgate sees.
//!
//! These are our own types; nothing of brush-parser's syntax tree leaks out.

use crate::judgement::Judgement;
use crate::words::Word;
use crate::wrappers;

/// Where a simple command sits relative to the command line as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Origin {
    /// In the command line itself, possibly inside a compound command, a
    /// function body or a subshell.
    #[default]
    TopLevel,
    /// Inside a command substitution: `$(…)` or `` `…` ``.
    CommandSubstitution,
    /// Inside a process substitution: `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// Inside a script passed as a string: `sh -c '…'`, `eval '…'`.
    InlineScript,
    /// The command run by `find -exec`, `-execdir`, `-ok` or `-okdir`.
    FindExec,
}

/// A simple command's place in a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PipelineSlot {
    /// Identifies the pipeline within the [`ParsedCommand`].
    pub id: usize,
    /// Position in the pipeline, from 0.
    pub index: usize,
    /// Number of stages in the pipeline (at least 2).
    pub len: usize,
}

/// Where and how a simple command runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent yes/no facts about where a command runs"
)]
#[non_exhaustive]
pub struct CommandContext {
    /// Where the command comes from.
    pub origin: Origin,
    /// How many substitutions and inline scripts enclose it (0 at top level).
    pub depth: usize,
    /// Index (in [`ParsedCommand::simple_commands`]) of the command whose
    /// word, redirection or `-exec` holds this one.
    pub parent: Option<usize>,
    /// Whether it runs in a subshell `( … )`.
    pub in_subshell: bool,
    /// The innermost function whose body holds it.
    pub function: Option<String>,
    /// Whether it runs in the background (`&`, `coproc`).
    pub background: bool,
    /// Whether it is started in the background again and again: its `&`
    /// (or `coproc`) is itself where things run again and again (see
    /// [`in_loop`](Self::in_loop)), as in `while :; do sleep 1 & done`,
    /// unlike `while :; do sleep 1; done &`.
    pub background_repeats: bool,
    /// Whether it may run again and again: in the condition or body of a
    /// `while`, `until` or `for` loop, in the body of a function that calls
    /// itself (directly or through other functions of the line), or in a
    /// script run for every input by `xargs` or every file by
    /// `find -exec`.
    pub in_loop: bool,
    /// Its pipeline stage, when it is part of a pipeline.
    pub pipeline: Option<PipelineSlot>,
    /// The program of the next pipeline stage, which reads its output.
    pub piped_into: Option<String>,
    /// Whether an enclosing compound command feeds its standard input from
    /// a file, here-document or here-string (`{ sh; } < x.sh`,
    /// `while …; done <<EOF`), or an output process substitution from what
    /// its command writes (`tee >(sh)`).
    pub stdin_redirected: bool,
}

/// Which shell features a command line uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "a set of independent yes/no facts"
)]
#[non_exhaustive]
pub struct ShellFeatures {
    /// A pipeline `a | b`.
    pub pipeline: bool,
    /// A sequence `a; b`.
    pub sequence: bool,
    /// An and-list `a && b`.
    pub and_list: bool,
    /// An or-list `a || b`.
    pub or_list: bool,
    /// Commands on more than one line at the top level.
    pub newline: bool,
    /// A background command `a &` or a coprocess.
    pub background: bool,
    /// A subshell `( … )`.
    pub subshell: bool,
    /// A brace group `{ …; }`.
    pub brace_group: bool,
    /// `if`, `for`, `while`, `until`, `case` or an arithmetic `for`.
    pub compound: bool,
    /// A function definition.
    pub function_definition: bool,
    /// A command substitution `$(…)` or `` `…` ``.
    pub command_substitution: bool,
    /// A process substitution `<(…)` or `>(…)`.
    pub process_substitution: bool,
    /// A here-document `<<EOF`.
    pub heredoc: bool,
    /// A here-string `<<<`.
    pub here_string: bool,
    /// A script in a string run by `sh -c` or `eval`.
    pub inline_script: bool,
}

/// The kind of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RedirectionKind {
    /// `< file`
    Input,
    /// `> file`
    Output,
    /// `>> file`
    Append,
    /// `>| file`
    Clobber,
    /// `<> file`
    ReadWrite,
    /// `<&fd`
    DuplicateInput,
    /// `>&fd`, and `>&file` which bash reads as `&> file`.
    DuplicateOutput,
    /// `&> file`
    OutputAndError,
    /// `&>> file`
    AppendOutputAndError,
    /// `<<EOF` (the target is the document's body).
    HereDocument,
    /// `<<< word` (the target is the word).
    HereString,
}

impl RedirectionKind {
    /// The operator as written (`>`, `>>`, `<<<`, …).
    pub fn operator(self) -> &'static str {
        match self {
            Self::Input => "<",
            Self::Output => ">",
            Self::Append => ">>",
            Self::Clobber => ">|",
            Self::ReadWrite => "<>",
            Self::DuplicateInput => "<&",
            Self::DuplicateOutput => ">&",
            Self::OutputAndError => "&>",
            Self::AppendOutputAndError => "&>>",
            Self::HereDocument => "<<",
            Self::HereString => "<<<",
        }
    }
}

/// Targets that writing to is harmless.
const HARMLESS_SINKS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirection {
    pub(crate) fd: Option<i32>,
    pub(crate) kind: RedirectionKind,
    pub(crate) target: Word,
}

impl Redirection {
    /// The file descriptor redirected, when written (`2>`).
    pub fn fd(&self) -> Option<i32> {
        self.fd
    }

    /// The kind of redirection.
    pub fn kind(&self) -> RedirectionKind {
        self.kind
    }

    /// The file (or descriptor, or here-document body, or here-string) the
    /// redirection points at.
    pub fn target(&self) -> &Word {
        &self.target
    }

    /// Whether the target is read as a file (`<`, `<>`), so a policy on
    /// readable paths applies to it.
    pub fn reads_file(&self) -> bool {
        matches!(
            self.kind,
            RedirectionKind::Input | RedirectionKind::ReadWrite
        )
    }

    /// Whether the redirection writes to a file: `>`, `>>`, `>|`, `<>`,
    /// `&>`, `&>>` or `>&file`, unless the target is `/dev/null`,
    /// `/dev/stdout`, `/dev/stderr` or `/dev/tty`. Duplicating a descriptor
    /// (`2>&1`, `>&2`, `>&-`) writes no file.
    pub fn writes_file(&self) -> bool {
        let text = self.target.text();
        match self.kind {
            RedirectionKind::Output
            | RedirectionKind::Append
            | RedirectionKind::Clobber
            | RedirectionKind::ReadWrite
            | RedirectionKind::OutputAndError
            | RedirectionKind::AppendOutputAndError => {
                !(self.target.is_literal() && HARMLESS_SINKS.contains(&text))
            }
            RedirectionKind::DuplicateOutput => {
                let is_fd = self.target.is_literal()
                    && (text == "-"
                        || text
                            .strip_suffix('-')
                            .unwrap_or(text)
                            .chars()
                            .all(|c| c.is_ascii_digit()));
                let harmless = self.target.is_literal() && HARMLESS_SINKS.contains(&text);
                !(is_fd || harmless)
            }
            RedirectionKind::Input
            | RedirectionKind::DuplicateInput
            | RedirectionKind::HereDocument
            | RedirectionKind::HereString => false,
        }
    }
}

/// What a command does with a script given as a string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Script {
    /// The command runs no inline script.
    #[default]
    None,
    /// The script was parsed; its commands follow in the list.
    Parsed,
    /// The script cannot be known or parsed; the reason says why.
    Opaque(String),
}

/// What kind of thing a [`SimpleCommand`] entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// A real simple command.
    #[default]
    Simple,
    /// The words of a compound command (`for x in …`, `case … in`, `[[ … ]]`,
    /// `(( … ))`), or the redirections of one (`{ …; } > f`), kept so every
    /// word and redirection of the line is in the list.
    Keyword,
}

/// One simple command: a program, its arguments and its redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub(crate) words: Vec<Word>,
    pub(crate) start: usize,
    pub(crate) wrappers: Vec<String>,
    pub(crate) wrapper_words: Vec<usize>,
    pub(crate) assignments: Vec<Word>,
    pub(crate) redirections: Vec<Redirection>,
    pub(crate) context: CommandContext,
    /// Why a wrapper could not be seen through (an option toolgate does not
    /// know), if one could not.
    pub wrapper_problem: Option<String>,
    /// The least class the wrappers give the command, and why.
    pub wrapper_floor: Option<Judgement>,
    /// The script a wrapper runs (`flock FILE -c CMD`), if any.
    pub wrapper_script: Option<Word>,
    /// The string `xargs -I` replaces with input in the wrapped command.
    pub xargs_replace: Option<String>,
    /// Why the command starts processes that outlive it, if it does.
    pub forks: Option<String>,
    /// What the command does with a script given as a string.
    pub script: Script,
    /// What kind of thing this entry stands for.
    pub kind: Kind,
}

impl SimpleCommand {
    pub(crate) fn new(
        mut words: Vec<Word>,
        mut assignments: Vec<Word>,
        redirections: Vec<Redirection>,
        context: CommandContext,
    ) -> Self {
        let unwrapped = wrappers::unwrap(&mut words);
        assignments.extend(unwrapped.assignments);
        Self {
            words,
            start: unwrapped.start,
            wrappers: unwrapped.wrappers,
            wrapper_words: unwrapped.wrapper_words,
            assignments,
            redirections,
            context,
            wrapper_problem: unwrapped.problem,
            wrapper_floor: unwrapped.floor,
            wrapper_script: unwrapped.script,
            xargs_replace: unwrapped.replace,
            forks: unwrapped.forks,
            script: Script::None,
            kind: Kind::Simple,
        }
    }

    /// A command from bare words, wrappers seen through (`uv run X`).
    pub fn from_words(words: Vec<Word>) -> Self {
        Self::new(words, Vec::new(), Vec::new(), CommandContext::default())
    }

    pub(crate) fn keyword(
        words: Vec<Word>,
        redirections: Vec<Redirection>,
        context: CommandContext,
    ) -> Self {
        Self {
            words,
            redirections,
            context,
            kind: Kind::Keyword,
            ..Self::default()
        }
    }

    /// The program as written, after assignments and wrappers (`env`,
    /// `xargs`, `nice`, `timeout`, `nohup`, `time`, `command`, `exec`,
    /// `stdbuf`, `setsid`, `ionice`, `chrt`, `taskset`, `flock`, `busybox`,
    /// …) are stripped: `/usr/bin/rm` in `env -i /usr/bin/rm -rf x`.
    /// Empty for a command made only of assignments or redirections.
    ///
    /// For the words of a compound command this is its keyword (`for`,
    /// `case`, `[[`, `((`), or empty for its redirections.
    pub fn program(&self) -> &str {
        self.argv().first().map(Word::text).unwrap_or_default()
    }

    /// The last path component of [`program`](Self::program): `rm` for
    /// `/usr/bin/rm`.
    pub fn program_name(&self) -> &str {
        wrappers::basename(self.program())
    }

    /// The argument vector of the program: `argv[0]` is the program word.
    pub fn argv(&self) -> &[Word] {
        self.words.get(self.start..).unwrap_or_default()
    }

    /// The arguments after the program.
    pub fn args(&self) -> &[Word] {
        self.argv().get(1..).unwrap_or_default()
    }

    /// Every word as written, wrappers and their options included.
    pub fn words(&self) -> &[Word] {
        &self.words
    }

    /// The wrappers seen through, outermost first (`["env", "nice"]`).
    pub fn wrappers(&self) -> &[String] {
        &self.wrappers
    }

    /// The wrappers as written (`/usr/bin/env`), outermost first.
    pub fn wrapper_spellings(&self) -> impl Iterator<Item = &str> {
        self.wrapper_words
            .iter()
            .filter_map(|i| self.words.get(*i).map(Word::text))
    }

    /// Variable assignments applying to the command: the `NAME=value` words
    /// before it and those given to `env`.
    pub fn assignments(&self) -> &[Word] {
        &self.assignments
    }

    /// The command's redirections, in order.
    pub fn redirections(&self) -> &[Redirection] {
        &self.redirections
    }

    /// Where and how the command runs.
    pub fn context(&self) -> &CommandContext {
        &self.context
    }

    /// Whether this entry stands for the words or redirections of a compound
    /// command rather than for a program.
    pub fn is_compound_part(&self) -> bool {
        self.kind == Kind::Keyword
    }

    /// Every word the command has: assignments, argv (with wrappers) and
    /// redirection targets.
    pub fn all_words(&self) -> impl Iterator<Item = &Word> {
        self.assignments
            .iter()
            .chain(&self.words)
            .chain(self.redirections.iter().map(Redirection::target))
    }

    /// A normalised one-line spelling: the argv with quotes removed, joined
    /// by spaces, then each redirection (`rm -rf / > log`). Wrappers and
    /// assignments are left out.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for word in self.argv() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word.text());
        }
        for redirection in &self.redirections {
            if redirection.kind == RedirectionKind::HereDocument {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            if let Some(fd) = redirection.fd {
                out.push_str(&fd.to_string());
            }
            out.push_str(redirection.kind.operator());
            out.push_str(redirection.target.text());
        }
        out
    }
}

/// A command line, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedCommand {
    pub(crate) commands: Vec<SimpleCommand>,
    pub(crate) features: ShellFeatures,
    /// The functions defined in the line that call themselves, directly or
    /// through each other.
    pub recursive: Vec<String>,
}

impl ParsedCommand {
    /// Every simple command of the line, nested ones included (see
    /// [`CommandContext::origin`]), in source order for each level.
    pub fn simple_commands(&self) -> &[SimpleCommand] {
        &self.commands
    }

    /// Which shell features the line uses.
    pub fn features(&self) -> ShellFeatures {
        self.features
    }

    /// The stages of the pipeline `id`, in order (a compound stage may
    /// contribute several commands with the same index).
    pub fn pipeline(&self, id: usize) -> impl Iterator<Item = &SimpleCommand> {
        self.commands
            .iter()
            .filter(move |c| c.context.pipeline.is_some_and(|slot| slot.id == id))
    }

    /// The functions defined in the line that call themselves, directly or
    /// through each other (`f(){ g; }; g(){ f; }`).
    pub fn recursive_functions(&self) -> &[String] {
        &self.recursive
    }

    /// Whether the line runs nothing (empty, blank or only comments).
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}
