//! The configurable guardrails of DESIGN.md §7, as the gate's step 3.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{DEFAULT_SENSITIVE_PATTERNS, ToolResult, Workspace};
use toolgate_policy::command_operands;
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
}

/// Builds a [`GuardrailsEngine`].
#[derive(Debug)]
pub struct GuardrailsEngineBuilder {
    config: GuardrailsConfig,
    root: PathBuf,
    command_guard: Option<CommandGuard>,
    allow_sensitive: bool,
    sandbox: Option<Sandbox>,
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

    /// The sandbox quality gates run in (the standard profile). By default,
    /// a sandbox of its own over the workspace root with the default
    /// settings.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
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
        let sensitive = Workspace::builder(&self.root)
            .sensitive_patterns(
                DEFAULT_SENSITIVE_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(c.sensitive_files.iter().cloned()),
            )
            .build()
            .map_err(|e| GuardrailsError::Glob {
                field: "sensitive_files",
                source: Box::new(e),
            })?;
        let protected = if c.protected_files.is_empty() {
            None
        } else {
            Some(
                Workspace::builder(&self.root)
                    .sensitive_patterns(c.protected_files.iter().cloned())
                    .build()
                    .map_err(|e| GuardrailsError::Glob {
                        field: "protected_files",
                        source: Box::new(e),
                    })?,
            )
        };
        let blocked =
            RegexSet::new(&c.blocked_commands).map_err(|source| GuardrailsError::Regex {
                field: "blocked_commands",
                source,
            })?;
        let mut rules = Vec::new();
        for rule in &c.code_rules {
            let regex = Regex::new(&rule.pattern).map_err(|source| GuardrailsError::Regex {
                field: "code_rules",
                source,
            })?;
            let files = globs(&rule.file_patterns).map_err(|e| GuardrailsError::Glob {
                field: "code_rules",
                source: Box::new(e),
            })?;
            rules.push((rule.clone(), regex, files));
        }
        Ok(GuardrailsEngine {
            sensitive,
            protected,
            blocked,
            rules,
            command_guard: self.command_guard,
            allow_sensitive: self.allow_sensitive,
            counters: Mutex::new(Counters::default()),
            config: self.config,
            root: self.root,
            sandbox,
        })
    }
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>, globset::Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        set.add(GlobBuilder::new(p).literal_separator(true).build()?);
    }
    set.build().map(Some)
}

#[derive(Debug, Default)]
struct Counters {
    files: HashSet<String>,
    lines: usize,
}

/// The guardrails of DESIGN.md §7, plugged into the gate as its
/// [`Guardrails`] step.
///
/// # Rules
///
/// Applied in this order; the first refusal wins.
///
/// 1. The [`CommandGuard`], if set (built-in blocklist, `allowed_only`).
/// 2. `blocked_commands`: a regex matching anywhere in a `run_command`
///    command (or a `process` stdin `input`) refuses it.
/// 3. Sensitive files (unless allowed): the `path` of the file and search
///    tools, the files of a patch, and every operand, redirection target and
///    here-string of a command ([`command_operands`]). A glob operand
///    (`cat .e*`) is expanded against the directory it names. Paths are
///    checked as written and as they resolve, so a symlink to `.env` under
///    another name is refused.
/// 4. Protected files: `write_file`, `edit_file`, `delete_file` and
///    `apply_patch` on one are refused.
/// 5. Edit limits, counted over the engine's lifetime (one session): a write
///    that would take the distinct files modified past `max_files_modified`,
///    or the lines changed past `max_lines_changed`, is refused. Lines are
///    counted as the lines of a `write_file` content, the larger side of an
///    `edit_file` (times the replacements), the `+`/`-` lines of a patch.
/// 6. Code rules, over the content the write would produce (for `edit_file`
///    the whole file after the replacement; for a patch its added lines):
///    `block` refuses the call before anything is written; `warn` lets it
///    run and appends a note to its result.
#[derive(Debug)]
pub struct GuardrailsEngine {
    config: GuardrailsConfig,
    root: PathBuf,
    sensitive: Workspace,
    protected: Option<Workspace>,
    blocked: RegexSet,
    rules: Vec<(CodeRule, Regex, Option<GlobSet>)>,
    command_guard: Option<CommandGuard>,
    allow_sensitive: bool,
    counters: Mutex<Counters>,
    sandbox: Sandbox,
}

const WRITE_TOOLS: &[&str] = &["write_file", "edit_file", "delete_file", "apply_patch"];
const PATH_TOOLS: &[&str] = &[
    "read_file",
    "list_files",
    "search_code",
    "grep",
    "find_files",
];
const COMMAND_TOOLS: &[&str] = &["run_command", "process"];

impl GuardrailsEngine {
    /// A builder over `config` for the workspace at `root`.
    pub fn builder(config: GuardrailsConfig, root: impl Into<PathBuf>) -> GuardrailsEngineBuilder {
        GuardrailsEngineBuilder {
            config,
            root: root.into(),
            command_guard: None,
            allow_sensitive: false,
            sandbox: None,
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &GuardrailsConfig {
        &self.config
    }

    /// Distinct files modified and lines changed so far this session.
    pub fn usage(&self) -> (usize, usize) {
        let c = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        (c.files.len(), c.lines)
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

    /// Refusal of a path by the sensitive patterns, as written and resolved.
    fn sensitive_path(&self, path: &str) -> Option<String> {
        if self.allow_sensitive {
            return None;
        }
        refusal(&self.sensitive, &self.root, path)
    }

    fn protected_path(&self, path: &str) -> Option<String> {
        refusal(self.protected.as_ref()?, &self.root, path)
    }

    fn check_command(&self, command: &str) -> Result<(), GuardrailBlock> {
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
        if self.allow_sensitive {
            return Ok(());
        }
        let words: Vec<(String, bool)> = match command_operands(command) {
            Ok(ops) => ops
                .into_iter()
                .map(|o| (o.text().to_owned(), o.is_glob()))
                .collect(),
            // The parser refused it: split crudely rather than let it by.
            Err(_) => command
                .split(|c: char| c.is_whitespace() || "<>|;&()'\"`".contains(c))
                .filter(|w| !w.is_empty())
                .map(|w| (w.to_owned(), w.contains(['*', '?', '['])))
                .collect(),
        };
        for (word, glob) in words {
            for candidate in candidates(&word) {
                if let Some(pattern) = self.sensitive_path(candidate) {
                    return Err(sensitive_block(candidate, &pattern));
                }
                if glob {
                    for expanded in expand(&self.root, candidate) {
                        if let Some(pattern) = self.sensitive_path(&expanded) {
                            return Err(block(format!(
                                "`{candidate}` can expand to the sensitive file `{expanded}` (pattern `{pattern}`); name the files you need explicitly"
                            )));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// What a write call would change: (files, lines).
    fn write_effect(&self, tool: &str, args: &Value) -> (Vec<String>, usize) {
        let s = |k: &str| args.get(k).and_then(Value::as_str);
        match tool {
            "write_file" => (
                s("path").map(str::to_owned).into_iter().collect(),
                s("content").map_or(0, |c| c.lines().count().max(1)),
            ),
            "edit_file" => {
                let old = s("old_str").map_or(0, |t| t.lines().count().max(1));
                let new = s("new_str").map_or(0, |t| t.lines().count().max(1));
                let times = if args.get("replace_all").and_then(Value::as_bool) == Some(true) {
                    self.read(s("path"))
                        .zip(s("old_str"))
                        .map_or(1, |(text, old)| {
                            if old.is_empty() {
                                1
                            } else {
                                text.matches(old).count().max(1)
                            }
                        })
                } else {
                    1
                };
                (
                    s("path").map(str::to_owned).into_iter().collect(),
                    old.max(new) * times,
                )
            }
            "delete_file" => (s("path").map(str::to_owned).into_iter().collect(), 0),
            "apply_patch" => {
                let patch = s("patch").unwrap_or("");
                let mut files = patch_files(patch);
                if let Some(p) = s("path") {
                    files = vec![p.to_owned()];
                }
                let lines = patch
                    .lines()
                    .filter(|l| {
                        (l.starts_with('+') && !l.starts_with("+++"))
                            || (l.starts_with('-') && !l.starts_with("---"))
                    })
                    .count();
                (files, lines)
            }
            _ => (Vec::new(), 0),
        }
    }

    fn read(&self, path: Option<&str>) -> Option<String> {
        let ws = self.sensitive.resolve(path?).ok()?;
        String::from_utf8(self.sensitive.read(&ws).ok()?).ok()
    }

    /// The content a write would leave, for the code rules: (file, text).
    fn written_content(&self, tool: &str, args: &Value) -> Vec<(String, String)> {
        let s = |k: &str| args.get(k).and_then(Value::as_str);
        let path = s("path").unwrap_or("").to_owned();
        match tool {
            "write_file" => vec![(path, s("content").unwrap_or("").to_owned())],
            "edit_file" => {
                let (old, new) = (s("old_str").unwrap_or(""), s("new_str").unwrap_or(""));
                let all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
                let text = match self.read(Some(&path)) {
                    Some(text) if !old.is_empty() && all => text.replace(old, new),
                    Some(text) if !old.is_empty() => text.replacen(old, new, 1),
                    _ => new.to_owned(),
                };
                vec![(path, text)]
            }
            "apply_patch" => {
                let patch = s("patch").unwrap_or("");
                let mut added = String::new();
                for line in patch
                    .lines()
                    .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                {
                    added.push_str(line.get(1..).unwrap_or(""));
                    added.push('\n');
                }
                let files = match s("path") {
                    Some(p) => vec![p.to_owned()],
                    None => patch_files(patch),
                };
                files.into_iter().map(|f| (f, added.clone())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The code rules `(name, message, severity)` a write breaks.
    fn broken_rules(&self, tool: &str, args: &Value) -> Vec<(String, Severity)> {
        let mut out = Vec::new();
        for (file, text) in self.written_content(tool, args) {
            for (rule, regex, files) in &self.rules {
                if files
                    .as_ref()
                    .is_some_and(|set| !set.is_match(file.trim_start_matches("./")))
                {
                    continue;
                }
                if regex.is_match(&text) {
                    let name = rule.name.as_deref().unwrap_or(&rule.pattern);
                    let message = rule.message.as_deref().unwrap_or("the content matches it");
                    out.push((
                        format!("code rule `{name}` ({file}): {message}"),
                        rule.severity,
                    ));
                }
            }
        }
        out
    }
}

fn block(reason: String) -> GuardrailBlock {
    GuardrailBlock { reason }
}

fn sensitive_block(path: &str, pattern: &str) -> GuardrailBlock {
    block(format!(
        "`{path}` is a sensitive file (pattern `{pattern}`); it may not be read, searched or written. To allow it, set `workspace.allow_sensitive: true`"
    ))
}

/// The pattern of `set` that refuses `path`, as written or resolved.
fn refusal(set: &Workspace, root: &Path, path: &str) -> Option<String> {
    let trimmed = path.trim_start_matches("./");
    if trimmed.is_empty() {
        return None;
    }
    let p = Path::new(trimmed);
    let rel: PathBuf = if p.is_absolute() {
        match p.strip_prefix(root) {
            Ok(rel) => rel.to_path_buf(),
            // Outside the workspace: judge the path by its name and ancestors.
            Err(_) => {
                return p
                    .ancestors()
                    .filter_map(Path::file_name)
                    .find_map(|name| set.sensitive_refusal(Path::new(name)))
                    .or_else(|| {
                        let s = p.to_string_lossy();
                        let tail = s.trim_start_matches('/');
                        set.sensitive_refusal(Path::new(tail))
                    })
                    .map(str::to_owned);
            }
        }
    } else {
        p.to_path_buf()
    };
    if let Some(pattern) = set.sensitive_refusal(&rel) {
        return Some(pattern.to_owned());
    }
    let ws = set.resolve(&rel.to_string_lossy()).ok()?;
    set.resolves_sensitive(&ws).map(str::to_owned)
}

/// The ways a word can name a path: itself, and the value of `--opt=VALUE`.
fn candidates(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    if word.starts_with('-')
        && let Some((_, value)) = word.split_once('=')
    {
        out.push(value);
    }
    out
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

/// The files a patch names in its headers.
fn patch_files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let path = [
            "+++ ",
            "--- ",
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix));
        let Some(path) = path else { continue };
        let path = path.split('\t').next().unwrap_or("").trim();
        if path == "/dev/null" || path.is_empty() {
            continue;
        }
        let path = path
            .strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path);
        if !out.iter().any(|p| p == path) {
            out.push(path.to_owned());
        }
    }
    out
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
        let tool = call.tool.name();
        let args = call.args;
        if let Some(guard) = &self.command_guard {
            guard.check(call).await?;
        }
        if COMMAND_TOOLS.contains(&tool) {
            // `process` writes `input` to a running command's stdin: when
            // that command is a shell, the input is a command too.
            for key in ["command", "input"] {
                if let Some(command) = args.get(key).and_then(Value::as_str) {
                    self.check_command(command)?;
                }
            }
        }
        if PATH_TOOLS.contains(&tool)
            && let Some(path) = args.get("path").and_then(Value::as_str)
            && let Some(pattern) = self.sensitive_path(path)
        {
            return Err(sensitive_block(path, &pattern));
        }
        if !WRITE_TOOLS.contains(&tool) {
            return Ok(());
        }
        let (files, lines) = self.write_effect(tool, args);
        for file in &files {
            if let Some(pattern) = self.sensitive_path(file) {
                return Err(sensitive_block(file, &pattern));
            }
            if let Some(pattern) = self.protected_path(file) {
                return Err(block(format!(
                    "`{file}` is a protected file (pattern `{pattern}` in `guardrails.protected_files`); it may be read but not changed"
                )));
            }
        }
        {
            let counters = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(max) = self.config.max_files_modified {
                let mut all: HashSet<&str> = counters.files.iter().map(String::as_str).collect();
                all.extend(files.iter().map(|f| f.trim_start_matches("./")));
                if all.len() > max {
                    return Err(block(format!(
                        "this session may modify at most {max} files (`guardrails.max_files_modified`) and has modified {}; finish with the files already changed",
                        counters.files.len()
                    )));
                }
            }
            if let Some(max) = self.config.max_lines_changed
                && counters.lines + lines > max
            {
                return Err(block(format!(
                    "this change of {lines} lines would take the session past {max} changed lines (`guardrails.max_lines_changed`; {} so far); make smaller changes",
                    counters.lines
                )));
            }
        }
        if let Some((reason, _)) = self
            .broken_rules(tool, args)
            .into_iter()
            .find(|(_, severity)| *severity == Severity::Block)
        {
            return Err(block(format!("{reason}; nothing was written")));
        }
        Ok(())
    }

    async fn notes(&self, call: &CallView<'_>) -> Vec<String> {
        let tool = call.tool.name();
        if !WRITE_TOOLS.contains(&tool) {
            return Vec::new();
        }
        self.broken_rules(tool, call.args)
            .into_iter()
            .filter(|(_, severity)| *severity == Severity::Warn)
            .map(|(reason, _)| format!("[guardrail warning] {reason}"))
            .collect()
    }

    async fn observe(&self, call: &CallView<'_>, result: &ToolResult) {
        let tool = call.tool.name();
        if !result.success || !WRITE_TOOLS.contains(&tool) {
            return;
        }
        let (files, lines) = self.write_effect(tool, call.args);
        let mut counters = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        counters.files.extend(
            files
                .into_iter()
                .map(|f| f.trim_start_matches("./").to_owned()),
        );
        counters.lines += lines;
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
