//! The web UI in a real browser: headless Chromium (Debian's `chromium`)
//! driven by Playwright (`playwright-core` from npm, in `.ci/node`), against
//! `toolgate ui` and a scripted model server on 127.0.0.1. The scenarios
//! live in `tests/ui/browser.mjs`:
//!
//! - `allow`: an edit approved from its card (the terminal's lines, `-old`
//!   as a removed line and `+new` as an added one); `deny` (the key `d`);
//!   `approve-all` over two chats; `resume` a session from the list; `full`,
//!   with an outside path still refused; `stop` while a call waits;
//! - `xss`, `xss-mcp`: model text, file names, tool output and a hostile MCP
//!   server's names and output (`tests/ui/evil_mcp.mjs`) shown as text; the
//!   card names the MCP server;
//! - `stream`: text arriving piece by piece; `pages`: Always allow, then the
//!   rules, audit, MCP, sandbox and tools pages; `dynamic`: a model-written
//!   tool approved; `approver-only`: `run --approver ui`, the card saying who
//!   asks;
//! - `live-card-desktop` (1400×900), `live-card-phone` (390×844): a card
//!   that appears at the end of a long live chat is brought into view, and a
//!   click at the centre of each of its answers lands on that answer, not on
//!   the task box;
//! - `nav-phone`: at 390×844 every page's link shows, can be clicked, and
//!   opens its page, and no page is wider than the screen;
//! - `new-chat`: "New chat" shows once, and the model line names the
//!   configured model and server (then the run's, in `allow`);
//! - `markdown`: the agent's Markdown streamed and rendered as elements
//!   (headings, lists, code, emphasis, an https link), raw HTML and
//!   `javascript:`/`data:` links left as text; at 1400×900 and 390×844;
//! - `readme-card`: the README's picture of an approval card;
//! - `mcp-reload`: a server added to the configuration shows on the MCP
//!   page without a restart; `pages` also checks that the audit table is
//!   no wider than the page, shows each error whole and breaks no word, at
//!   1400×900 and 390×844;
//! - `folded`: a 20,000-character command: its card keeps the head and the
//!   tail and says how much is left out, allows nothing until shown whole
//!   (the server answers 409 to an allow without `seen`, Approve all passes
//!   it by and the page says so), then runs it.
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
    for shot in [
        "chat-approval.png",
        "sessions.png",
        "mcp-card.png",
        "live-card-desktop.png",
        "live-card-phone.png",
        "nav-phone.png",
        "folded-card.png",
        "markdown-desktop.png",
        "markdown-phone.png",
        "audit-1400.png",
        "audit-390.png",
        "readme-card.png",
        "plan-card.png",
        "rewind-armed.png",
        "rewind-done.png",
    ] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 1000, "screenshot {shot} missing or empty");
    }
}
