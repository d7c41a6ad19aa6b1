//! The parts a front end asks for are built and checked when the host
//! loads: an invalid one fails the load with the error it gives when built
//! on first use; a part not asked for fails only where it is used.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::Path;

use toolgate_host::{Host, HostBuilder, HostError, HostPart, TrustPolicy};

fn builder(dir: &Path, config: &str) -> HostBuilder {
    std::fs::write(dir.join("toolgate.yaml"), config).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![
        ("HOME".to_owned(), dir.join("home").display().to_string()),
        (
            "XDG_DATA_HOME".to_owned(),
            dir.join("data").display().to_string(),
        ),
    ];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
}

#[test]
fn a_bad_glob_fails_the_load_when_the_view_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let config = "guardrails:\n  sensitive_files: ['[a']\n";
    // Not asked for: the load succeeds, the first use fails.
    let host = builder(dir.path(), config).load().unwrap();
    let later = host.workspace_view().unwrap_err();
    assert!(matches!(later, HostError::Patterns(_)), "{later:?}");
    // Asked for: the load fails, with the same error.
    let early = builder(dir.path(), config)
        .parts([HostPart::WorkspaceView])
        .load()
        .unwrap_err();
    assert!(matches!(early, HostError::Patterns(_)), "{early:?}");
    assert_eq!(early.to_string(), later.to_string());
}

#[test]
fn a_store_that_cannot_open_fails_the_load_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the store's file should be.
    let store = dir.path().join("store.db");
    std::fs::create_dir_all(&store).unwrap();
    let config = format!("store:\n  path: {}\n", store.display());
    let host = builder(dir.path(), &config).load().unwrap();
    let later = host.store().unwrap_err();
    assert!(matches!(later, HostError::Store { .. }), "{later:?}");
    let early = builder(dir.path(), &config)
        .parts([HostPart::Store])
        .load()
        .unwrap_err();
    assert_eq!(early.to_string(), later.to_string());
}

#[test]
fn parts_asked_for_are_built_once_and_shared() {
    let dir = tempfile::tempdir().unwrap();
    let host = builder(dir.path(), "{}\n")
        .parts([HostPart::WorkspaceView, HostPart::Sandbox, HostPart::Store])
        .load()
        .unwrap();
    // The store was opened at load: its file exists before any use.
    let path = host.store_path().unwrap();
    assert!(path.is_file(), "{}", path.display());
    let a = host.store().unwrap();
    let b = host.store().unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    // The view is the one built at load (the same sensitive set).
    let v1 = host.workspace_view().unwrap();
    let v2 = host.workspace_view().unwrap();
    assert!(std::ptr::eq(v1.sensitive_set(), v2.sensitive_set()));
    assert!(host.sandbox().is_ok());
}
