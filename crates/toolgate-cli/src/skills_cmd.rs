//! `toolgate skills list|show|create|install`: the skills a run would find
//! ([`toolgate_host::Host::skills`]), and writing new ones.

use std::fmt::Write as _;

use anyhow::anyhow;
use serde_json::json;
use toolgate_skills::{
    MAX_SKILL_FILE_BYTES, Skill, SkillError, SkillOrigin, create, install_dir, install_text,
};

use crate::cli::SkillsCommand;
use crate::render::{CliError, Exit};
use crate::{Setup, json_text, out, render, show_data};

/// `toolgate skills …`.
pub(crate) async fn skills(setup: &Setup, cmd: SkillsCommand) -> Result<Exit, CliError> {
    match cmd {
        SkillsCommand::List => list(setup),
        SkillsCommand::Show { name } => show(setup, &name),
        SkillsCommand::Create {
            name,
            description,
            user,
        } => {
            let root = install_root(setup, user)?;
            let file = create(&root, &name, &description).map_err(failed)?;
            render::note(&format!(
                "created {}: write the skill's instructions below its frontmatter",
                file.display()
            ));
            show_data(&format!("{}\n", file.display()))
        }
        SkillsCommand::Install { source, user } => install(setup, &source, user).await,
    }
}

fn list(setup: &Setup) -> Result<Exit, CliError> {
    let config = &setup.host.config().skills;
    let found = setup.host.skills();
    let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    let warnings: Vec<String> = found.warnings.iter().map(ToString::to_string).collect();
    if setup.json {
        let skills: Vec<_> = found.skills.iter().map(summary).collect();
        let shadowed: Vec<_> = found
            .shadowed
            .iter()
            .map(|(name, dir)| json!({"name": name, "dir": dir}))
            .collect();
        return out(&json_text(&json!({
            "enabled": config.enabled,
            "skills": skills,
            "errors": errors,
            "warnings": warnings,
            "shadowed": shadowed,
        }))?);
    }
    let mut text = String::new();
    if !config.enabled {
        render::note("skills are off (skills.enabled: false)");
    } else if found.skills.is_empty() && errors.is_empty() {
        render::note(
            "no skills found: create one with `toolgate skills create NAME --description TEXT`",
        );
    }
    for skill in &found.skills {
        let _ = writeln!(
            text,
            "{:<24} {:<9} {}",
            skill.name,
            skill.origin.label(),
            skill.description.lines().next().unwrap_or_default()
        );
    }
    for (name, dir) in &found.shadowed {
        render::note(&format!(
            "{name} in {} is hidden by a nearer skill of the same name",
            dir.display()
        ));
    }
    for warning in &warnings {
        render::note(&format!("warning: {warning}"));
    }
    for error in &errors {
        render::note(&format!("skipped: {error}"));
    }
    crate::show(&text)?;
    // A broken skill is worth a non-zero exit here, where someone looks.
    Ok(if errors.is_empty() {
        Exit::Success
    } else {
        Exit::Failure
    })
}

fn show(setup: &Setup, name: &str) -> Result<Exit, CliError> {
    let found = setup.host.skills();
    let Some(skill) = found.skills.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = found.skills.iter().map(|s| s.name.as_str()).collect();
        let known = if names.is_empty() {
            "no skills were found".to_owned()
        } else {
            format!("the skills are: {}", names.join(", "))
        };
        return Err(
            CliError::new(Exit::Failure, anyhow!("no skill is named `{name}`")).with_hint(format!(
                "{known}; `toolgate skills list` shows where each is"
            )),
        );
    };
    if setup.json {
        let mut value = summary(skill);
        value["body"] = json!(skill.body);
        return out(&json_text(&value)?);
    }
    let mut text = String::new();
    let _ = writeln!(text, "name:          {}", skill.name);
    let _ = writeln!(text, "description:   {}", skill.description);
    let _ = writeln!(text, "file:          {}", skill.file.display());
    let _ = writeln!(text, "found in:      {}", skill.origin.label());
    if !skill.allowed_tools.is_empty() {
        let _ = writeln!(text, "allowed-tools: {}", skill.allowed_tools.join(" "));
    }
    if let Some(license) = &skill.license {
        let _ = writeln!(text, "license:       {license}");
    }
    for (key, value) in &skill.metadata {
        let _ = writeln!(text, "metadata.{key}: {value}");
    }
    let _ = writeln!(text, "\n{}", skill.body.trim_end());
    crate::show(&text)
}

async fn install(setup: &Setup, source: &str, user: bool) -> Result<Exit, CliError> {
    let root = install_root(setup, user)?;
    let origin = if user {
        SkillOrigin::User
    } else {
        SkillOrigin::Workspace
    };
    let skill = if source.starts_with("http://") || source.starts_with("https://") {
        // Through web_fetch's client: SSRF rules, redirects re-checked,
        // `tools.web.allow_hosts` the only exemption, a size cap.
        let web = &setup.host.config().tools.web;
        let max = usize::try_from(MAX_SKILL_FILE_BYTES).unwrap_or(usize::MAX);
        let text = toolgate_host::download_text(web, source, max)
            .await
            .map_err(|e| {
                CliError::new(Exit::Failure, anyhow::Error::new(e).context(format!(
                    "could not download {source}"
                )))
                .with_hint("a URL must serve one SKILL.md as text; private and local addresses are refused unless listed in tools.web.allow_hosts")
            })?;
        install_text(&text, source, &root, origin).map_err(failed)?
    } else {
        let path = setup.host.workspace().join(source);
        if !path.exists() {
            return Err(
                CliError::usage(anyhow!("{} does not exist", path.display())).with_hint(
                    "give a skill directory (holding SKILL.md), a SKILL.md, or an http(s) URL",
                ),
            );
        }
        install_dir(&path, &root, origin).map_err(failed)?
    };
    render::note(&format!(
        "installed skill `{}` in {}",
        skill.name,
        skill.dir.display()
    ));
    show_data(&format!("{}\n", skill.dir.display()))
}

fn install_root(setup: &Setup, user: bool) -> Result<std::path::PathBuf, CliError> {
    setup.host.skill_install_root(user).ok_or_else(|| {
        CliError::usage(anyhow!("HOME is not set, so ~/.agents/skills is unknown"))
            .with_hint("set HOME, or leave out --user to write to the workspace")
    })
}

fn summary(skill: &Skill) -> serde_json::Value {
    json!({
        "name": skill.name,
        "description": skill.description,
        "origin": skill.origin,
        "file": skill.file,
        "dir": skill.dir,
        "allowed_tools": skill.allowed_tools,
        "license": skill.license,
        "metadata": skill.metadata,
    })
}

fn failed(error: SkillError) -> CliError {
    let exists = matches!(error, SkillError::Exists { .. });
    let cli = CliError::new(Exit::Failure, anyhow::Error::new(error));
    if exists {
        cli.with_hint("pick another name, or remove the existing skill first")
    } else {
        cli
    }
}
