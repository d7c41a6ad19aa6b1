//! The web UI in a real browser: headless Chromium (Debian's `chromium`)
//! driven by Playwright (`playwright-core` from npm, in `.ci/node`), against
//! `toolgate ui` and a scripted model server on 127.0.0.1. The scenarios
//! live in `tests/ui/browser.mjs`: an edit approved from its diff, a deny,
//! Approve all, a session resumed from the list, the `full` toggle with an
//! outside path still refused, and the XSS table (model text, file names,
//! tool output, and a hostile MCP server's names and output:
//! `tests/ui/evil_mcp.mjs`), and text streamed by the model server
//! arriving piece by piece.
//!
//! `.ci/run` installs both. A missing browser, Node or package fails the
//! test with what to install; it never passes without running.
//!
//! Screenshots go to `target/tmp/ui-screenshots/`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; the screenshots' place is printed"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn ci_dir() -> PathBuf {
    std::env::var_os("TOOLGATE_MCP_PEERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci"),
        PathBuf::from,
    )
}

#[test]
fn the_ui_in_headless_chromium() {
    let modules = ci_dir().join("node/node_modules");
    assert!(
        modules.join("playwright-core").is_dir(),
        "playwright-core is not installed in {}; run `.ci/run` (or `npm ci` in .ci/node)",
        modules.display()
    );
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        chromium.exists(),
        "no browser at {}; install it with `apt-get install chromium` (or set CHROMIUM)",
        chromium.display()
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is not installed; install it with `apt-get install nodejs`"
    );
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/browser.mjs");
    let out = Command::new("node")
        .arg(&script)
        .env("TOOLGATE_BIN", env!("CARGO_BIN_EXE_toolgate"))
        .env("NODE_PATH", &modules)
        .env("CHROMIUM", &chromium)
        .env("SCREENSHOTS", &shots)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\nscreenshots: {}", shots.display());
    assert!(
        out.status.success(),
        "browser scenarios failed:\n{stdout}\n{stderr}"
    );
    for shot in ["chat-approval.png", "sessions.png"] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 1000, "screenshot {shot} missing or empty");
    }
}
