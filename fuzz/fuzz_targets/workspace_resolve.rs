//! Resolves arbitrary strings against a fixed workspace full of traps
//! (symlinks out, chains, loops, a prefix sibling, sensitive files) and
//! checks that nothing panics, that every accepted path is inside the root,
//! and that no read ever returns content from outside.
//!
//! `@ROOT@` in the input is replaced by the workspace's absolute root, and
//! `@BASE@` by its parent, so the fuzzer can reach absolute paths inside the
//! root and the `ws-evil` prefix sibling. The same property runs without
//! libFuzzer in `crates/toolgate-core/tests/workspace_attacks.rs`
//! (`resolve_never_escapes_on_a_generated_corpus`).
#![no_main]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Component, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgate_core::Workspace;

const OUTSIDE: &[u8] = b"OUTSIDE-CONTENT";

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    ws: Workspace,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = std::env::temp_dir()
            .join(format!("toolgate-fuzz-{}", std::process::id()))
            .join("x");
        let _ = fs::remove_dir_all(&base);
        let root = base.join("ws");
        for dir in ["ws/sub", "ws/keys", "ws/.ssh", "outside", "ws-evil"] {
            fs::create_dir_all(base.join(dir)).unwrap();
        }
        let base = fs::canonicalize(&base).unwrap();
        let root = fs::canonicalize(&root).unwrap();
        fs::write(base.join("outside/secret.txt"), OUTSIDE).unwrap();
        fs::write(base.join("ws-evil/f"), OUTSIDE).unwrap();
        for (file, content) in [
            ("a.txt", "A"),
            ("sub/b.txt", "B"),
            (".env", "ENV"),
            ("keys/server.pem", "PEM"),
            (".ssh/config", "SSH"),
        ] {
            fs::write(root.join(file), content).unwrap();
        }
        let links: [(&str, PathBuf); 12] = [
            ("link_in", "sub/b.txt".into()),
            ("dirlink_in", "sub".into()),
            ("abs_in", root.join("sub/b.txt")),
            ("sub/up", "..".into()),
            ("notes.txt", ".env".into()),
            ("link_out", "../outside".into()),
            ("abs_out", base.join("outside/secret.txt")),
            ("chain1", "sub/chain2".into()),
            ("sub/chain2", "../../outside/secret.txt".into()),
            ("evil_sibling", base.join("ws-evil")),
            ("loop1", "loop2".into()),
            ("loop2", "loop1".into()),
        ];
        for (link, target) in links {
            symlink(target, root.join(link)).unwrap();
        }
        let ws = Workspace::builder(&root).build().unwrap();
        Fixture { base, root, ws }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let fx = fixture();
    let input = input
        .replace("@ROOT@", fx.root.to_str().unwrap_or_default())
        .replace("@BASE@", fx.base.to_str().unwrap_or_default());
    let Ok(p) = fx.ws.resolve(&input) else {
        return;
    };
    assert!(
        p.as_path()
            .components()
            .all(|c| matches!(c, Component::Normal(_))),
        "{input:?} resolved to {p:?}"
    );
    assert!(fx.root.join(p.as_path()).starts_with(&fx.root));
    let _ = fx.ws.display(&p);
    let _ = fx.ws.is_sensitive(&p);
    let _ = fx.ws.exists(&p);
    let _ = fx.ws.metadata(&p);
    if let Ok(bytes) = fx.ws.read_limited(&p, 1 << 16) {
        assert_ne!(bytes, OUTSIDE, "{input:?} read content from outside");
    }
    if let Ok(entries) = fx.ws.read_dir(&p) {
        assert!(entries.iter().all(|e| e.path.as_path().is_relative()));
    }
});
