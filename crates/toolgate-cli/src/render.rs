//! The one error renderer, and exit codes.
//!
//! ```text
//! error: invalid configuration
//!   Caused by: `confirmation.mod`: unknown key (in /ws/toolgate.yaml, line 2 column 3)
//! hint: expected `mode` here; `toolgate config check` prints every key with its value
//! ```

use std::io::{self, Write};
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};

/// The documented exit codes (DESIGN.md §11, §13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The command did what was asked.
    Success,
    /// The tool call failed (refused, invalid, or the tool reported failure).
    Failure,
    /// Bad usage or configuration: nothing was run.
    Usage,
    /// `run`: the agent stopped before finishing (step budget, interrupt).
    Partial,
    /// `run`/`sessions`: the configuration is invalid.
    Config,
    /// `run`: the model server refused the credentials.
    Auth,
    /// `run`: the time budget ran out.
    Timeout,
    /// `run`: calls the task needed were refused because nobody could be
    /// asked to approve them (no terminal, no approver): the outcome
    /// `blocked`.
    Blocked,
    /// The user aborted at a confirmation prompt.
    Aborted,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(match exit {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage | Exit::Partial => 2,
            Exit::Config => 3,
            Exit::Auth => 4,
            Exit::Timeout => 5,
            Exit::Blocked => 6,
            Exit::Aborted => 130,
        })
    }
}

/// An error that ends the command, with its exit code and an optional hint.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) exit: Exit,
    pub(crate) error: anyhow::Error,
    pub(crate) hint: Option<String>,
}

impl CliError {
    pub(crate) fn new(exit: Exit, error: anyhow::Error) -> Self {
        Self {
            exit,
            error,
            hint: None,
        }
    }

    pub(crate) fn usage(error: anyhow::Error) -> Self {
        Self::new(Exit::Usage, error)
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl From<toolgate_host::HostError> for CliError {
    fn from(error: toolgate_host::HostError) -> Self {
        use toolgate_host::ErrorKind;
        let exit = match error.kind() {
            ErrorKind::Auth => Exit::Auth,
            ErrorKind::Runtime => Exit::Failure,
            // `run` turns usage errors into its configuration exit code.
            _ => Exit::Usage,
        };
        let hint = error.hint();
        let mut cli = Self::new(exit, anyhow::Error::new(error));
        cli.hint = hint;
        cli
    }
}

/// Prints `error: …`, one `Caused by: …` line per cause, then `hint: …`.
/// Every message is neutralised: errors quote tool names, paths and text
/// that models and servers wrote.
pub(crate) fn error(error: &CliError) {
    let color = stderr_color();
    let mut stderr = io::stderr().lock();
    let mut chain = error.error.chain();
    if let Some(top) = chain.next() {
        let _ = writeln!(
            stderr,
            "{}: {}",
            paint(ERROR, "error", color),
            clean(&top.to_string())
        );
    }
    for cause in chain {
        let _ = writeln!(stderr, "  Caused by: {}", clean(&cause.to_string()));
    }
    if let Some(hint) = &error.hint {
        let _ = writeln!(stderr, "{}: {}", paint(HINT, "hint", color), clean(hint));
    }
}

/// Prints `warning: …`, then `hint: …`.
pub(crate) fn warning(message: &str, hint: Option<&str>) {
    let color = stderr_color();
    let mut stderr = io::stderr().lock();
    let _ = writeln!(
        stderr,
        "{}: {}",
        paint(WARNING, "warning", color),
        clean(message)
    );
    if let Some(hint) = hint {
        let _ = writeln!(stderr, "{}: {}", paint(HINT, "hint", color), clean(hint));
    }
}

/// Prints a failed tool call's error.
pub(crate) fn tool_error(message: &str) {
    let _ = writeln!(
        io::stderr().lock(),
        "{}: {}",
        paint(ERROR, "error", stderr_color()),
        clean(message)
    );
}

/// Prints a note for people (never data), neutralised.
pub(crate) fn note(message: &str) {
    let _ = writeln!(io::stderr().lock(), "{}", clean(message));
}

/// Prints a note made only of toolgate's own words and values, as it is:
/// the one place a secret is shown on purpose (the web UI's sign-in URL,
/// whose token the person must open).
pub(crate) fn note_own(message: &str) {
    let _ = writeln!(io::stderr().lock(), "{message}");
}

/// `text` for a person's terminal: secrets redacted
/// ([`toolgate_core::redact`]), then neutralised
/// ([`toolgate_core::neutralize`]).
pub(crate) fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    match toolgate_core::redact(text) {
        std::borrow::Cow::Borrowed(text) => toolgate_core::neutralize(text),
        std::borrow::Cow::Owned(text) => {
            std::borrow::Cow::Owned(toolgate_core::neutralize(&text).into_owned())
        }
    }
}

/// `--color`: when toolgate's output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (<https://no-color.org>).
    #[default]
    Auto,
    /// Always, even into a pipe or a file.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// The choice `--color` makes in `args`, before clap has parsed them
    /// (so that clap's own help and errors follow it too); the last one
    /// wins, as clap's would.
    pub(crate) fn from_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Self {
        let mut choice = None;
        let mut next_is_value = false;
        for arg in args {
            let Some(arg) = arg.to_str().map(str::to_owned) else {
                next_is_value = false;
                continue;
            };
            if arg == "--" {
                break;
            }
            let value = if next_is_value {
                Some(arg.as_str())
            } else {
                arg.strip_prefix("--color=")
            };
            next_is_value = arg == "--color";
            if let Some(value) = value {
                choice = match value {
                    "always" => Some(Self::Always),
                    "never" => Some(Self::Never),
                    "auto" => Some(Self::Auto),
                    _ => choice,
                };
            }
        }
        choice.unwrap_or_default()
    }

    /// Makes this the choice of every line the binary writes, clap's
    /// included.
    pub(crate) fn install(self) {
        let _ = COLOR.set(self);
        anstream::ColorChoice::write_global(match self {
            Self::Auto if no_color() => anstream::ColorChoice::Never,
            Self::Auto => anstream::ColorChoice::Auto,
            Self::Always => anstream::ColorChoice::Always,
            Self::Never => anstream::ColorChoice::Never,
        });
    }

    fn colors(self, terminal: bool) -> bool {
        match self {
            Self::Auto => terminal && !no_color(),
            Self::Always => true,
            Self::Never => false,
        }
    }
}

static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// `NO_COLOR` is set to something.
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether what goes to stderr is coloured (`--color`, `NO_COLOR`, a
/// terminal).
pub(crate) fn stderr_color() -> bool {
    use std::io::IsTerminal;
    COLOR
        .get()
        .copied()
        .unwrap_or_default()
        .colors(io::stderr().is_terminal())
}

/// Whether what goes to stdout is coloured (`--color`, `NO_COLOR`, a
/// terminal).
pub(crate) fn stdout_color() -> bool {
    use std::io::IsTerminal;
    COLOR
        .get()
        .copied()
        .unwrap_or_default()
        .colors(io::stdout().is_terminal())
}

/// The style of a command class: `safe` green, `dev` cyan, `dangerous`
/// yellow, `blocked` red; plain for anything else.
pub(crate) fn class_style(label: &str) -> Style {
    let color = match label {
        "safe" => AnsiColor::Green,
        "dev" => AnsiColor::Cyan,
        "dangerous" => AnsiColor::Yellow,
        "blocked" => return BAD.bold(),
        _ => return Style::new(),
    };
    Style::new().fg_color(Some(anstyle::Color::Ansi(color)))
}

/// `✓`, `!` or `✗`, in green, yellow or red when `color`.
pub(crate) fn mark(state: toolgate_host::CheckState, color: bool) -> String {
    use toolgate_host::CheckState;
    match state {
        CheckState::Ok => paint(GOOD, "✓", color),
        CheckState::Warn => paint(WARN_MARK, "!", color),
        CheckState::Fail => paint(BAD, "✗", color),
    }
}

/// The style of `error:`.
pub(crate) const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
/// The style of `warning:`.
pub(crate) const WARNING: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
/// The style of `hint:`.
pub(crate) const HINT: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
/// Success marks.
pub(crate) const GOOD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
/// Failure marks.
pub(crate) const BAD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
/// Warning marks.
pub(crate) const WARN_MARK: Style =
    Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
/// Less important text.
pub(crate) const DIM: Style = Style::new().dimmed();

/// `text` in `style` when `color`, else as it is. `text` must already be
/// clean: styling is the only escape sequence toolgate writes itself.
pub(crate) fn paint(style: Style, text: &str, color: bool) -> String {
    if color && style != Style::new() {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_owned()
    }
}
