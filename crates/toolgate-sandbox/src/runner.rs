//! Running a process to completion: a new process group, stdin given or
//! closed, output kept within bounds, the whole group killed on timeout.
//!
//! # Process groups
//!
//! The process is started as the leader of a new process group
//! (`process_group(0)`), so `kill(-pgid, SIGKILL)` reaches everything it
//! started at once. In a full sandbox the leader is the keeper outside the
//! PID namespace; killing it kills the namespace's first process
//! (`PR_SET_PDEATHSIG`), and with it every process inside. Without the
//! namespace, the group is what is killed. It is killed on timeout *and*
//! after a normal exit, so that `sleep 100 &` left behind by a finished
//! command neither outlives it nor holds our output pipes open. See
//! `setpgid(2)`, `kill(2)`, `pid_namespaces(7)` and uv's
//! `crates/uv/src/child.rs`.
//!
//! # Limits
//!
//! Once the group is gone, the run's cgroup counters (where a cgroup
//! limited it), its exit signal and its error output say which
//! [limits](crate::limits) it hit ([`Finished::limits_hit`]); then the
//! cgroup is removed.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::capture::{Capped, HeadTail};
use crate::limits::{self, Ending};
use crate::{LimitHit, Sandbox, SandboxError, Spawn};

/// How long output readers may go on after the process group was killed.
const READER_GRACE: Duration = Duration::from_millis(500);

/// How output is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// The first and last lines, this many in all per stream (long lines cut).
    Lines(usize),
    /// The first bytes, this many per stream.
    Bytes(usize),
}

/// How to run a process to completion.
#[derive(Debug, Clone)]
pub struct RunOptions {
    timeout: Duration,
    stdin: Option<Vec<u8>>,
    capture: Capture,
}

impl RunOptions {
    /// Kill the process and everything it started after `timeout`. Output is
    /// kept as 200 lines per stream, stdin is closed.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            stdin: None,
            capture: Capture::Lines(200),
        }
    }

    /// Feed these bytes on stdin, then close it. By default, stdin is
    /// closed from the start.
    #[must_use]
    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// How output is kept. By default, [`Capture::Lines`]`(200)`.
    #[must_use]
    pub fn capture(mut self, capture: Capture) -> Self {
        self.capture = capture;
        self
    }
}

/// How a process ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Finished {
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// Whether it was killed at the timeout.
    pub timed_out: bool,
    /// What was kept of standard output.
    pub stdout: String,
    /// What was kept of standard error.
    pub stderr: String,
    /// Lines (or bytes, with [`Capture::Bytes`]) left out of both streams.
    pub cut: usize,
    /// From start to end.
    pub duration: Duration,
    /// The limits it hit, or may have hit (see [`LimitHit::certain`]).
    pub limits_hit: Vec<LimitHit>,
}

/// Kills every process of the group led by `pid`. A group that is already
/// gone is not an error.
pub fn kill_group(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

enum Kept {
    Lines(HeadTail),
    Bytes(Capped),
}

impl Kept {
    fn push(&mut self, chunk: &[u8]) {
        match self {
            Self::Lines(k) => k.push(chunk),
            Self::Bytes(k) => k.push(chunk),
        }
    }

    fn finish(self) -> (String, usize) {
        match self {
            Self::Lines(k) => k.finish(),
            Self::Bytes(k) => k.finish(),
        }
    }
}

async fn drain(mut reader: impl AsyncRead + Unpin, capture: Capture) -> Kept {
    let mut kept = match capture {
        Capture::Lines(n) => Kept::Lines(HeadTail::new(n)),
        Capture::Bytes(n) => Kept::Bytes(Capped::new(n)),
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(buf.get(..n).unwrap_or_default()),
        }
    }
    kept
}

impl Sandbox {
    /// Runs `spawn` to completion or timeout (see the rules atop `runner.rs`).
    pub async fn run(&self, spawn: &Spawn, options: &RunOptions) -> Result<Finished, SandboxError> {
        let started = Instant::now();
        let mut prepared = self.prepare(spawn)?;
        prepared
            .command_mut()
            .stdin(if options.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut running = prepared.spawn()?;
        let child = &mut running.child;
        let pid = child.id().unwrap_or(0);
        if let (Some(bytes), Some(mut stdin)) = (options.stdin.clone(), child.stdin.take()) {
            // A process that never reads stdin closes the pipe: that is fine.
            tokio::spawn(async move {
                let _ = stdin.write_all(&bytes).await;
                let _ = stdin.shutdown().await;
            });
        }
        let stdout = child
            .stdout
            .take()
            .map(|out| tokio::spawn(drain(out, options.capture)));
        let stderr = child
            .stderr
            .take()
            .map(|err| tokio::spawn(drain(err, options.capture)));

        let (status, timed_out) = match tokio::time::timeout(options.timeout, child.wait()).await {
            Ok(status) => (Some(status.map_err(SandboxError::Wait)?), false),
            Err(_) => (None, true),
        };
        // Whether it finished or not, nothing of the group may outlive it.
        kill_group(pid);
        let status = match status {
            Some(status) => Some(status),
            None => child.wait().await.ok(),
        };

        let collect = |handle: Option<tokio::task::JoinHandle<Kept>>| async move {
            let Some(handle) = handle else {
                return (String::new(), 0);
            };
            let abort = handle.abort_handle();
            if let Ok(Ok(kept)) = tokio::time::timeout(READER_GRACE, handle).await {
                kept.finish()
            } else {
                abort.abort();
                (
                    "[output unavailable: a process that left the group kept the pipe open]"
                        .to_owned(),
                    0,
                )
            }
        };
        let (stdout, out_cut) = collect(stdout).await;
        let (stderr, err_cut) = collect(stderr).await;
        let exit_code = status.and_then(|s| s.code());
        let signal = status.and_then(|s| s.signal());
        let counters = running
            .lease
            .tree()
            .map(crate::linux::cgroup::Tree::counters)
            .unwrap_or_default();
        let limits_hit = limits::hits(
            self.limits(),
            &Ending {
                signal,
                exit_code,
                failed: exit_code != Some(0) || timed_out,
                stderr: &stderr,
                cgroup_pids: counters.pids,
                cgroup_memory: counters.memory,
                tmpfs: self.tmpfs_capped(),
            },
        );
        // The cgroup goes with the lease, once what is left in it is gone.
        if let Some(tree) = running.lease.tree_mut() {
            tree.remove().await;
        }
        drop(running);
        Ok(Finished {
            exit_code,
            signal,
            timed_out,
            stdout,
            stderr,
            cut: out_cut + err_cut,
            duration: started.elapsed(),
            limits_hit,
        })
    }
}
