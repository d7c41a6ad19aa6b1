//! The configurable guardrails of DESIGN.md §7, as the gate's step 3.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use globset::GlobBuilder;
use regex::RegexSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{
    DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, Effect, Effects, PathPatterns,
    ToolResult, Workspace, WorkspaceError,
};
use toolgate_policy::{
    CodeRule as PolicyCodeRule, CodeRules, EditCount, EditLimits, EditUsage, PathRules,
    Severity as PolicySeverity,
};
use toolgate_sandbox::{Capture, RunOptions, Sandbox, Spawn};

use crate::guards::CommandGuard;
use crate::stages::{CallView, GuardrailBlock, Guardrails};

/// The `guardrails:` configuration section.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct GuardrailsConfig {
    /// Globs of files that may be read but not written, edited or deleted.
    pub protected_files: Vec<String>,
    /// Globs of files that may not be reached at all, added to
    /// [`DEFAULT_SENSITIVE_PATTERNS`].
    pub sensitive_files: Vec<String>,
    /// Regexes over a whole command; a match refuses it.
    pub blocked_commands: Vec<String>,
    /// How many distinct files a session may modify.
    pub max_files_modified: Option<usize>,
    /// How many lines a session may change.
    pub max_lines_changed: Option<usize>,
    /// Regexes over written content.
    pub code_rules: Vec<CodeRule>,
    /// Commands that must pass when the agent says it is done.
    pub quality_gates: Vec<QualityGate>,
}

/// A regex over the content a write would produce.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodeRule {
    /// The rule's name. By default, its pattern.
    #[serde(default)]
    pub name: Option<String>,
    /// The regex.
    pub pattern: String,
    /// `warn` (the default) or `block`.
    #[serde(default, alias = "action")]
    pub severity: Severity,
    /// Globs of the files the rule applies to; empty = all.
    #[serde(default)]
    pub file_patterns: Vec<String>,
    /// What to tell the model.
    #[serde(default)]
    pub message: Option<String>,
}

/// What a matching code rule does.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A note appended to the result; the write happens.
    #[default]
    Warn,
    /// The write is refused; nothing is written.
    Block,
}

/// A command that must pass before the agent may finish.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QualityGate {
    /// The gate's name.
    pub name: String,
    /// A command run by `sh -c`.
    pub command: String,
    /// Whether a failure keeps the agent going. By default, `true`.
    #[serde(default = "yes")]
    pub required: bool,
    /// Seconds before the command is killed. By default, 300.
    #[serde(default)]
    pub timeout: Option<f64>,
}

fn yes() -> bool {
    true
}

/// How a quality gate went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QualityGateReport {
    /// The gate's name.
    pub name: String,
    /// Whether it is required.
    pub required: bool,
    /// Whether it exited 0 in time.
    pub passed: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Whether it was killed for taking too long.
    pub timed_out: bool,
    /// Its stdout and stderr, capped.
    pub output: String,
}

/// Why guardrails cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardrailsError {
    /// A bad regex in `blocked_commands` or `code_rules`.
    #[error("`guardrails.{field}` has an invalid regular expression")]
    Regex {
        /// The field.
        field: &'static str,
        /// The error.
        #[source]
        source: regex::Error,
    },
    /// A bad glob.
    #[error("`guardrails.{field}` has an invalid glob")]
    Glob {
        /// The field.
        field: &'static str,
        /// The error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The sandbox quality gates run in could not be made.
    #[error("the sandbox for quality gates could not be made")]
    Sandbox(#[source] toolgate_sandbox::SandboxError),
    /// A rule set could not be compiled.
    #[error("`guardrails` has an invalid rule")]
    Policy(#[source] Box<toolgate_policy::EffectsPolicyError>),
}

/// Builds a [`GuardrailsEngine`].
#[derive(Debug)]
pub struct GuardrailsEngineBuilder {
    config: GuardrailsConfig,
    root: PathBuf,
    command_guard: Option<CommandGuard>,
    allow_sensitive: bool,
    sandbox: Option<Sandbox>,
    protected: Vec<String>,
    compiled_sensitive: Option<PathPatterns>,
}

impl GuardrailsEngineBuilder {
    /// Also applies the command blocklist and `allowed_only` of a
    /// [`CommandGuard`]. By default, none.
    #[must_use]
    pub fn command_guard(mut self, guard: CommandGuard) -> Self {
        self.command_guard = Some(guard);
        self
    }

    /// Lets sensitive files through (`workspace.allow_sensitive`). By
    /// default, `false`.
    #[must_use]
    pub fn allow_sensitive(mut self, yes: bool) -> Self {
        self.allow_sensitive = yes;
        self
    }

    /// More protected patterns, beside [`DEFAULT_PROTECTED_PATTERNS`] and
    /// `protected_files` (toolgate's own files the front end keeps inside
    /// the workspace). By default, none.
    #[must_use]
    pub fn protected_patterns(mut self, patterns: impl IntoIterator<Item = String>) -> Self {
        self.protected.extend(patterns);
        self
    }

    /// The sandbox quality gates run in (the standard profile). By default,
    /// a sandbox of its own over the workspace root with the default
    /// settings.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The sensitive patterns, compiled already (the host's workspace view
    /// holds them: [`Workspace::sensitive_set`]), used instead of compiling
    /// them at [`build`](Self::build). They must be the same list:
    /// [`DEFAULT_SENSITIVE_PATTERNS`] with `sensitive_files`. By default,
    /// none: the build compiles them.
    #[must_use]
    pub fn compiled_sensitive(mut self, sensitive: PathPatterns) -> Self {
        self.compiled_sensitive = Some(sensitive);
        self
    }

    /// Compiles patterns and regexes.
    pub fn build(self) -> Result<GuardrailsEngine, GuardrailsError> {
        let sandbox = match self.sandbox {
            Some(sandbox) => sandbox,
            None => Sandbox::builder(&self.root)
                .build()
                .map_err(GuardrailsError::Sandbox)?,
        };
        let c = &self.config;
        let glob_error = |field: &'static str| {
            move |e: WorkspaceError| GuardrailsError::Glob {
                field,
                source: Box::new(e),
            }
        };
        let sensitive = match self.compiled_sensitive {
            Some(sensitive) => sensitive,
            None => PathPatterns::new(
                DEFAULT_SENSITIVE_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(c.sensitive_files.iter().cloned()),
            )
            .map_err(glob_error("sensitive_files"))?,
        };
        let protected = PathPatterns::new(
            DEFAULT_PROTECTED_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .chain(c.protected_files.iter().cloned())
                .chain(self.protected.iter().cloned()),
        )
        .map_err(glob_error("protected_files"))?;
        // Resolving paths (where a symlink leads) needs the workspace; it
        // judges nothing itself, so it gets no patterns.
        let workspace = Workspace::builder(&self.root)
            .build()
            .map_err(glob_error("sensitive_files"))?;
        let paths = PathRules::builder(workspace.root())
            .root_alias(&self.root)
            .sensitive(sensitive)
            .protected(protected)
            .allow_sensitive(self.allow_sensitive)
            .build()
            .map_err(|e| GuardrailsError::Policy(Box::new(e)))?;
        let blocked =
            RegexSet::new(&c.blocked_commands).map_err(|source| GuardrailsError::Regex {
                field: "blocked_commands",
                source,
            })?;
        let code = CodeRules::new(c.code_rules.iter().map(|rule| {
            let mut compiled = PolicyCodeRule::new(&rule.pattern)
                .severity(match rule.severity {
                    Severity::Warn => PolicySeverity::Warn,
                    Severity::Block => PolicySeverity::Block,
                })
                .files(rule.file_patterns.iter().cloned());
            if let Some(name) = &rule.name {
                compiled = compiled.name(name);
            }
            if let Some(message) = &rule.message {
                compiled = compiled.message(message);
            }
            compiled
        }))
        .map_err(|e| GuardrailsError::Policy(Box::new(e)))?;
        let limits = EditLimits::new()
            .max_files_modified(c.max_files_modified)
            .max_lines_changed(c.max_lines_changed);
        Ok(GuardrailsEngine {
            paths,
            blocked,
            code,
            limits,
            usage: Mutex::new(EditUsage::new()),
            workspace,
            command_guard: self.command_guard,
            allow_sensitive: self.allow_sensitive,
            config: self.config,
            root: self.root,
            sandbox,
        })
    }
}

/// The guardrails of DESIGN.md §7, plugged into the gate as its
/// [`Guardrails`] step. Every rule reads the call's declared
/// [`Effects`](toolgate_core::Effects), never the tool's name; the rules
/// themselves are the pure functions of `toolgate_policy`
/// ([`PathRules`], [`EditLimits`], [`CodeRules`]).
///
/// # Rules
///
/// Applied in this order; the first refusal wins.
///
/// 1. The [`CommandGuard`], if set (built-in blocklist, `allowed_only`),
///    over every command the call declares.
/// 2. `blocked_commands`: a regex matching anywhere in a declared command
///    (a command line, or text written to a background process) refuses it.
/// 3. Paths ([`PathRules`]): a sensitive path in any effect (read, write,
///    delete, either end of a rename) and in every word of a declared
///    command, unless `workspace.allow_sensitive`; a protected path
///    ([`DEFAULT_PROTECTED_PATTERNS`], `protected_files`) written, deleted
///    or renamed. Paths are judged as written and where they lead (a
///    symlink inside the workspace is followed); a glob in a command is
///    judged by what it expands to.
/// 4. Edit limits ([`EditLimits`]), counted over the engine's lifetime (one
///    session) from the effects of the calls that succeeded: the distinct
///    files written, deleted or renamed (`max_files_modified`) and the
///    lines added and removed (`max_lines_changed`).
/// 5. Code rules ([`CodeRules`]) over the content each write would leave:
///    `block` refuses the call before anything is written (and so does a
///    write whose content cannot be known in advance, where a `block` rule
///    applies); `warn` lets it run and appends a note to its result.
///
/// An opaque call (an MCP tool) passes rules 3 to 5: they cannot see into
/// it. It is sensitive instead (the approver is asked), and the kernel
/// sandbox bounds what an MCP server's process can do.
#[derive(Debug)]
pub struct GuardrailsEngine {
    config: GuardrailsConfig,
    root: PathBuf,
    paths: PathRules,
    blocked: RegexSet,
    code: CodeRules,
    limits: EditLimits,
    usage: Mutex<EditUsage>,
    workspace: Workspace,
    command_guard: Option<CommandGuard>,
    allow_sensitive: bool,
    sandbox: Sandbox,
}

impl GuardrailsEngine {
    /// A builder over `config` for the workspace at `root`.
    pub fn builder(config: GuardrailsConfig, root: impl Into<PathBuf>) -> GuardrailsEngineBuilder {
        GuardrailsEngineBuilder {
            config,
            root: root.into(),
            command_guard: None,
            allow_sensitive: false,
            sandbox: None,
            protected: Vec::new(),
            compiled_sensitive: None,
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &GuardrailsConfig {
        &self.config
    }

    /// Distinct files modified and lines changed so far this session.
    pub fn usage(&self) -> (usize, usize) {
        let usage = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
        (usage.files_modified(), usage.lines_changed())
    }

    /// Runs every quality gate in `cwd`, in order, and reports each. For the
    /// agent loop when the agent says it is done: a failing `required` gate's
    /// output is fed back and the loop goes on.
    pub async fn run_quality_gates(&self, cwd: &Path) -> Vec<QualityGateReport> {
        let mut out = Vec::new();
        for gate in &self.config.quality_gates {
            out.push(run_gate(&self.sandbox, gate, cwd).await);
        }
        out
    }

    /// Where `path` leads inside the workspace (symlinks followed), for the
    /// path rules; `None` outside it.
    fn resolve(&self, path: &str) -> Option<String> {
        let ws = self.workspace.resolve(path).ok()?;
        let physical = self.workspace.physical(&ws)?;
        Some(self.workspace.display(&physical))
    }

    /// Regexes of `blocked_commands` over every declared command.
    fn check_blocked(&self, effects: &Effects) -> Result<(), GuardrailBlock> {
        for effect in effects.list() {
            let Effect::Command { command, .. } = effect else {
                continue;
            };
            if let Some(i) = self.blocked.matches(command).into_iter().next() {
                let pattern = self
                    .config
                    .blocked_commands
                    .get(i)
                    .map_or("", String::as_str);
                return Err(block(format!(
                    "command matches `guardrails.blocked_commands` pattern `{pattern}`"
                )));
            }
        }
        Ok(())
    }
}

fn block(reason: String) -> GuardrailBlock {
    GuardrailBlock { reason }
}

/// The entries of the directory a glob names whose names its last component
/// matches. Globs in directory components are not expanded.
fn expand(root: &Path, pattern: &str) -> Vec<String> {
    let (dir, last) = match pattern.rsplit_once('/') {
        Some((dir, last)) => (dir, last),
        None => ("", pattern),
    };
    let Ok(glob) = GlobBuilder::new(last)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    let base = if dir.is_empty() {
        root.to_path_buf()
    } else if Path::new(dir).is_absolute() {
        PathBuf::from(dir)
    } else {
        root.join(dir)
    };
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| glob.is_match(name))
        .map(|name| {
            if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            }
        })
        .collect()
}

#[async_trait]
impl Guardrails for GuardrailsEngine {
    fn describe(&self) -> Value {
        serde_json::json!({
            "config": self.config,
            "command_guard": self.command_guard.is_some(),
            "allow_sensitive": self.allow_sensitive,
        })
    }

    async fn check(&self, call: &CallView<'_>) -> Result<(), GuardrailBlock> {
        let effects = call.effects;
        if let Some(guard) = &self.command_guard {
            guard.check(call).await?;
        }
        self.check_blocked(effects)?;
        let resolve = |path: &str| self.resolve(path);
        let expand = |word: &str| expand(&self.root, word);
        self.paths
            .check(effects, &resolve, &expand)
            .map_err(|refusal| block(refusal.to_string()))?;
        let count = EditCount::of(effects);
        {
            let usage = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
            self.limits
                .check(&usage, &count)
                .map_err(|refusal| block(refusal.to_string()))?;
        }
        if let Some(broken) = self
            .code
            .check(effects)
            .into_iter()
            .find(|rule| rule.severity() == PolicySeverity::Block)
        {
            return Err(block(format!("{broken}; nothing was written")));
        }
        Ok(())
    }

    async fn notes(&self, call: &CallView<'_>) -> Vec<String> {
        self.code
            .check(call.effects)
            .into_iter()
            .filter(|rule| rule.severity() == PolicySeverity::Warn)
            .map(|rule| format!("[guardrail warning] {rule}"))
            .collect()
    }

    async fn observe(&self, call: &CallView<'_>, result: &ToolResult) {
        if !result.success {
            return;
        }
        let count = EditCount::of(call.effects);
        if count.is_empty() {
            return;
        }
        self.usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(&count);
    }
}

/// Runs one gate like every process toolgate starts: in the sandbox's
/// standard profile, its whole process tree killed at the timeout.
async fn run_gate(sandbox: &Sandbox, gate: &QualityGate, cwd: &Path) -> QualityGateReport {
    let timeout = Duration::from_secs_f64(gate.timeout.unwrap_or(300.0).clamp(0.0, 86_400.0));
    let mut report = QualityGateReport {
        name: gate.name.clone(),
        required: gate.required,
        passed: false,
        exit_code: None,
        timed_out: false,
        output: String::new(),
    };
    let spawn = Spawn::shell(&gate.command).cwd(cwd);
    let options = RunOptions::new(timeout).capture(Capture::Bytes(64 * 1024));
    match sandbox.run(&spawn, &options).await {
        Ok(finished) if finished.timed_out => {
            report.timed_out = true;
            report.output = format!("timed out after {}s", timeout.as_secs_f64());
        }
        Ok(finished) => {
            report.exit_code = finished.exit_code;
            report.passed = finished.exit_code == Some(0);
            let mut text = finished.stdout;
            text.push_str(&finished.stderr);
            report.output = cap(text, 64 * 1024);
        }
        Err(error) => {
            report.output = format!("could not run: {}", toolgate_core::error_chain(&error));
        }
    }
    report
}

fn cap(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[… output truncated]");
    }
    text
}
