#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed unwrap is a failed test"
)]
//! The profiles against attacks, through real processes: every read of a
//! secret, every write of a policy file, every escape, one line per case.
//!
//! These tests need the full sandbox (user namespaces and Landlock). On a
//! kernel without them they fail: the sandbox is this crate's whole point,
//! and a CI machine that cannot run it must not pass quietly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolgate_sandbox::{
    EnvPolicy, Finished, Level, Profile, RunOptions, Sandbox, SandboxMode, Spawn,
};

/// Text that appears in every secret; no output may contain it.
const SECRET: &str = "S3CRET";

struct World {
    _dirs: Vec<tempfile::TempDir>,
    ws: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    sandbox: Sandbox,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn git(ws: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A workspace with secrets and a git repository, a fake home directory, a
/// directory outside both, and a sandbox over them.
fn world(
    make: impl FnOnce(toolgate_sandbox::SandboxBuilder) -> toolgate_sandbox::SandboxBuilder,
) -> World {
    // Outside /tmp, which the sandbox replaces with a private one.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    let outside = base.path().join("outside");
    for dir in [&ws, &home, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    write(&ws.join(".env"), &format!("API_KEY={SECRET}-env\n"));
    write(
        &ws.join("config/.env.production"),
        &format!("DB={SECRET}-prod\n"),
    );
    write(
        &ws.join("keys/server.pem"),
        &format!("-----{SECRET}-pem-----\n"),
    );
    write(
        &ws.join("deploy/.ssh/id_ed25519"),
        &format!("{SECRET}-key\n"),
    );
    write(&ws.join("src/main.rs"), "fn main() {}\n");
    git(&ws, &["init", "-q"]);
    git(&ws, &["config", "user.email", "t@example.com"]);
    write(
        &home.join(".bash_history"),
        &format!("export TOKEN={SECRET}-history\n"),
    );
    write(&home.join(".ssh/id_rsa"), &format!("{SECRET}-ssh\n"));
    write(&home.join(".aws/credentials"), &format!("{SECRET}-aws\n"));
    write(&home.join(".cargo/bin/.keep"), "");
    write(
        &home.join(".cargo/credentials.toml"),
        &format!("token = \"{SECRET}-cargo\"\n"),
    );
    write(
        &home.join(".gitconfig"),
        &format!("[user]\n\tname = Tester\n[credential]\n\thelper = store {SECRET}\n"),
    );
    write(&home.join("notes.txt"), &format!("{SECRET}-notes\n"));
    write(&outside.join("data.txt"), "outside data\n");
    let host_env = [
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("OPENAI_API_KEY", format!("{SECRET}-openai")),
        ("ANTHROPIC_API_KEY", format!("{SECRET}-anthropic")),
        ("MY_SERVICE_TOKEN", format!("{SECRET}-service")),
    ];
    let builder = Sandbox::builder(&ws)
        .host_env(host_env)
        .env_policy(EnvPolicy::new());
    let sandbox = make(builder).build().unwrap();
    let status = sandbox.status();
    assert!(
        status.level() == Level::Full || !status.missing().iter().any(|m| m.contains("not usable")),
        "this machine cannot run the full sandbox: {status}"
    );
    World {
        ws: ws.canonicalize().unwrap(),
        home,
        outside: outside.canonicalize().unwrap(),
        _dirs: vec![base],
        sandbox,
    }
}

async fn run(world: &World, line: &str, profile: Profile) -> Finished {
    let spawn = Spawn::shell(line).profile(profile);
    world
        .sandbox
        .run(&spawn, &RunOptions::new(Duration::from_secs(20)))
        .await
        .unwrap()
}

fn all(f: &Finished) -> String {
    format!("{}\n{}", f.stdout, f.stderr)
}

#[tokio::test]
async fn no_spelling_reads_a_secret() {
    let w = world(|b| b);
    // Everything of this world (other tests' worlds are visible beside it:
    // only the home directory, the workspace's secrets and the listed
    // system secrets are hidden).
    let base = w.ws.parent().unwrap().display().to_string();
    let grep_all = format!(
        "grep -r S3CR[E]T . ; grep -rsa S3CR[E]T ~ /etc /tmp /run /root /home /dev/shm {base}/ws {base}/home"
    );
    let cases = [
        "cat .env",
        "cat ./.env config/.env.production keys/server.pem deploy/.ssh/id_ed25519",
        grep_all.as_str(),
        "ls -A | xargs cat",
        "find . -type f -exec cat {} +",
        "git grep --no-index S3CR[E]T",
        "dd if=.env 2>/dev/null",
        "tar cf - . 2>/dev/null | tar xOf -",
        "python3 -c 'print(open(\".env\").read())'",
        "cp .env /tmp/e; cat /tmp/e",
        "ln .env /tmp/l 2>&1; ln .env l2; cat l2",
        "cat < .env",
        "while read l; do echo $l; done < .env",
        "head -c 100 keys/server.pem; base64 .env",
        "cat \"$HOME/.bash_history\" ~/.ssh/id_rsa ~/.aws/credentials ~/notes.txt",
        "cat ~/.cargo/credentials.toml",
        "cat ~/.gitconfig",
        "ls -la ~ ; find ~ -type f | xargs cat",
        "env; printenv; set",
        "cat /proc/*/environ | tr '\\0' '\\n'",
        "ps eww; ps auxe",
        "grep -a S3CR[E]T /proc/*/environ /proc/*/cmdline",
        "cat /proc/1/environ",
        "cat /etc/shadow",
        "mount 2>&1; cat /proc/self/mountinfo | grep -c . ; umount /root 2>&1; umount -l .env 2>&1; cat .env",
        "unshare -Urm sh -c 'umount .env; cat .env' 2>&1",
    ];
    for line in cases {
        for profile in [
            Profile::Standard,
            Profile::ReadOnly {
                programs: vec![
                    "cat".into(),
                    "grep".into(),
                    "ls".into(),
                    "xargs".into(),
                    "find".into(),
                    "git".into(),
                    "head".into(),
                    "base64".into(),
                ],
            },
        ] {
            let done = run(&w, line, profile.clone()).await;
            assert!(
                !all(&done).contains(SECRET),
                "{line} ({profile:?}) printed a secret:\n{}",
                all(&done)
            );
        }
    }
    // Not covered, by design (README, "Security model"): a hard link to a
    // secret placed outside the workspace and the home directory beforehand
    // is another path to the same file, readable like the rest of the system.
}

#[tokio::test]
async fn the_environment_is_built_not_inherited() {
    let w = world(|b| b);
    let done = run(&w, "env", Profile::Standard).await;
    let names: Vec<&str> = done
        .stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        .collect();
    for name in &names {
        assert!(
            [
                "PATH", "HOME", "LANG", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"
            ]
            .contains(name),
            "unexpected variable {name} in {names:?}"
        );
    }
    assert!(names.contains(&"PATH") && names.contains(&"HOME"));
}

#[tokio::test]
async fn no_spelling_changes_a_policy_file() {
    let w = world(|b| b);
    let config = w.ws.join(".git/config");
    let before = std::fs::read(&config).unwrap();
    let hooks = w.ws.join(".git/hooks");
    let cases = [
        "echo '[core] fsmonitor = touch /var/tmp/pwned' >> .git/config",
        "printf x > .git/config",
        "sed -i 's/bare/xbare/' .git/config",
        "perl -pi -e 's/bare/x/' .git/config",
        "cp /dev/null .git/config",
        "cat src/main.rs > .git/config",
        "tee .git/config < src/main.rs",
        "truncate -s 0 .git/config",
        "dd if=/dev/zero of=.git/config count=1",
        "mv .git/config .git/config.bak",
        "rm -f .git/config",
        "ln -sf /dev/null .git/config",
        "git config core.fsmonitor 'touch /var/tmp/pwned'",
        "git config --file .git/config core.pager evil",
        "python3 -c \"open('.git/config','a').write('x')\"",
        "chmod 777 .git/config",
        "mv .git .git2 && mkdir .git && echo x > .git/config",
        "rm -rf .git",
        "find .git -name config -delete",
        "echo '#!/bin/sh' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "mv .git/hooks .git/h2; mkdir .git/hooks",
        "cp -r .git /tmp/g && rm -rf .git/hooks",
        "echo 'hooks: {pre_tool_use: [{command: touch /var/tmp/pwned}]}' > toolgate.yaml",
        "mkdir -p .toolgate/x; echo x > .toolgate/audit.jsonl",
        "echo x > .git/commondir 2>/dev/null; cat .git/config",
    ];
    for line in cases {
        let done = run(&w, line, Profile::Standard).await;
        assert_eq!(
            std::fs::read(&config).unwrap(),
            before,
            "{line} changed .git/config: {}",
            all(&done)
        );
        let hook_files: Vec<_> = std::fs::read_dir(&hooks)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            !hook_files.iter().any(|n| n == "pre-commit"),
            "{line} added a hook"
        );
        assert!(
            !w.ws.join("toolgate.yaml").exists(),
            "{line} left toolgate.yaml behind"
        );
        assert!(
            !w.ws.join(".toolgate").exists(),
            "{line} left .toolgate behind"
        );
        assert!(!Path::new("/var/tmp/pwned").exists());
        // Deleting history is allowed (it is data, not policy); put it back
        // for the next case.
        if !w.ws.join(".git/HEAD").exists() {
            git(&w.ws, &["init", "-q"]);
        }
    }
    // Git still works for the user, and its configuration is what it was.
    git(&w.ws, &["status", "--short"]);
}

#[tokio::test]
async fn no_git_directory_can_be_created_and_git_commands_still_work() {
    let w = world(|b| b);
    std::fs::remove_dir_all(w.ws.join(".git")).unwrap();
    for line in [
        "git init -q . 2>&1",
        "mkdir -p .git/hooks && echo x > .git/config",
        "rm -rf .git; mkdir .git",
    ] {
        run(&w, line, Profile::Standard).await;
        assert!(!w.ws.join(".git").exists(), "{line} created .git");
    }
    // A repository that existed keeps working in the sandbox: commits write
    // objects, refs and the index, which are not protected.
    git(&w.ws, &["init", "-q"]);
    git(&w.ws, &["config", "user.name", "T"]);
    git(&w.ws, &["config", "user.email", "t@example.com"]);
    let done = run(
        &w,
        "git add src && git commit -qm first && git log --oneline | wc -l",
        Profile::Standard,
    )
    .await;
    assert_eq!(done.exit_code, Some(0), "{}", all(&done));
    assert_eq!(done.stdout.trim(), "1");
}

#[tokio::test]
async fn writes_stay_in_the_workspace_and_tmp() {
    let w = world(|b| b);
    let done = run(
        &w,
        "echo a > new.txt && mkdir -p d/e && echo b > d/e/f && echo c > /tmp/t && cat /tmp/t",
        Profile::Standard,
    )
    .await;
    assert_eq!(done.exit_code, Some(0), "{}", all(&done));
    assert_eq!(std::fs::read_to_string(w.ws.join("d/e/f")).unwrap(), "b\n");
    assert_eq!(done.stdout, "c");
    // Each command has a private /tmp of its own (a size-capped tmpfs):
    // neither the host's nor the next command's.
    let done = run(&w, "cat /tmp/t", Profile::Standard).await;
    assert_ne!(done.exit_code, Some(0), "{}", all(&done));
    assert_eq!(done.stdout, "");
    assert!(!Path::new("/tmp/t").exists());
    let outside = w.outside.join("data.txt");
    for line in [
        format!("echo x > {}", outside.display()),
        format!("rm {}", outside.display()),
        format!("touch {}/new", w.outside.display()),
        format!("echo x >> {}/.bashrc", w.home.display()),
        "touch /etc/x /usr/x /var/x".to_owned(),
        "cd / && touch x".to_owned(),
    ] {
        let done = run(&w, &line, Profile::Standard).await;
        assert_ne!(done.exit_code, Some(0), "{line}: {}", all(&done));
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside data\n");
    assert!(!w.outside.join("new").exists());
    assert!(!w.home.join(".bashrc").exists());
}

#[tokio::test]
async fn read_only_cannot_write_spawn_or_connect() {
    let w = world(|b| b);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let named = |names: &[&str]| Profile::ReadOnly {
        programs: names.iter().map(|s| (*s).to_owned()).collect(),
    };
    // What it names runs; reading works.
    let done = run(&w, "cat src/main.rs | wc -l", named(&["cat", "wc"])).await;
    assert_eq!((done.exit_code, done.stdout.trim()), (Some(0), "1"));
    let cases: Vec<(String, Profile)> = vec![
        ("echo x > src/main.rs".into(), named(&[])),
        ("echo x > /tmp/x".into(), named(&[])),
        ("touch new".into(), named(&["touch"])),
        ("mkdir d".into(), named(&["mkdir"])),
        ("ls".into(), named(&["cat"])),
        ("cat src/main.rs | sh -c 'id'".into(), named(&["cat"])),
        ("/usr/bin/env id".into(), named(&["cat"])),
        ("python3 -c 'print(1)'".into(), named(&["cat"])),
        // Landlock's EXECUTE right does not cover mmap(PROT_EXEC): the
        // dynamic loader (allowed, `cat` needs it) can load another program.
        // That program still cannot write.
        (
            "/lib64/ld-linux-x86-64.so.2 /usr/bin/touch new".into(),
            named(&["cat"]),
        ),
        (format!("echo hi > /dev/tcp/127.0.0.1/{port}"), named(&[])),
        (
            format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
            ),
            named(&["python3"]),
        ),
    ];
    for (line, profile) in cases {
        let line = line.as_str();
        let done = run(&w, line, profile.clone()).await;
        assert_ne!(
            done.exit_code,
            Some(0),
            "{line} ({profile:?}): {}",
            all(&done)
        );
    }
    assert_eq!(
        std::fs::read_to_string(w.ws.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!w.ws.join("new").exists() && !w.ws.join("d").exists());
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
}

#[tokio::test]
async fn other_processes_are_out_of_reach() {
    let w = world(|b| b);
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = victim.id();
    for line in [
        format!("kill -9 {pid}"),
        format!("kill -0 {pid}"),
        "kill -9 -1".to_owned(),
        format!("ls /proc/{pid}"),
    ] {
        let done = run(&w, &line, Profile::Standard).await;
        assert_ne!(done.exit_code, Some(0), "{line}: {}", all(&done));
    }
    assert!(victim.try_wait().unwrap().is_none(), "the victim survived");
    victim.kill().unwrap();
    let done = run(&w, "ps -e | wc -l", Profile::Standard).await;
    // `ps` itself, the shell, `wc`, and the header.
    assert!(
        done.stdout.trim().parse::<u32>().unwrap() <= 4,
        "{}",
        all(&done)
    );
}

#[tokio::test]
async fn leftovers_die_with_the_command_and_timeouts_kill_everything() {
    let w = world(|b| b);
    let pids = w.ws.join("pids");
    let line = format!(
        "sleep 100 & echo $! > {0}; (sleep 100 & wait) & sleep 30",
        pids.display()
    );
    let spawn = Spawn::shell(line);
    let done = w
        .sandbox
        .run(&spawn, &RunOptions::new(Duration::from_millis(800)))
        .await
        .unwrap();
    assert!(done.timed_out);
    assert!(
        done.duration < Duration::from_secs(10),
        "{:?}",
        done.duration
    );
    // Nothing of it is left on the host: no `sleep 100` with our workspace.
    let leftover = std::process::Command::new("pgrep")
        .args(["-f", "sleep 100"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&leftover.stdout);
    for pid in text.split_whitespace() {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
        assert!(
            !cwd.starts_with(&w.ws),
            "pid {pid} survived in the workspace"
        );
    }
}

#[tokio::test]
async fn configured_paths_and_network() {
    let w = world(|b| {
        b.network(false)
            .protected_patterns(["*.lock"])
            .sensitive_patterns(["*.token"])
    });
    write(&w.ws.join("Cargo.lock"), "locked\n");
    write(&w.ws.join("a.token"), "TOKEN-VALUE\n");
    let done = run(
        &w,
        "echo x >> Cargo.lock; cat a.token .env",
        Profile::Standard,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(w.ws.join("Cargo.lock")).unwrap(),
        "locked\n"
    );
    assert!(!all(&done).contains("TOKEN-VALUE"), "{}", all(&done));
    // `.env` is no longer sensitive: the patterns were replaced.
    assert!(all(&done).contains("API_KEY"), "{}", all(&done));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let done = run(
        &w,
        &format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        Profile::Standard,
    )
    .await;
    assert_ne!(done.exit_code, Some(0));
}

#[tokio::test]
async fn landlock_only_and_off_say_what_is_missing() {
    let w = world(|b| b.mode(SandboxMode::LandlockOnly));
    let status = w.sandbox.status().clone();
    assert_eq!(status.level(), Level::LandlockOnly);
    assert!(!status.enforces_read_only());
    assert!(status.to_string().contains("sensitive files"), "{status}");
    let done = run(
        &w,
        "echo x > /var/tmp/landlock-only-probe",
        Profile::Standard,
    )
    .await;
    assert_ne!(
        done.exit_code,
        Some(0),
        "writes stay confined: {}",
        all(&done)
    );
    let off = Sandbox::builder(&w.ws)
        .mode(SandboxMode::Off)
        .build()
        .unwrap();
    assert_eq!(off.status().level(), Level::Off);
    assert!(!off.status().missing().is_empty());
}

/// Text in toolgate's own files in the test below.
const OWN: &str = "OWN-STATE";

/// toolgate's own state in a home directory that is the workspace, and in a
/// data directory outside both: no command reads it, changes it, or moves
/// its parents away to plant a new one.
#[tokio::test]
async fn own_state_is_out_of_reach_wherever_it_lies() {
    let w = world(|b| b);
    let home = w.home.canonicalize().unwrap();
    let config = home.join(".local/share/toolgate");
    write(
        &config.join("workspaces/w-1/toolgate.db"),
        &format!("{OWN}-session\n"),
    );
    write(
        &home.join("state/toolgate/config.yaml"),
        &format!("token: {OWN}-config\n"),
    );
    let data = w.outside.join("xdg-data/toolgate");
    write(&data.join("audit.jsonl"), &format!("{OWN}-audit\n"));
    write(&home.join(".local/share/other.txt"), "other\n");
    let sandbox = Sandbox::builder(&home)
        .host_env([
            ("PATH", std::env::var("PATH").unwrap()),
            ("HOME", home.display().to_string()),
        ])
        .env_policy(EnvPolicy::new())
        .readable([w.outside.clone()])
        .private([config.clone(), home.join("state/toolgate"), data.clone()])
        .build()
        .unwrap();
    assert_eq!(
        sandbox.status().level(),
        Level::Full,
        "{}",
        sandbox.status()
    );
    let run = |line: String, profile: Profile| {
        let sandbox = sandbox.clone();
        async move {
            let spawn = Spawn::shell(&line).profile(profile);
            sandbox
                .run(&spawn, &RunOptions::new(Duration::from_secs(20)))
                .await
                .unwrap()
        }
    };
    let data = data.display();
    let reads = [
        "cat .local/share/toolgate/workspaces/w-1/toolgate.db".to_owned(),
        "grep -r OWN-STATE . 2>&1".to_owned(),
        "ls -R .local/share/toolgate state 2>&1".to_owned(),
        "cp -r .local/share/toolgate /tmp/x && cat /tmp/x/workspaces/*/*".to_owned(),
        "ln -s state/toolgate/config.yaml innocent && cat innocent".to_owned(),
        format!("cat {data}/audit.jsonl"),
        format!("grep -r OWN-STATE {data}/.. 2>&1"),
        format!("ls -la {data} 2>&1"),
    ];
    for line in reads {
        for profile in [
            Profile::Standard,
            Profile::ReadOnly {
                programs: ["cat", "grep", "ls", "cp", "ln"]
                    .map(str::to_owned)
                    .to_vec(),
            },
        ] {
            let done = run(line.clone(), profile).await;
            assert!(!all(&done).contains(OWN), "{line}: {}", all(&done));
        }
    }
    assert!(
        run("cat .local/share/other.txt".to_owned(), Profile::Standard)
            .await
            .stdout
            .contains("other")
    );
    let writes = [
        "echo 'commands: {sandbox: none}' >> state/toolgate/config.yaml",
        "echo x > state/toolgate/trusted.json",
        "rm -rf state/toolgate .local/share/toolgate",
        "mv state/toolgate state/old",
        // The parents cannot be moved away to plant a fresh one.
        "mv state state-old && mkdir -p state/toolgate && echo pwned > state/toolgate/config.yaml",
        "mv .local .local-old; mkdir -p .local/share/toolgate/workspaces/w-1 \
         && echo pwned > .local/share/toolgate/workspaces/w-1/toolgate.db",
        "rm -rf .local/share; mkdir -p .local/share/toolgate",
    ];
    for line in writes {
        run(line.to_owned(), Profile::Standard).await;
    }
    assert_eq!(
        std::fs::read_to_string(home.join("state/toolgate/config.yaml")).unwrap(),
        format!("token: {OWN}-config\n")
    );
    assert!(!home.join("state/toolgate/trusted.json").exists());
    assert!(!home.join("state-old").exists() && !home.join(".local-old").exists());
    assert_eq!(
        std::fs::read_to_string(config.join("workspaces/w-1/toolgate.db")).unwrap(),
        format!("{OWN}-session\n")
    );
    // Below the full level, the status says what is exposed.
    let weaker = Sandbox::builder(&home)
        .mode(SandboxMode::LandlockOnly)
        .private([config.clone()])
        .build()
        .unwrap();
    assert!(
        weaker
            .status()
            .missing()
            .iter()
            .any(|m| m.contains("toolgate's own configuration and data") && m.contains("change")),
        "{}",
        weaker.status()
    );
    let relative = Sandbox::builder(&home).private(["rel/toolgate"]).build();
    assert!(matches!(
        relative,
        Err(toolgate_sandbox::SandboxError::PrivateNotAbsolute { .. })
    ));
}

/// The view of the file system is made when the first process starts, not
/// when the sandbox is built (a sandbox that never starts one reads nothing
/// of the home directory): a `~/.gitconfig` written in between is the one
/// the process sees, sanitised.
#[tokio::test]
async fn the_view_is_made_for_the_first_process() {
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let host_env = [
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
    ];
    let sandbox = Sandbox::builder(&ws)
        .host_env(host_env)
        .env_policy(EnvPolicy::new())
        .build()
        .unwrap();
    write(
        &home.join(".gitconfig"),
        &format!("[user]\n\tname = Tester\n[credential]\n\thelper = store {SECRET}\n"),
    );
    let done = sandbox
        .run(
            &Spawn::shell("cat ~/.gitconfig").profile(Profile::Standard),
            &RunOptions::new(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert!(done.stdout.contains("Tester"), "{}", all(&done));
    assert!(!all(&done).contains(SECRET), "{}", all(&done));
}
