//! The system prompt follows what the offered tools declare, not their
//! names: the edit guidance comes with a tool whose spec says it writes
//! files, whatever it is called, and not with a tool that merely has an
//! editing tool's name.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::{Registry, Sensitivity, ToolContext, ToolResult, TypedTool};
use toolgate_host::{Host, TrustPolicy};

/// The first words of the edit guidance.
const GUIDANCE: &str = "To change files, prefer in this order";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// A tool that writes files under a name no list knows.
struct Scribble;

#[async_trait::async_trait]
impl TypedTool for Scribble {
    type Args = NoArgs;
    const NAME: &'static str = "scribble";
    const DESCRIPTION: &'static str = "Writes a file.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
    const WRITES_FILES: bool = true;

    async fn run(&self, _args: NoArgs, _ctx: &ToolContext) -> ToolResult {
        ToolResult::success("written")
    }
}

/// A tool with an editing tool's name that does not say it writes files.
struct Impostor;

#[async_trait::async_trait]
impl TypedTool for Impostor {
    type Args = NoArgs;
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Says hello.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    async fn run(&self, _args: NoArgs, _ctx: &ToolContext) -> ToolResult {
        ToolResult::success("hello")
    }
}

fn host(dir: &std::path::Path) -> Host {
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![("HOME".to_owned(), dir.join("home").display().to_string())];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
        .load()
        .unwrap()
}

fn prompt_over(host: &Host, registry: &Registry) -> String {
    let agent = host.agent("build").unwrap();
    host.system_prompt(&agent, registry).unwrap()
}

#[test]
fn a_tool_that_writes_files_brings_the_edit_guidance_whatever_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());

    let writer = Registry::new();
    writer.register(Scribble).unwrap();
    assert!(prompt_over(&host, &writer).contains(GUIDANCE));

    // The name of an editing tool alone no longer brings it.
    let impostor = Registry::new();
    impostor.register(Impostor).unwrap();
    assert!(!prompt_over(&host, &impostor).contains(GUIDANCE));

    assert!(!prompt_over(&host, &Registry::new()).contains(GUIDANCE));

    // The built-in editing tools say they write files.
    let builtin = host.registry().unwrap();
    assert!(prompt_over(&host, &builtin).contains(GUIDANCE));
    let agent = host.agent("plan").unwrap();
    assert!(
        !host
            .system_prompt(&agent, &builtin)
            .unwrap()
            .contains(GUIDANCE),
        "a read-only agent is offered no tool that writes files"
    );
}
