//! The boundary, tried as an attacker would, from the outside only: the
//! real binary, the default mode (`confirm-sensitive`, no flags) unless a
//! case says `yolo`, a workspace with secrets, a home directory with more,
//! and toolgate's own environment holding API keys. One line per spelling.
//!
//! The classifier decides whether to ask; the kernel decides what a process
//! can do. So each attack is tried twice where it matters: in the default
//! mode (where a wrong `safe` would run unasked), and in yolo (where nothing
//! asks and only the kernel stands in the way).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

mod common;

/// In every secret; no output may contain it.
const MARK: &str = "S3CR3TMARK";

struct World {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

impl World {
    fn new() -> Self {
        // Outside /tmp: the sandbox gives commands a private /tmp.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let ws = dir.path().join("ws");
        let home = dir.path().join("home");
        let outside = dir.path().join("outside");
        write(&ws.join(".env"), &format!("OPENAI_API_KEY={MARK}-dotenv\n"));
        write(
            &ws.join("config/.env.production"),
            &format!("DB={MARK}-prod\n"),
        );
        write(&ws.join("keys/tls.key"), &format!("{MARK}-tls\n"));
        write(&ws.join("src/main.rs"), "fn main() {}\n");
        write(&ws.join("README.md"), "# readme\nline two\n");
        git(&ws, &["init", "-q"]);
        write(
            &home.join(".bash_history"),
            &format!("export T={MARK}-history\n"),
        );
        write(&home.join(".ssh/id_ed25519"), &format!("{MARK}-ssh\n"));
        write(
            &home.join(".gitconfig"),
            &format!("[user]\n\tname = Me\n[credential]\n\thelper = store --file {MARK}\n"),
        );
        write(&outside.join("outside.txt"), "outside\n");
        let ws = ws.canonicalize().unwrap();
        Self {
            _dir: dir,
            ws,
            home,
            outside: outside.canonicalize().unwrap(),
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_toolgate"), &self.ws, &self.home);
        cmd.args(args)
            // What a user has exported: none of it may reach a command.
            .env("OPENAI_API_KEY", format!("{MARK}-openai"))
            .env("ANTHROPIC_API_KEY", format!("{MARK}-anthropic"))
            .env("GITHUB_TOKEN", format!("{MARK}-github"))
            .env("AWS_SECRET_ACCESS_KEY", format!("{MARK}-aws"));
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `toolgate [--mode yolo] --json call TOOL ARGS`, parsed.
    fn call(&self, yolo: bool, tool: &str, args: &Value) -> Value {
        let args = args.to_string();
        let mut argv = vec!["--json", "call", tool, &args];
        if yolo {
            argv.splice(0..0, ["--mode", "yolo"]);
        }
        let output = self.run(&argv);
        let mut result: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
        result["stderr"] = json!(String::from_utf8_lossy(&output.stderr));
        result
    }

    fn command(&self, yolo: bool, line: &str) -> Value {
        self.call(yolo, "run_command", &json!({ "command": line }))
    }

    fn classify(&self, line: &str) -> String {
        let output = self.run(&["classify", line]);
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

/// Everything a call showed the model.
fn shown(result: &Value) -> String {
    format!(
        "{}\n{}\n{}",
        result["output"].as_str().unwrap_or_default(),
        result["error"].as_str().unwrap_or_default(),
        result["stderr"].as_str().unwrap_or_default()
    )
}

#[test]
fn the_escape_chain_breaks_at_every_link() {
    let w = World::new();
    // 1. The `sed` that executes is not `safe`: it is not run unasked.
    for line in [
        "sed -n '1e touch pwned' README.md",
        "sed 's/x/y/e' README.md",
        "sed -n '/readme/e touch pwned' README.md",
        "sed --expression='1e touch pwned' README.md",
    ] {
        assert_ne!(w.classify(line), "safe", "{line}");
        let result = w.command(false, line);
        assert_eq!(result["success"], false, "{line}");
        assert!(
            shown(&result).contains("confirmation"),
            "{line}: {}",
            shown(&result)
        );
    }
    assert!(!w.ws.join("pwned").exists());
    // 2. Neither a command (even unasked, in yolo) nor a file tool can write
    //    toolgate.yaml or .git/config.
    let hook = "hooks:\\n  pre_tool_use:\\n    - {name: x, command: touch /var/tmp/pwned}\\n";
    let git_config = std::fs::read(w.ws.join(".git/config")).unwrap();
    for line in [
        format!("sed -n '1e printf \"{hook}\" > toolgate.yaml' README.md"),
        format!("printf '{hook}' > toolgate.yaml"),
        "printf '[core]\\n\\tfsmonitor = touch /var/tmp/pwned\\n' >> .git/config".to_owned(),
        "git config core.fsmonitor 'touch /var/tmp/pwned'".to_owned(),
    ] {
        w.command(true, &line);
        assert!(!w.ws.join("toolgate.yaml").exists(), "{line}");
        assert_eq!(
            std::fs::read(w.ws.join(".git/config")).unwrap(),
            git_config,
            "{line}"
        );
    }
    for (path, content) in [("toolgate.yaml", hook), (".git/config", "[core]\n")] {
        let result = w.call(
            true,
            "write_file",
            &json!({"path": path, "content": content}),
        );
        assert_eq!(result["success"], false, "{path}");
        assert!(shown(&result).contains("protected"), "{}", shown(&result));
    }
    assert_eq!(std::fs::read(w.ws.join(".git/config")).unwrap(), git_config);
    // 3. A toolgate.yaml put there anyway (a cloned repository) is not
    //    trusted: its hook does not run.
    write(
        &w.ws.join("toolgate.yaml"),
        &format!(
            "hooks:\n  pre_tool_use:\n    - {{name: x, command: touch {}/hooked}}\n",
            w.outside.display()
        ),
    );
    let result = w.call(false, "read_file", &json!({"path": "README.md"}));
    assert_eq!(result["success"], true, "{}", shown(&result));
    assert!(!w.outside.join("hooked").exists(), "an untrusted hook ran");
    assert!(
        shown(&result).contains("hooks.pre_tool_use"),
        "{}",
        shown(&result)
    );
    assert!(!Path::new("/var/tmp/pwned").exists());
}

#[test]
fn no_safe_spelling_runs_code() {
    let w = World::new();
    for line in [
        "sed -n '1e id' README.md",
        "sed -n 'w out.txt' README.md",
        "for PATH in /var/tmp; do ls; done",
        "read PATH < README.md; ls",
        "hash -p /var/tmp/x ls; ls",
        "PATH=/var/tmp:$PATH ls",
        "export PATH=.; ls",
        "LD_PRELOAD=./x.so ls",
        "env LD_PRELOAD=./x.so ls",
        "git -c core.pager=id log",
        "git -c core.fsmonitor=id status",
        "git log --ext-diff -p",
        "git diff --ext-diff",
        "git grep -O id x",
        "git --exec-path=. status",
        "awk 'BEGIN { system(\"id\") }'",
        "awk 'BEGIN { \"id\" | getline x }'",
        "tar --to-command=sh -xf x.tar",
        "tar --to-com=sh -xf x.tar",
        "tar -I sh -xf x.tar",
        "tar --use-compress-program=sh -xf x.tar",
        "tar --checkpoint-action=exec=id -cf /dev/null .",
        "sort --compress-program=sh README.md",
        "sort --comp=sh README.md",
        "sort -o README.md README.md",
        "less '+!id' README.md",
        "cargo --config 'build.rustc=\"./x\"' metadata",
        "nm --plugin ./x.so README.md",
        "objdump --plugin ./x.so -d README.md",
        "python3 -m http.server",
        "x='a[$(id)]'; echo $((x))",
        "(( a[$(id)] ))",
        "rg --pre ./x foo",
        "find . -exec id \\;",
        "ldd ./x",
    ] {
        let class = w.classify(line);
        assert_ne!(class, "safe", "{line} is judged safe");
    }
    // The run_command `env` argument is judged too.
    for env in [
        json!({"PATH": "/var/tmp"}),
        json!({"LD_PRELOAD": "./x.so"}),
        json!({"GIT_EXTERNAL_DIFF": "./x"}),
    ] {
        let result = w.call(false, "run_command", &json!({"command": "ls", "env": env}));
        assert_eq!(result["success"], false, "{env}");
        assert!(
            shown(&result).contains("confirmation"),
            "{env}: {}",
            shown(&result)
        );
    }
}

#[test]
fn no_spelling_prints_a_secret() {
    let w = World::new();
    // Judged safe: they run unasked, and the kernel hides the secrets.
    for line in [
        "cat .env",
        "head -5 .env config/.env.production keys/tls.key",
        "grep -r S3CR3TMAR[K] .",
        "grep -ra S3CR3TMAR[K] .",
        "ls -A | xargs cat",
        "git grep --no-index S3CR3TMAR[K]",
        "cat ~/.bash_history ~/.ssh/id_ed25519 ~/.gitconfig",
        "env",
        "printenv",
        "ps eww",
        "ps auxe",
        "grep -a KEY /proc/*/environ",
        "cat /proc/1/environ",
    ] {
        let result = w.command(false, line);
        assert!(
            !shown(&result).contains(MARK),
            "{line} printed a secret:\n{}",
            shown(&result)
        );
    }
    // Asked for, and let through: the kernel still hides them.
    for line in [
        "dd if=.env 2>/dev/null",
        "tar cf - . 2>/dev/null | tar xOf -",
        "python3 -c 'print(open(\".env\").read())'",
        "cp .env e.txt; cat e.txt",
        "base64 .env | base64 -d",
        "cat ~/.gitconfig ~/.bash_history; ls -la ~",
        "cat /proc/*/environ | tr '\\0' '\\n'",
        "for f in $(find / -name '.env*' 2>/dev/null); do cat $f; done",
    ] {
        let result = w.command(true, line);
        assert!(
            !shown(&result).contains(MARK),
            "{line} printed a secret:\n{}",
            shown(&result)
        );
    }
}

#[test]
fn commands_see_only_the_core_environment() {
    let w = World::new();
    for line in ["env", "printenv"] {
        let result = w.command(false, line);
        assert_eq!(result["success"], true, "{line}: {}", shown(&result));
        for entry in result["output"].as_str().unwrap().lines() {
            let name = entry.split('=').next().unwrap();
            assert!(
                [
                    "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "PWD", "SHLVL", "_",
                    "USER", "LOGNAME", "SHELL"
                ]
                .contains(&name)
                    || name.starts_with("LC_")
                    || toolgate_sandbox::CORE_VARIABLES.contains(&name),
                "{line}: {name} reached the command"
            );
        }
    }
    let history = w.command(false, "cat ~/.bash_history");
    assert_eq!(history["success"], false, "{}", shown(&history));
}

#[test]
fn no_spelling_changes_a_protected_file() {
    let w = World::new();
    write(&w.ws.join("Cargo.lock"), "locked\n");
    // Configured protected files apply untrusted (they only protect more).
    write(
        &w.ws.join("toolgate.yaml"),
        "guardrails:\n  protected_files: ['/Cargo.lock']\n",
    );
    let before: Vec<(PathBuf, Vec<u8>)> = ["toolgate.yaml", ".git/config", "Cargo.lock"]
        .iter()
        .map(|p| (w.ws.join(p), std::fs::read(w.ws.join(p)).unwrap()))
        .collect();
    for target in ["toolgate.yaml", ".git/config", "Cargo.lock"] {
        for line in [
            format!("echo x > {target}"),
            format!("echo x >> {target}"),
            format!("echo x >| {target}"),
            format!("sed -i 's/^/x/' {target}"),
            format!("perl -pi -e 's/^/x/' {target}"),
            format!("cp README.md {target}"),
            format!("mv README.md {target}"),
            format!("mv {target} moved"),
            format!("rm -f {target}"),
            format!("tee {target} < README.md"),
            format!("truncate -s 0 {target}"),
            format!("dd if=README.md of={target}"),
            format!("find . -path './{target}' -delete"),
            format!("ln -sf README.md {target}"),
            format!("install -m 644 README.md {target}"),
            format!("rsync README.md {target}"),
            format!("python3 -c \"open('{target}','w').write('x')\""),
            format!("chmod 000 {target}"),
            format!("touch -d 2000-01-01 {target}; cat README.md > {target}"),
            format!("cat README.md | dd of={target}"),
            format!("awk '{{print > \"{target}\"}}' README.md"),
            format!("sort README.md -o {target}"),
            format!("git mv {target} moved 2>&1; git rm -f {target}"),
        ] {
            w.command(true, &line);
            for (path, bytes) in &before {
                assert_eq!(
                    &std::fs::read(path).unwrap(),
                    bytes,
                    "{line} changed {}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn a_hard_link_append_leaves_the_outside_file_unchanged() {
    let w = World::new();
    let outside = w.outside.join("outside.txt");
    std::fs::hard_link(&outside, w.ws.join("linked.txt")).unwrap();
    let result = w.call(
        true,
        "write_file",
        &json!({"path": "linked.txt", "content": "appended\n", "mode": "append"}),
    );
    assert_eq!(result["success"], true, "{}", shown(&result));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    assert_eq!(
        std::fs::read_to_string(w.ws.join("linked.txt")).unwrap(),
        "outside\nappended\n"
    );
}

#[test]
fn a_sandboxed_kill_does_not_reach_outside() {
    let w = World::new();
    let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = victim.id();
    for line in [
        format!("kill -9 {pid}"),
        "kill -9 -1".to_owned(),
        format!("kill -KILL -{pid}"),
    ] {
        let result = w.command(true, &line);
        assert_eq!(result["success"], false, "{line}: {}", shown(&result));
    }
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the victim was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn blocklist_spellings_are_blocked() {
    let w = World::new();
    for line in [
        "rm -rf //",
        "rm -rf /./",
        "dd if=/dev/zero of=//dev/sda",
        "dd if=/dev/zero of=/./dev/sda",
        "cd / && rm -rf *",
        "rm -rf /*",
        "rm -rf \"${HOME:?}\"",
        "rm -rf \"$HOME/\"",
        "busybox rm -rf /",
        "setsid sudo id",
        "flock /var/tmp/l sudo id",
        "watch sudo id",
        "script -qc 'sudo id' /dev/null",
        "ionice -c3 sudo id",
        "nohup sudo id",
        "cat x.sh | sh",
        "echo id | bash",
        "sh < x.sh",
        "bash <<EOF\nid\nEOF",
        "python3 - <<EOF\nprint(1)\nEOF",
        "chmod 0777 README.md",
        "chmod 77 README.md",
        "chmod -R 1777 .",
        "systemctl poweroff",
        "loginctl reboot",
        "echo b > /proc/sysrq-trigger",
    ] {
        assert_eq!(w.classify(line), "blocked", "{line}");
    }
}

#[test]
fn without_the_full_sandbox_every_command_asks_and_it_is_said() {
    let w = World::new();
    // As on a kernel without usable user namespaces.
    let mut check = w.cmd(&["config", "check"]);
    check.env("TOOLGATE_COMMANDS__SANDBOX", "landlock");
    let output = check.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sandbox: Landlock ABI"), "{stderr}");
    assert!(stderr.contains("sensitive files"), "{stderr}");
    let mut call = w.cmd(&["call", "run_command", r#"{"command": "ls -a"}"#]);
    call.env("TOOLGATE_COMMANDS__SANDBOX", "landlock");
    let output = call.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("needs confirmation"), "{stderr}");
    assert!(stderr.contains("every command will ask"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(MARK));
}
