//! `toolgate init` (alias `setup`): choose a model provider, write it to
//! the user's config file, and check that it works.
//!
//! ```text
//! ✓ wrote /home/me/.config/toolgate/config.yaml
//!     llm:
//!       provider: openai
//!       …
//! ✓ model server: https://api.openai.com/v1 reachable
//! ✗ api key: the environment variable OPENAI_API_KEY (llm.api_key_env) is not set
//!     fix: put your API key in it: `export OPENAI_API_KEY=…`
//! ```
//!
//! Everything for people goes to stderr; with `--json`, stdout carries
//! `{"path": …, "config": …, "checks": […]}`.

use std::fmt::Write as _;
use std::io::{self, BufRead as _, IsTerminal as _, Write as _};

use anyhow::anyhow;
use toolgate_host::{CheckState, DoctorOptions, InitError, LlmSetup, ProviderKind};

use crate::Setup;
use crate::cli::{GlobalArgs, InitArgs, ProviderArgs};
use crate::render::{self, CliError, Exit};
use crate::trust_cmd::Ask;

impl From<InitError> for CliError {
    fn from(error: InitError) -> Self {
        let hint = error.hint();
        let mut cli = Self::usage(anyhow::Error::new(error));
        cli.hint = hint;
        cli
    }
}

/// `toolgate init`: exit 0 when the file was written and the checks
/// passed, 1 when it was written but a check failed, 2 when nothing was
/// written.
pub(crate) async fn init(global: &GlobalArgs, args: &InitArgs) -> Result<Exit, CliError> {
    let setup = match args.provider {
        Some(kind) => from_flags(kind, args)?,
        None if io::stdin().is_terminal() && io::stderr().is_terminal() => dialogue(args)?,
        None => {
            return Err(CliError::usage(anyhow!(
                "`toolgate init` needs --provider when it cannot ask on a terminal"
            ))
            .with_hint(format!(
                "pass --provider ({}), and --base-url, --model or --api-key-env to change its defaults, \
                 e.g. `toolgate init --provider ollama`",
                ProviderKind::names()
            )));
        }
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    let written = setup.write_user_config(&env, args.force && !args.no_force)?;
    let json = global.json && !global.no_json;
    let color = render::stderr_color();
    let verb = if written.replaced {
        "replaced the `llm` section of"
    } else {
        "wrote"
    };
    let mut text = format!(
        "{} {verb} {}\n",
        render::mark(CheckState::Ok, color),
        written.path.display()
    );
    for line in written.text.lines().filter(|l| !l.starts_with('#')) {
        text.push_str("    ");
        text.push_str(line);
        text.push('\n');
    }

    // Checked as every other command will load it: the workspace file,
    // this file, the variables.
    let checks = match Setup::new(global, &ProviderArgs::default(), Ask::Never, &[]) {
        Ok(loaded) => loaded.host.model_checks(&DoctorOptions::default()).await,
        Err(error) => vec![crate::doctor_cmd::failed_check(&error)],
    };
    let failed = checks.iter().any(|c| c.state == CheckState::Fail);
    if json {
        crate::out(&crate::json_text(&serde_json::json!({
            "path": written.path,
            "config": written.text,
            "checks": checks,
        }))?)?;
    } else {
        for check in &checks {
            crate::doctor_cmd::line(&mut text, check, color);
        }
        if failed {
            text.push_str("the configuration is saved; fix the ✗ above, then `toolgate doctor`\n");
        } else {
            text.push_str("ready: `toolgate run \"describe this repository\"`\n");
        }
        render::note_own(text.trim_end());
    }
    Ok(if failed { Exit::Failure } else { Exit::Success })
}

fn from_flags(kind: ProviderKind, args: &InitArgs) -> Result<LlmSetup, CliError> {
    let mut setup = LlmSetup::new(kind);
    if let Some(url) = &args.base_url {
        setup = setup.base_url(url);
    }
    if let Some(model) = &args.model {
        setup = setup.model(model);
    }
    if let Some(var) = &args.api_key_env {
        setup = setup.api_key_env(var);
    }
    Ok(setup.build()?)
}

/// Asks for what the flags did not say: the provider, then its URL, model
/// and key variable with the provider's defaults in brackets.
fn dialogue(args: &InitArgs) -> Result<LlmSetup, CliError> {
    let mut prompt = String::from("Which model provider?\n");
    for (i, kind) in ProviderKind::ALL.iter().enumerate() {
        let _ = writeln!(
            prompt,
            "  {}) {:<18} {}",
            i + 1,
            kind.name(),
            kind.description()
        );
    }
    prompt.push_str("Number or name [1]: ");
    let answer = ask(&prompt)?;
    let kind = if answer.is_empty() {
        ProviderKind::Ollama
    } else if let Ok(n) = answer.parse::<usize>() {
        *n.checked_sub(1)
            .and_then(|i| ProviderKind::ALL.get(i))
            .ok_or_else(|| InitError::UnknownProvider(answer.clone()))?
    } else {
        answer.parse::<ProviderKind>()?
    };
    let field = |flag: &Option<String>, label: &str, default: Option<&str>| {
        if let Some(value) = flag {
            return Ok(Some(value.clone()));
        }
        let shown = default.map_or_else(|| "none".to_owned(), str::to_owned);
        let answer = ask(&format!("{label} [{shown}]: "))?;
        Ok::<_, CliError>(if answer.is_empty() {
            default.map(str::to_owned)
        } else {
            Some(answer)
        })
    };
    let mut setup = LlmSetup::new(kind);
    if let Some(url) = field(&args.base_url, "Base URL", kind.base_url())? {
        setup = setup.base_url(url);
    }
    if let Some(model) = field(&args.model, "Model", kind.model())? {
        setup = setup.model(model);
    }
    if (kind.api_key_env().is_some() || args.api_key_env.is_some())
        && let Some(var) = field(
            &args.api_key_env,
            "Variable holding the API key",
            kind.api_key_env(),
        )?
    {
        setup = setup.api_key_env(var);
    }
    Ok(setup.build()?)
}

/// One answer from the terminal, trimmed; end of input aborts.
fn ask(prompt: &str) -> Result<String, CliError> {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_all(prompt.as_bytes());
    let _ = stderr.flush();
    drop(stderr);
    let mut line = String::new();
    match io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => Err(CliError::new(
            Exit::Aborted,
            anyhow!("`toolgate init` was not answered; nothing was written"),
        )),
        Ok(_) => Ok(line.trim().to_owned()),
    }
}
