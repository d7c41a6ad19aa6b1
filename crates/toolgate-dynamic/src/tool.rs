//! [`DynamicTool`]: an approved dynamic tool, run through the sandbox.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolOrigin,
    ToolResult, error_chain,
};
use toolgate_policy::CommandPolicy;
use toolgate_sandbox::{Capture, Finished, Level, Profile, RunOptions, Sandbox, Spawn};
use toolgate_store::{DynamicToolRecord, DynamicToolStatus, DynamicToolStore};

use super::DynamicConfig;
use super::definition::{Checked, Program};

/// What every loaded tool shares: the store (to check the approval), the
/// sandbox and the limits.
#[derive(Clone)]
pub(crate) struct Runtime {
    pub(crate) store: Arc<dyn DynamicToolStore>,
    pub(crate) sandbox: Sandbox,
    pub(crate) config: DynamicConfig,
    pub(crate) policy: Arc<CommandPolicy>,
}

/// The annotation title that marks a registered tool as the dynamic tool
/// with this id (how [`sync`](super::DynamicTools::sync) tells its own
/// tools, and stale versions of them, from other tools).
pub(crate) fn title_of(id: i64) -> String {
    format!("{TITLE_PREFIX}{id}")
}

/// See [`title_of`].
pub(crate) const TITLE_PREFIX: &str = "dynamic tool #";

/// An approved dynamic tool, ready to register.
///
/// # Rules
///
/// 1. It is [`Sensitivity::Sensitive`]: every call asks under
///    `confirm-sensitive`. A `command` tool declares the command line a
///    call runs ([`Effect::Command`], the filled template as
///    [`shell_line`](super::template::Template::shell_line) writes it, in
///    the workspace), so the command rules judge it as they judge
///    `run_command`: a `command` prefix may allow or deny it, an allow rule
///    without one never matches it, and the command blocklist and
///    `commands.allowed_only` see it. A `script` tool's effects are
///    [`Effects::Opaque`]: toolgate cannot see what its code does (its
///    line, `python3 FILE`, says nothing), so no command or path rule
///    matches it.
/// 2. The gate validates the arguments against the declared schema before
///    [`execute`](Tool::execute) runs.
/// 3. Each call first reads the tool's record again: a tool rejected (or
///    removed) since it was loaded does not run, in this process or any.
/// 4. With `sandbox_required` (the default), a call is refused where the
///    kernel cannot provide the full sandbox.
/// 5. A `command` runs its program with the filled words as arguments
///    ([`template`](super::template) rules), without a shell, unless the
///    command blocklist (`toolgate-policy`, the configured patterns
///    included) blocks the line those words make (`rm -rf {{path}}` with
///    `/`): blocked commands are refused in every mode. A `script`
///    is written to a private directory that the sandbox shows read-only,
///    and runs as `INTERPRETER FILE` with the arguments as one JSON object
///    on stdin. Both run in the workspace, in [`Profile::Standard`] of a
///    sandbox without network: writes only beneath the workspace and a
///    private `/tmp`, secrets and the home directory hidden.
/// 6. Output is stdout, then stderr under `[stderr]`; a nonzero exit, a
///    signal or the timeout is a failure. A script whose whole stdout is a
///    JSON object with a boolean `success` and a string `content` (seed
///    002's shape) reports that result instead.
pub struct DynamicTool {
    id: i64,
    name: String,
    description: String,
    parameters: Value,
    program: Program,
    runtime: Arc<Runtime>,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl DynamicTool {
    pub(crate) fn new(record: &DynamicToolRecord, checked: Checked, runtime: Arc<Runtime>) -> Self {
        Self {
            id: record.id,
            name: record.name.clone(),
            description: checked.description,
            parameters: checked.parameters,
            program: checked.program,
            runtime,
        }
    }

    /// Rule 3: `None` when the tool may run, else why not.
    async fn still_approved(&self) -> Option<String> {
        match self.runtime.store.dynamic_tool(self.id).await {
            Ok(Some(record)) if record.status == DynamicToolStatus::Approved => None,
            Ok(Some(record)) => Some(format!(
                "tool `{}` is {} now; only approved tools run",
                self.name,
                record.status.as_str()
            )),
            Ok(None) => Some(format!("tool `{}` no longer exists", self.name)),
            Err(error) => Some(format!(
                "cannot check that tool `{}` is still approved: {}",
                self.name,
                error_chain(&error)
            )),
        }
    }
}

#[async_trait]
impl Tool for DynamicTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn args_schema(&self) -> Value {
        self.parameters.clone()
    }

    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        Sensitivity::Sensitive
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some(title_of(self.id)),
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(false),
            open_world_hint: Some(false),
            ..ToolAnnotations::default()
        }
    }

    fn timeout(&self) -> Option<Duration> {
        // The run's own timeout stops the process; the gate's is a backstop.
        Some(Duration::from_secs(
            self.runtime.config.timeout.saturating_add(30),
        ))
    }

    /// Rule 1: a command template's filled line; a script is opaque.
    fn effects(&self, args: &Value) -> Result<Effects, EffectsError> {
        match &self.program {
            Program::Command {
                template,
                allow_dash,
            } => {
                let empty = Map::new();
                let object = args.as_object().unwrap_or(&empty);
                let argv = template
                    .fill(object, allow_dash)
                    .map_err(|error| EffectsError::new(error.to_string()))?;
                Ok(Effects::known([Effect::command(
                    template.shell_line(&argv),
                    None,
                )]))
            }
            Program::Script { .. } => Ok(Effects::Opaque),
        }
    }

    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Dynamic
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        if let Some(why) = self.still_approved().await {
            return ToolResult::failure(why);
        }
        let sandbox = &self.runtime.sandbox;
        let status = sandbox.status();
        if self.runtime.config.sandbox_required && status.level() != Level::Full {
            return ToolResult::failure(format!(
                "refusing to run `{}`: the sandbox is incomplete here ({status}) and \
                 tools.dynamic.sandbox_required is true",
                self.name
            ));
        }
        let empty = Map::new();
        let object = args.as_object().unwrap_or(&empty);
        // The script's directory lives until the run is over.
        let (spawn, stdin, _script_dir) = match &self.program {
            Program::Command {
                template,
                allow_dash,
            } => {
                let argv = match template.fill(object, allow_dash) {
                    Ok(argv) => argv,
                    Err(error) => return ToolResult::failure(error.to_string()),
                };
                let verdict = self.runtime.policy.classify(&template.shell_line(&argv));
                if verdict.is_blocked() {
                    return ToolResult::failure(format!(
                        "blocked command: {}; it is refused in every mode",
                        verdict.reason()
                    ));
                }
                (Spawn::program(template.program(), argv), None, None)
            }
            Program::Script {
                interpreter,
                source,
            } => {
                let dir = match write_script(&self.name, interpreter.extension(), source) {
                    Ok(dir) => dir,
                    Err(error) => {
                        return ToolResult::failure(format!(
                            "could not write the script of `{}`: {error}",
                            self.name
                        ));
                    }
                };
                let file = dir
                    .path()
                    .join(format!("{}.{}", self.name, interpreter.extension()));
                let spawn = Spawn::program(interpreter.as_str(), [file.into_os_string()])
                    .readable([dir.path().to_owned()]);
                (spawn, Some(args.to_string().into_bytes()), Some(dir))
            }
        };
        let spawn = spawn.profile(Profile::Standard);
        let timeout = self.runtime.config.timeout.clamp(1, 3600);
        let mut options = RunOptions::new(Duration::from_secs(timeout))
            .capture(Capture::Lines(self.runtime.config.max_output_lines.max(2)));
        if let Some(bytes) = stdin {
            options = options.stdin(bytes);
        }
        let finished = match sandbox.run(&spawn, &options).await {
            Ok(finished) => finished,
            Err(error) => {
                return ToolResult::failure(format!(
                    "could not start `{}`: {}",
                    self.name,
                    error_chain(&error)
                ));
            }
        };
        let is_script = matches!(self.program, Program::Script { .. });
        report(&finished, timeout, is_script)
            .with_metadata("dynamic_tool_id", self.id)
            .with_metadata("sandbox", status.to_string())
    }
}

/// Writes `source` into a new private directory (mode 0700, the file
/// 0600: the sandbox maps the process to our own user, so it can read
/// them; nobody else can).
fn write_script(name: &str, extension: &str, source: &str) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("toolgate-dynamic-")
        .tempdir()?;
    std::fs::write(dir.path().join(format!("{name}.{extension}")), source)?;
    Ok(dir)
}

/// The result the model sees (rule 6): a script's `{"success",
/// "content"}` answer, else the process's output as `run_command` shows it.
fn report(finished: &Finished, timeout: u64, is_script: bool) -> ToolResult {
    let ok = finished.exit_code == Some(0) && !finished.timed_out;
    let protocol = (ok && is_script && finished.stderr.is_empty())
        .then(|| seed_result(&finished.stdout))
        .flatten();
    let result = match protocol {
        Some((true, content)) => ToolResult::success(content),
        Some((false, content)) => ToolResult::failure(content),
        None => toolgate_sandbox::outcome(finished, timeout, "the tool"),
    };
    toolgate_sandbox::with_run_metadata(result, finished)
}

/// `{"success": bool, "content": "…"}` as a whole stdout.
fn seed_result(stdout: &str) -> Option<(bool, String)> {
    let value: Value = serde_json::from_str(stdout.trim()).ok()?;
    let object = value.as_object()?;
    let success = object.get("success")?.as_bool()?;
    let content = object.get("content")?.as_str()?;
    Some((success, content.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_result_shape_is_read_exactly() {
        let cases: &[(&str, Option<(bool, &str)>)] = &[
            (r#"{"success": true, "content": "42"}"#, Some((true, "42"))),
            (
                "{\"success\": false, \"content\": \"no such user\"}\n",
                Some((false, "no such user")),
            ),
            (r#"{"success": "yes", "content": "42"}"#, None),
            (r#"{"success": true}"#, None),
            (r#"{"success": true, "content": 42}"#, None),
            (r#"[true, "42"]"#, None),
            ("42", None),
            ("", None),
        ];
        for (stdout, expected) in cases {
            let got = seed_result(stdout);
            assert_eq!(
                got.as_ref().map(|(s, c)| (*s, c.as_str())),
                *expected,
                "{stdout:?}"
            );
        }
    }
}
