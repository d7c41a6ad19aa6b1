//! Running one command: a new process group, stdin closed, output kept as
//! head + tail, the whole group killed on timeout.
//!
//! # Process groups
//!
//! The shell is started as the leader of a new process group
//! (`setpgid(0, 0)` in the child, via `Command::process_group(0)`), so
//! everything it starts — pipelines, `&` jobs, grandchildren — shares one
//! group id, and `kill(-pgid, SIGKILL)` reaches all of them at once. Killing
//! only the shell would leave `sh -c 'sleep 100 & sleep 100'`'s sleeps
//! running, and worse, holding our output pipes open so that reading them
//! never ends. So the group is killed on timeout *and* after the shell exits
//! on its own: a foreground command's leftovers do not outlive it (use
//! `background: true` for long-running processes). A process that leaves
//! the group on purpose (`setsid`) escapes this; the output readers then
//! stop waiting after a short grace period instead of hanging.
//! See `setpgid(2)`, `kill(2)` and uv's `crates/uv/src/child.rs` for the
//! same reasoning in another tool.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::sandbox::Restriction;

/// How long output readers may go on after the process group was killed.
const READER_GRACE: Duration = Duration::from_millis(500);

/// The longest line kept, in bytes; longer lines are cut with a marker.
const MAX_LINE: usize = 2000;

/// Keeps the first `head` and the last `tail` lines of a stream, with
/// bounded memory however much is written.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_max: usize,
    tail_max: usize,
    head: Vec<String>,
    tail: VecDeque<String>,
    partial: Vec<u8>,
    lines: usize,
    bytes: usize,
}

impl HeadTail {
    pub(crate) fn new(max_lines: usize) -> Self {
        let head_max = max_lines.div_ceil(2).max(1);
        Self {
            head_max,
            tail_max: max_lines.saturating_sub(head_max).max(1),
            head: Vec::new(),
            tail: VecDeque::new(),
            partial: Vec::new(),
            lines: 0,
            bytes: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len();
        for &byte in chunk {
            if byte == b'\n' {
                self.finish_line();
            } else if self.partial.len() < MAX_LINE + 4 {
                self.partial.push(byte);
            }
        }
    }

    fn finish_line(&mut self) {
        let mut line = String::from_utf8_lossy(&self.partial).into_owned();
        if self.partial.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push_str(" …[line cut]");
        }
        self.partial.clear();
        self.lines += 1;
        if self.head.len() < self.head_max {
            self.head.push(line);
        } else {
            if self.tail.len() == self.tail_max {
                self.tail.pop_front();
            }
            self.tail.push_back(line);
        }
    }

    /// The kept text, with a marker where lines were dropped, and how many
    /// were dropped.
    pub(crate) fn finish(mut self) -> (String, usize) {
        if !self.partial.is_empty() {
            self.finish_line();
        }
        let dropped = self.lines - self.head.len() - self.tail.len();
        let mut text = self.head.join("\n");
        if dropped > 0 {
            let _ = write!(
                text,
                "\n… [{dropped} lines cut: {} lines, {} bytes in all; showing the first {} and last {}]",
                self.lines,
                self.bytes,
                self.head.len(),
                self.tail.len()
            );
        }
        if !self.tail.is_empty() {
            text.push('\n');
            text.push_str(&Vec::from(self.tail).join("\n"));
        }
        (text, dropped)
    }
}

/// How a foreground command ended.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) lines_cut: usize,
    pub(crate) duration: Duration,
}

/// What to run.
pub(crate) struct Spec<'a> {
    pub(crate) command: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a [(String, String)],
    pub(crate) timeout: Duration,
    pub(crate) max_lines: usize,
    pub(crate) restriction: Option<&'a Restriction>,
}

/// Builds the shell command: `sh -c COMMAND` in a new process group.
pub(crate) fn shell(spec: &Spec<'_>) -> Command {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .process_group(0)
        .kill_on_drop(true);
    for (key, value) in spec.env {
        command.env(key, value);
    }
    if let Some(restriction) = spec.restriction {
        restriction.apply_to(&mut command);
    }
    command
}

/// Kills every process of the group led by `pid`. A group that is already
/// gone is not an error.
pub(crate) fn kill_group(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

async fn drain(mut reader: impl AsyncRead + Unpin, max_lines: usize) -> HeadTail {
    let mut kept = HeadTail::new(max_lines);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(buf.get(..n).unwrap_or_default()),
        }
    }
    kept
}

/// Runs a command to completion or timeout.
pub(crate) async fn run(spec: &Spec<'_>) -> std::io::Result<Finished> {
    let started = Instant::now();
    let mut command = shell(spec);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let pid = child.id().unwrap_or(0);
    let stdout = child
        .stdout
        .take()
        .map(|out| tokio::spawn(drain(out, spec.max_lines)));
    let stderr = child
        .stderr
        .take()
        .map(|err| tokio::spawn(drain(err, spec.max_lines)));

    let (status, timed_out) = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(status) => (Some(status?), false),
        Err(_) => (None, true),
    };
    // Whether it finished or not, nothing of the group may outlive the call.
    kill_group(pid);
    let status = match status {
        Some(status) => Some(status),
        None => child.wait().await.ok(),
    };

    let collect = |handle: Option<tokio::task::JoinHandle<HeadTail>>| async move {
        let Some(handle) = handle else {
            return (String::new(), 0);
        };
        let abort = handle.abort_handle();
        if let Ok(Ok(kept)) = tokio::time::timeout(READER_GRACE, handle).await {
            kept.finish()
        } else {
            abort.abort();
            (
                "[output unavailable: a process that left the group kept the pipe open]".to_owned(),
                0,
            )
        }
    };
    let (stdout, out_cut) = collect(stdout).await;
    let (stderr, err_cut) = collect(stderr).await;

    Ok(Finished {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out,
        stdout,
        stderr,
        lines_cut: out_cut + err_cut,
        duration: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_are_kept_with_a_marker() {
        let mut kept = HeadTail::new(4);
        for i in 1..=10 {
            kept.push(format!("line {i}\n").as_bytes());
        }
        let (text, dropped) = kept.finish();
        assert_eq!(dropped, 6);
        assert_eq!(
            text,
            "line 1\nline 2\n… [6 lines cut: 10 lines, 71 bytes in all; showing the first 2 and last 2]\nline 9\nline 10"
        );
    }

    #[test]
    fn short_output_is_untouched_and_partial_lines_count() {
        let mut kept = HeadTail::new(10);
        kept.push(b"a\nb");
        kept.push(b"c");
        assert_eq!(kept.finish(), ("a\nbc".to_owned(), 0));
    }

    #[test]
    fn long_lines_are_cut_and_memory_stays_bounded() {
        let mut kept = HeadTail::new(2);
        kept.push(&vec![b'x'; 1_000_000]);
        kept.push(b"\n");
        for _ in 0..100_000 {
            kept.push(b"y\n");
        }
        assert!(kept.partial.capacity() < 10_000);
        let (text, dropped) = kept.finish();
        assert!(text.starts_with(&"x".repeat(MAX_LINE)));
        assert!(text.contains("…[line cut]"));
        assert_eq!(dropped, 99_999);
    }
}

#[cfg(test)]
mod process_tests {
    use super::*;

    fn spec<'a>(command: &'a str, cwd: &'a Path, timeout_ms: u64) -> Spec<'a> {
        Spec {
            command,
            cwd,
            env: &[],
            timeout: Duration::from_millis(timeout_ms),
            max_lines: 50,
            restriction: None,
        }
    }

    fn alive(pid: i32) -> bool {
        rustix::process::test_kill_process(rustix::process::Pid::from_raw(pid).unwrap()).is_ok()
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_process_tree() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let command = format!(
            "sleep 100 & echo $! > {0}; sh -c 'sleep 100 & echo $! >> {0}; wait' & wait",
            pids.display()
        );
        let finished = run(&spec(&command, dir.path(), 500)).await.unwrap();
        assert!(finished.timed_out);
        assert_eq!(finished.exit_code, None);
        assert!(
            finished.duration < Duration::from_secs(5),
            "{:?}",
            finished.duration
        );
        let text = std::fs::read_to_string(&pids).unwrap();
        let pids: Vec<i32> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(pids.len(), 2, "{text}");
        // Killed processes may linger as zombies for a moment.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for pid in pids {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie_or_gone = state.is_empty() || state.split_whitespace().nth(2) == Some("Z");
            assert!(zombie_or_gone || !alive(pid), "pid {pid} survived: {state}");
        }
    }

    #[tokio::test]
    async fn leftovers_of_a_finished_command_do_not_hold_it_open() {
        let dir = tempfile::tempdir().unwrap();
        let finished = run(&spec("sleep 100 & echo started", dir.path(), 10_000))
            .await
            .unwrap();
        assert_eq!(finished.exit_code, Some(0));
        assert_eq!(finished.stdout, "started");
        assert!(
            finished.duration < Duration::from_secs(3),
            "{:?}",
            finished.duration
        );
    }

    #[tokio::test]
    async fn output_env_cwd_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let env = [("GREETING".to_owned(), "hello there".to_owned())];
        let mut s = spec(
            "echo \"$GREETING\"; pwd; echo oops >&2; exit 3",
            dir.path(),
            5000,
        );
        s.env = &env;
        let finished = run(&s).await.unwrap();
        assert_eq!(finished.exit_code, Some(3));
        let canonical = dir.path().canonicalize().unwrap();
        assert_eq!(
            finished.stdout,
            format!("hello there\n{}", canonical.display())
        );
        assert_eq!(finished.stderr, "oops");
    }

    #[tokio::test]
    async fn stdin_is_closed_and_long_output_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let finished = run(&spec("cat; seq 1 1000", dir.path(), 5000))
            .await
            .unwrap();
        assert_eq!(
            finished.exit_code,
            Some(0),
            "cat must see end of input at once"
        );
        assert!(finished.stdout.starts_with("1\n2\n"));
        assert!(finished.stdout.ends_with("999\n1000"));
        assert!(
            finished.stdout.contains("[950 lines cut: 1000 lines"),
            "{}",
            finished.stdout
        );
        assert_eq!(finished.lines_cut, 950);
    }
}
