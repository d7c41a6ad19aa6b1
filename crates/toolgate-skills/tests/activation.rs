//! What the model sees: the catalog, activations, lazy activation by tool,
//! and the `skill` tool through the gate's interface.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fs;
use std::path::Path;

use serde_json::json;
use toolgate_core::{Effect, Effects, Registry, Sensitivity, Tool, ToolContext};
use toolgate_skills::{
    Activations, CATALOG_INSTRUCTION, MAX_LISTED_FILES, Skill, SkillError, SkillFile, SkillOrigin,
    SkillTool, catalog_block,
};

/// Writes a skill under `root` and reads it back.
fn skill(root: &Path, name: &str, extra: &str, body: &str) -> Skill {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("SKILL.md");
    fs::write(
        &file,
        format!(
            "---\nname: {name}\ndescription: Use {name} for {name} jobs.\n{extra}---\n{body}\n"
        ),
    )
    .unwrap();
    Skill::from_file(SkillFile::read(&file).unwrap(), SkillOrigin::Workspace)
}

#[test]
fn the_catalog_has_names_and_descriptions_never_bodies() {
    let root = tempfile::tempdir().unwrap();
    let long = format!("Starts here. {}", "word ".repeat(100));
    let pdf = skill(root.path(), "pdf", "", "SECRET-PDF-STEPS");
    let mut multi = skill(root.path(), "multi", "", "SECRET-MULTI-STEPS");
    multi.description = "First line\n  second   line.".into();
    let mut wordy = skill(root.path(), "wordy", "", "SECRET-WORDY-STEPS");
    wordy.description.clone_from(&long);

    let block = catalog_block(&[multi, pdf, wordy]);
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines[0], "## Skills");
    assert_eq!(lines[1], CATALOG_INSTRUCTION);
    assert_eq!(lines[2], "- multi: First line second line.");
    assert_eq!(lines[3], "- pdf: Use pdf for pdf jobs.");
    let wordy_line = lines[4].strip_prefix("- wordy: ").unwrap();
    assert!(wordy_line.chars().count() <= 200, "{wordy_line}");
    assert!(wordy_line.chars().count() > 180, "{wordy_line}");
    assert!(wordy_line.starts_with("Starts here. word word"));
    assert!(wordy_line.ends_with(" word…"), "{wordy_line}");
    assert_eq!(lines.len(), 5);
    assert!(!block.contains("SECRET"), "{block}");
    assert!(block.contains("call `skill` with its name first"));

    assert_eq!(catalog_block(&[]), "");
}

#[test]
fn a_skill_is_given_once_then_noted_as_active() {
    let root = tempfile::tempdir().unwrap();
    let pdf = skill(root.path(), "pdf", "", "# PDF\n\nRun `scripts/fill.sh`.");
    let dir = pdf.dir.clone();
    fs::create_dir_all(dir.join("scripts/lib")).unwrap();
    fs::create_dir_all(dir.join(".cache")).unwrap();
    fs::write(dir.join("scripts/fill.sh"), "#!/bin/sh\n").unwrap();
    fs::write(dir.join("scripts/lib/util.sh"), "").unwrap();
    fs::write(dir.join("reference.md"), "").unwrap();
    fs::write(dir.join(".cache/x"), "").unwrap();
    fs::write(dir.join(".hidden"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();

    let activations = Activations::new([pdf]);
    let first = activations.activate("pdf").unwrap();
    assert!(!first.already_active);
    assert_eq!(first.name, "pdf");
    assert_eq!(
        first.text,
        format!(
            "# Skill: pdf\n\
             Directory: {} (relative paths in these instructions are inside it)\n\
             \n\
             # PDF\n\
             \n\
             Run `scripts/fill.sh`.\n\
             \n\
             Files in the skill's directory:\n\
             - reference.md\n\
             - scripts/fill.sh\n\
             - scripts/lib/util.sh\n",
            dir.display()
        )
    );
    assert!(activations.is_active("pdf"));
    assert_eq!(activations.active(), ["pdf"]);

    let second = activations.activate("pdf").unwrap();
    assert!(second.already_active);
    assert!(second.text.contains("already active"), "{}", second.text);
    assert!(!second.text.contains("scripts/fill.sh"), "{}", second.text);
}

#[test]
fn long_listings_are_cut() {
    let root = tempfile::tempdir().unwrap();
    let many = skill(root.path(), "many", "", "Body.");
    for i in 0..MAX_LISTED_FILES + 5 {
        fs::write(many.dir.join(format!("f{i:03}.txt")), "").unwrap();
    }
    let text = Activations::new([many]).activate("many").unwrap().text;
    let listed = text.lines().filter(|l| l.starts_with("- f")).count();
    assert_eq!(listed, MAX_LISTED_FILES);
    assert!(
        text.ends_with("- … (only the first 50 are listed)\n"),
        "{text}"
    );
}

#[test]
fn an_unknown_name_lists_the_names_there_are() {
    let root = tempfile::tempdir().unwrap();
    let activations = Activations::new([
        skill(root.path(), "pdf", "", "b"),
        skill(root.path(), "docx", "", "b"),
    ]);
    let error = activations.activate("xlsx").unwrap_err();
    assert_eq!(
        error.to_string(),
        "there is no skill named \"xlsx\"; available: docx, pdf"
    );
    assert!(matches!(error, SkillError::NotFound { .. }));
    let error = Activations::default().activate("pdf").unwrap_err();
    assert_eq!(
        error.to_string(),
        "there is no skill named \"pdf\"; no skills are installed"
    );
}

#[test]
fn using_a_tool_brings_the_skills_that_name_it() {
    let root = tempfile::tempdir().unwrap();
    let activations = Activations::new([
        skill(
            root.path(),
            "pdf",
            "allowed-tools: run_command read_file\n",
            "PDF steps.",
        ),
        skill(
            root.path(),
            "docx",
            "allowed-tools: [run_command]\n",
            "DOCX steps.",
        ),
        skill(root.path(), "notes", "", "Notes steps."),
        skill(
            root.path(),
            "csv",
            "allowed-tools: read_file\n",
            "CSV steps.",
        ),
    ]);
    // Already given by name: not given again by a tool.
    activations.activate("csv").unwrap();

    assert!(activations.on_tool_used("write_file").is_empty());
    let brought = activations.on_tool_used("run_command");
    let names: Vec<&str> = brought.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["docx", "pdf"]);
    assert!(brought[1].text.starts_with(
        "# Skill: pdf\n(given because `run_command` was used, which this skill covers)\n"
    ));
    assert!(brought[1].text.contains("PDF steps."));
    assert!(brought.iter().all(|a| !a.already_active));

    // Once each.
    assert!(activations.on_tool_used("run_command").is_empty());
    assert!(activations.on_tool_used("read_file").is_empty());
    assert!(activations.activate("pdf").unwrap().already_active);
    assert_eq!(activations.active(), ["csv", "docx", "pdf"]);
}

#[test]
fn a_resumed_session_restores_what_was_active() {
    let root = tempfile::tempdir().unwrap();
    let activations = Activations::new([
        skill(root.path(), "pdf", "allowed-tools: read_file\n", "b"),
        skill(root.path(), "docx", "", "b"),
    ]);
    activations.restore(["pdf", "removed-since"]);
    assert_eq!(activations.active(), ["pdf"]);
    assert!(activations.activate("pdf").unwrap().already_active);
    assert!(activations.on_tool_used("read_file").is_empty());
    assert!(!activations.activate("docx").unwrap().already_active);
}

#[test]
fn clones_share_one_record() {
    let root = tempfile::tempdir().unwrap();
    let activations = Activations::new([skill(root.path(), "pdf", "", "b")]);
    let clone = activations.clone();
    clone.activate("pdf").unwrap();
    assert!(activations.is_active("pdf"));
    assert_eq!(activations.names(), ["pdf"]);
}

#[tokio::test]
async fn the_skill_tool_activates_and_declares_its_read() {
    let root = tempfile::tempdir().unwrap();
    let pdf = skill(root.path(), "pdf", "", "PDF steps.");
    let docx = skill(root.path(), "docx", "", "DOCX steps.");
    let pdf_file = pdf.file.clone();
    let activations = Activations::new([pdf, docx]);
    let tool = SkillTool::new(activations.clone());

    // The registry checks the name and the schema.
    let registry = Registry::new();
    registry.register(tool.clone()).unwrap();
    let registered = registry.get("skill").unwrap();
    let spec = registered.spec();
    assert_eq!(spec.parameters["type"], "object");
    assert_eq!(spec.parameters["additionalProperties"], false);
    assert_eq!(spec.parameters["required"], json!(["name"]));
    assert!(
        tool.description().ends_with("Skills: docx, pdf."),
        "{}",
        tool.description()
    );
    assert_eq!(
        tool.sensitivity(&json!({"name": "pdf"})),
        Sensitivity::ReadOnly
    );
    let annotations = tool.annotations();
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(false));
    assert_eq!(annotations.open_world_hint, Some(false));

    assert_eq!(
        tool.effects(&json!({"name": "pdf"})).unwrap(),
        Effects::known([Effect::read(pdf_file.display().to_string())])
    );
    assert_eq!(
        tool.effects(&json!({"name": "xlsx"})).unwrap(),
        Effects::none()
    );
    assert!(tool.effects(&json!({"skill": "pdf"})).is_err());

    let ctx = ToolContext::new("c1");
    let result = tool.execute(json!({"name": "pdf"}), &ctx).await;
    assert!(result.success, "{result:?}");
    assert!(result.output.contains("PDF steps."));
    assert_eq!(result.metadata["skill"], "pdf");
    assert_eq!(result.metadata["already_active"], false);
    assert!(activations.is_active("pdf"));

    let again = tool.execute(json!({"name": "pdf"}), &ctx).await;
    assert!(again.success);
    assert_eq!(again.metadata["already_active"], true);
    assert!(!again.output.contains("PDF steps."));

    let unknown = tool.execute(json!({"name": "xlsx"}), &ctx).await;
    assert!(!unknown.success);
    assert_eq!(
        unknown.to_model_text(),
        "Error: there is no skill named \"xlsx\"; available: docx, pdf"
    );
}

#[test]
fn the_tool_description_stays_short_with_many_skills() {
    let root = tempfile::tempdir().unwrap();
    let skills: Vec<Skill> = (0..40)
        .map(|i| skill(root.path(), &format!("s{i:02}"), "", "b"))
        .collect();
    let tool = SkillTool::new(Activations::new(skills));
    assert!(tool.description().contains("s29, … (see the skills list)"));
    assert!(!tool.description().contains("s30"));
    let none = SkillTool::new(Activations::default());
    assert!(none.description().ends_with("No skills are installed."));
}
