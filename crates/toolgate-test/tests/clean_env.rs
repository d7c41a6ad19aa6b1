//! The clean environment: a child sees its HOME and the few variables a
//! process needs, nothing else of the caller's.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use toolgate_test::TempHome;

#[test]
fn a_child_sees_only_home_and_the_kept_variables() {
    let home = TempHome::new().unwrap();
    let out = home.command("env").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut keys = Vec::new();
    for line in text.lines() {
        let (key, value) = line.split_once('=').unwrap();
        if key == "HOME" {
            assert_eq!(value, home.home().to_str().unwrap());
        }
        keys.push(key.to_owned());
    }
    assert!(keys.contains(&"HOME".to_owned()), "{text}");
    let allowed = [
        "HOME",
        "PATH",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "RUST_BACKTRACE",
        "LLVM_PROFILE_FILE",
    ];
    // Cargo sets CARGO_* and friends for this test: none may pass.
    assert!(std::env::var_os("CARGO").is_some());
    for key in &keys {
        assert!(allowed.contains(&key.as_str()), "`{key}` leaked: {text}");
    }
    assert!(home.workspace().join("home").is_dir());
}
