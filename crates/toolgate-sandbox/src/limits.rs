//! [`Limits`]: what a command tree may consume, and how a run that hit a
//! limit is recognised ([`LimitHit`]).
//!
//! # How each limit is enforced
//!
//! | limit | per | by |
//! |---|---|---|
//! | processes and threads | command tree | a cgroup's `pids.max` where toolgate can make one; else `RLIMIT_NPROC` (see below) |
//! | memory | command tree, and each process | a cgroup's `memory.max` (v2) or `memory.limit_in_bytes` (v1), swap included; and `RLIMIT_DATA` on every process |
//! | CPU time | process | `RLIMIT_CPU`: `SIGXCPU` at the limit, `SIGKILL` a second later |
//! | file size | file | `RLIMIT_FSIZE`: `SIGXFSZ`, or `EFBIG` when that is ignored |
//! | open files | process | `RLIMIT_NOFILE` |
//! | `/tmp`, `/dev/shm` | command tree | the `size=` of the private tmpfs each tree gets (full sandbox only) |
//!
//! Resource limits are set by the child just before `exec`, soft equal to
//! hard so a process cannot raise them (`setrlimit(2)`), except CPU time,
//! whose hard limit is one second above the soft one: at the soft limit the
//! kernel sends `SIGXCPU`, which names the limit in the result; a process
//! that ignores it gets `SIGKILL` a second later. (In the full sandbox the
//! command's first process is PID 1 of its namespace, which the kernel does
//! not let `SIGXCPU` or `SIGXFSZ` kill: it gets `SIGKILL` at the hard CPU
//! limit, which the keeper reports as `SIGXCPU`, and `EFBIG` from a write
//! past the file size limit.) A limit toolgate's own hard limit is already
//! below is left at that (lower) value.
//!
//! ## Why `RLIMIT_DATA` and not `RLIMIT_AS`
//!
//! `RLIMIT_AS` counts address space, and runtimes reserve much more of it
//! than they use: V8 reserves its pointer-compression cage, Go its arenas,
//! the JVM its maximum heap, all as inaccessible mappings. A limit on
//! address space breaks them at start. `RLIMIT_DATA` counts only private
//! writable mappings (heap, anonymous memory, thread stacks), which is what
//! a runaway allocation grows; a reservation counts once it is made
//! writable. Programs built with `AddressSanitizer` map terabytes of shadow
//! memory writable and do not run under either limit.
//!
//! ## Processes: cgroups, and `RLIMIT_NPROC`'s peculiarities
//!
//! `RLIMIT_NPROC` is not a per-tree limit: the kernel compares it with the
//! number of tasks (processes *and* threads) of the user, counted per user
//! namespace, and never applies it to root (user ID 0 of the initial
//! namespace, even inside a user namespace of its own). So:
//!
//! - in the full sandbox, each command tree has its own user namespace,
//!   where the count starts at zero: `RLIMIT_NPROC`, set after the
//!   namespace is made, limits the tree exactly;
//! - without namespaces, the parent counts the user's tasks (from `/proc`)
//!   and sets the limit that many above the limit: approximate, since other
//!   processes of the user come and go;
//! - as root, only a cgroup limits processes. Where none can be made,
//!   processes are not limited, and the [status](crate::SandboxStatus) says
//!   so.
//!
//! The cgroups are described in the `linux::cgroup` module.

use std::fmt;
use std::str::FromStr;

/// One kind of limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Processes and threads of one command tree.
    Processes,
    /// Memory of one command tree (and of each process).
    Memory,
    /// CPU time of each process.
    CpuTime,
    /// The size of each file written.
    FileSize,
    /// Open files of each process.
    OpenFiles,
    /// The size of the private `/tmp`.
    TmpSize,
    /// The size of the private `/dev/shm`.
    ShmSize,
}

impl Limit {
    /// Every limit, in the order they are shown.
    pub const ALL: &[Limit] = &[
        Self::Processes,
        Self::Memory,
        Self::CpuTime,
        Self::FileSize,
        Self::OpenFiles,
        Self::TmpSize,
        Self::ShmSize,
    ];

    /// The name of its [`LimitsBuilder`] setter, which is also its key in
    /// toolgate's configuration (`commands.limits.processes`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Processes => "processes",
            Self::Memory => "memory",
            Self::CpuTime => "cpu_seconds",
            Self::FileSize => "file_size",
            Self::OpenFiles => "open_files",
            Self::TmpSize => "tmp_size",
            Self::ShmSize => "shm_size",
        }
    }

    /// Its name in a sentence: "the {name} limit".
    pub fn name(self) -> &'static str {
        match self {
            Self::Processes => "process",
            Self::Memory => "memory",
            Self::CpuTime => "CPU time",
            Self::FileSize => "file size",
            Self::OpenFiles => "open files",
            Self::TmpSize => "/tmp size",
            Self::ShmSize => "/dev/shm size",
        }
    }

    /// The smallest value [`LimitsBuilder::build`] accepts: below it, a
    /// shell cannot start.
    fn minimum(self) -> u64 {
        match self {
            Self::Processes => 8,
            Self::Memory => 32 << 20,
            Self::CpuTime => 1,
            Self::FileSize | Self::TmpSize | Self::ShmSize => 1 << 20,
            Self::OpenFiles => 32,
        }
    }

    fn is_size(self) -> bool {
        matches!(
            self,
            Self::Memory | Self::FileSize | Self::TmpSize | Self::ShmSize
        )
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A [`Limits`] value the builder refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitsError {
    /// Below the smallest value a shell can run with.
    #[error("the {limit} limit ({}) is below {}, too little for a shell to start", show_value(*.limit, *.value), show_value(*.limit, *.minimum))]
    TooSmall {
        /// Which limit.
        limit: Limit,
        /// The value given.
        value: u64,
        /// The smallest accepted.
        minimum: u64,
    },
}

/// What every command tree toolgate starts may consume (see the [module
/// docs](self) for how each is enforced). Build with [`Limits::builder`];
/// [`Limits::default`] has the defaults each setter names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    processes: u64,
    memory: u64,
    cpu_seconds: u64,
    file_size: u64,
    open_files: u64,
    tmp_size: u64,
    shm_size: u64,
}

const GIB: u64 = 1 << 30;

/// The default memory limit: half of RAM, at most 8 GiB (8 GiB where the
/// size of RAM cannot be read).
fn default_memory() -> u64 {
    physical_memory().map_or(8 * GIB, |ram| (ram / 2).min(8 * GIB))
}

/// The default size of `/tmp` and of `/dev/shm`: a quarter of RAM, at most
/// 4 GiB.
fn default_tmpfs() -> u64 {
    physical_memory().map_or(4 * GIB, |ram| (ram / 4).min(4 * GIB))
}

/// `MemTotal` of `/proc/meminfo`, in bytes; read once per process (the
/// kernel builds the whole file on each read, and every default of
/// [`Limits`] asks).
fn physical_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            processes: 512,
            memory: default_memory(),
            cpu_seconds: 3600,
            file_size: 16 * GIB,
            open_files: 8192,
            tmp_size: default_tmpfs(),
            shm_size: default_tmpfs(),
        }
    }
}

impl Limits {
    /// Starts from the defaults.
    pub fn builder() -> LimitsBuilder {
        LimitsBuilder {
            limits: Self::default(),
        }
    }

    /// The value of `limit`: a count, seconds, or bytes.
    pub fn get(&self, limit: Limit) -> u64 {
        match limit {
            Limit::Processes => self.processes,
            Limit::Memory => self.memory,
            Limit::CpuTime => self.cpu_seconds,
            Limit::FileSize => self.file_size,
            Limit::OpenFiles => self.open_files,
            Limit::TmpSize => self.tmp_size,
            Limit::ShmSize => self.shm_size,
        }
    }

    /// `limit`'s value for people: "512", "8 GiB", "3600 s".
    pub fn show(&self, limit: Limit) -> String {
        show_value(limit, self.get(limit))
    }
}

pub(crate) fn show_value(limit: Limit, value: u64) -> String {
    if limit.is_size() {
        ByteSize(value).to_string()
    } else if limit == Limit::CpuTime {
        format!("{value} s")
    } else {
        value.to_string()
    }
}

/// Configures [`Limits`].
#[derive(Debug, Clone)]
pub struct LimitsBuilder {
    limits: Limits,
}

impl LimitsBuilder {
    /// Processes and threads one command tree may have at once (the tree's
    /// first process included). By default, 512.
    #[must_use]
    pub fn processes(mut self, count: u64) -> Self {
        self.limits.processes = count;
        self
    }

    /// Memory, in bytes: of a command tree where a cgroup limits it, and of
    /// each process (`RLIMIT_DATA`). By default, half of RAM, at most
    /// 8 GiB.
    #[must_use]
    pub fn memory(mut self, bytes: u64) -> Self {
        self.limits.memory = bytes;
        self
    }

    /// CPU time of each process, in seconds. By default, 3600.
    #[must_use]
    pub fn cpu_seconds(mut self, seconds: u64) -> Self {
        self.limits.cpu_seconds = seconds;
        self
    }

    /// The largest file a process may write, in bytes. By default, 16 GiB.
    #[must_use]
    pub fn file_size(mut self, bytes: u64) -> Self {
        self.limits.file_size = bytes;
        self
    }

    /// Files each process may have open at once. By default, 8192.
    #[must_use]
    pub fn open_files(mut self, count: u64) -> Self {
        self.limits.open_files = count;
        self
    }

    /// The size of a command tree's private `/tmp`, in bytes. By default, a
    /// quarter of RAM, at most 4 GiB.
    #[must_use]
    pub fn tmp_size(mut self, bytes: u64) -> Self {
        self.limits.tmp_size = bytes;
        self
    }

    /// The size of a command tree's private `/dev/shm`, in bytes. By
    /// default, a quarter of RAM, at most 4 GiB.
    #[must_use]
    pub fn shm_size(mut self, bytes: u64) -> Self {
        self.limits.shm_size = bytes;
        self
    }

    /// Checks that every limit leaves room for a shell to start.
    pub fn build(self) -> Result<Limits, LimitsError> {
        for &limit in Limit::ALL {
            let value = self.limits.get(limit);
            if value < limit.minimum() {
                return Err(LimitsError::TooSmall {
                    limit,
                    value,
                    minimum: limit.minimum(),
                });
            }
        }
        Ok(self.limits)
    }
}

/// A number of bytes, read and written as people do: `8GiB`, `512 MiB`,
/// `64M`, `1048576`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// A size that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a size: write a number of bytes, or one with a unit (`64MiB`, `8GiB`)")]
pub struct ByteSizeError {
    text: String,
}

impl FromStr for ByteSize {
    type Err = ByteSizeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ByteSizeError {
            text: text.to_owned(),
        };
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let number: u64 = number.parse().map_err(|_| error())?;
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => return Err(error()),
        };
        number
            .checked_mul(1 << shift)
            .map(ByteSize)
            .ok_or_else(error)
    }
}

impl fmt::Display for ByteSize {
    /// The largest binary unit that divides it exactly: `8 GiB`, `1536 MiB`,
    /// `100 bytes`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if self.0 != 0 && self.0.is_multiple_of(1 << shift) {
                return write!(f, "{} {unit}", self.0 >> shift);
            }
        }
        write!(f, "{} bytes", self.0)
    }
}

/// A limit a finished run hit, or may have hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    limit: Limit,
    certain: bool,
    value: String,
}

impl LimitHit {
    /// Which limit.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Whether the kernel said so (a signal, a cgroup's counter), rather
    /// than the process's error output.
    pub fn certain(&self) -> bool {
        self.certain
    }

    /// The limit in force, for people: "512 per command", "1 s per
    /// process".
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// What the runner knows about how a run ended, for [`hits`].
#[derive(Debug, Default)]
pub(crate) struct Ending<'a> {
    pub(crate) signal: Option<i32>,
    pub(crate) exit_code: Option<i32>,
    pub(crate) failed: bool,
    pub(crate) stderr: &'a str,
    /// The cgroup's counters, where a cgroup limited it.
    pub(crate) cgroup_pids: Option<bool>,
    pub(crate) cgroup_memory: Option<bool>,
    /// Whether `/tmp` and `/dev/shm` were capped tmpfses.
    pub(crate) tmpfs: bool,
}

/// The limits a run hit: certain from a signal or a cgroup's counter; a
/// guess from the error output of a run that failed (a failed `fork`, a
/// failed allocation), or of any run for "No space left on device" where
/// `/tmp` and `/dev/shm` are capped.
pub(crate) fn hits(limits: &Limits, ending: &Ending<'_>) -> Vec<LimitHit> {
    let text = ending.stderr;
    let says = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    let mut found: Vec<(Limit, bool)> = Vec::new();
    // A shell reports a child killed by a signal as 128 + the signal.
    let by = |signal: i32, message: &str| {
        if ending.signal == Some(signal) || text.contains(message) {
            Some(true)
        } else if ending.exit_code == Some(128 + signal) {
            Some(false)
        } else {
            None
        }
    };
    if let Some(certain) = by(libc::SIGXCPU, "CPU time limit exceeded") {
        found.push((Limit::CpuTime, certain));
    }
    if let Some(certain) = by(libc::SIGXFSZ, "File size limit exceeded") {
        found.push((Limit::FileSize, certain));
    } else if ending.failed && says(&["File too large"]) {
        // EFBIG: the writer ignored SIGXFSZ (or, as the first process of a
        // PID namespace, was not killed by it).
        found.push((Limit::FileSize, false));
    }
    match ending.cgroup_pids {
        Some(true) => found.push((Limit::Processes, true)),
        Some(false) => {}
        None => {
            if ending.failed
                && says(&[
                    "Resource temporarily unavailable",
                    "can't start new thread",
                    "cannot fork",
                ])
            {
                found.push((Limit::Processes, false));
            }
        }
    }
    if ending.cgroup_memory == Some(true) {
        found.push((Limit::Memory, true));
    } else if ending.failed
        && (says(&[
            "Cannot allocate memory",
            "MemoryError",
            "bad_alloc",
            "memory allocation of",
            "cannot allocate memory",
        ]) || text.to_ascii_lowercase().contains("out of memory"))
    {
        found.push((Limit::Memory, false));
    }
    if ending.failed
        && text
            .lines()
            .any(|l| l.contains("Too many open files") && !l.contains("in system"))
    {
        found.push((Limit::OpenFiles, false));
    }
    // A full /tmp is worth a note even when the command went on and ended
    // well: what it wrote there is cut short.
    if ending.tmpfs && says(&["No space left on device"]) {
        found.push((Limit::TmpSize, false));
        found.push((Limit::ShmSize, false));
    }
    let per_tree_memory = ending.cgroup_memory.is_some();
    found
        .into_iter()
        .map(|(limit, certain)| {
            let amount = limits.show(limit);
            let value = match limit {
                Limit::Processes => format!("{amount} per command"),
                Limit::Memory if per_tree_memory => format!("{amount} per command"),
                Limit::Memory | Limit::CpuTime | Limit::OpenFiles => {
                    format!("{amount} per process")
                }
                Limit::FileSize => format!("{amount} per file"),
                Limit::TmpSize | Limit::ShmSize => amount,
            };
            LimitHit {
                limit,
                certain,
                value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_as_people_write_them() {
        let cases: &[(&str, Option<u64>)] = &[
            ("1048576", Some(1 << 20)),
            ("64MiB", Some(64 << 20)),
            ("64 MiB", Some(64 << 20)),
            ("64m", Some(64 << 20)),
            ("8GiB", Some(8 << 30)),
            ("8G", Some(8 << 30)),
            ("2 TiB", Some(2 << 40)),
            ("1.5GiB", None),
            ("GiB", None),
            ("-1", None),
            ("8 parsecs", None),
            ("99999999999999999999", None),
            ("20000000T", None),
        ];
        for (text, expected) in cases {
            assert_eq!(
                text.parse::<ByteSize>().ok().map(|b| b.0),
                *expected,
                "{text}"
            );
        }
        for (bytes, shown) in [
            (8 << 30, "8 GiB"),
            (1536 << 20, "1536 MiB"),
            (100, "100 bytes"),
            (0, "0 bytes"),
        ] {
            assert_eq!(ByteSize(bytes).to_string(), shown);
        }
    }

    #[test]
    fn the_default_memory_is_half_of_ram_at_most_8_gib() {
        let text = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap();
        let ram = kib * 1024;
        let limits = Limits::default();
        assert_eq!(limits.get(Limit::Memory), (ram / 2).min(8 << 30));
        assert_eq!(limits.get(Limit::TmpSize), (ram / 4).min(4 << 30));
        assert_eq!(limits.get(Limit::Processes), 512);
        assert_eq!(limits.get(Limit::CpuTime), 3600);
        assert_eq!(limits.get(Limit::FileSize), 16 << 30);
        assert_eq!(limits.get(Limit::OpenFiles), 8192);
    }

    #[test]
    fn the_builder_refuses_limits_a_shell_cannot_start_under() {
        assert!(Limits::builder().processes(64).build().is_ok());
        let error = Limits::builder().processes(2).build().unwrap_err();
        assert_eq!(
            error.to_string(),
            "the process limit (2) is below 8, too little for a shell to start"
        );
        let error = Limits::builder().memory(1 << 20).build().unwrap_err();
        assert_eq!(
            error.to_string(),
            "the memory limit (1 MiB) is below 32 MiB, too little for a shell to start"
        );
        for &limit in Limit::ALL {
            assert!(Limits::default().get(limit) >= limit.minimum(), "{limit}");
        }
    }

    #[test]
    fn runs_name_the_limit_they_hit() {
        let limits = Limits::builder()
            .processes(64)
            .memory(256 << 20)
            .cpu_seconds(1)
            .build()
            .unwrap();
        let failed = |stderr| Ending {
            failed: true,
            exit_code: Some(1),
            stderr,
            ..Ending::default()
        };
        // (how it ended, the limits named with whether for certain)
        let cases: Vec<(Ending<'_>, Vec<(Limit, bool)>)> = vec![
            (Ending::default(), vec![]),
            (
                Ending {
                    signal: Some(libc::SIGXCPU),
                    failed: true,
                    ..Ending::default()
                },
                vec![(Limit::CpuTime, true)],
            ),
            (
                Ending {
                    exit_code: Some(152),
                    failed: true,
                    ..Ending::default()
                },
                vec![(Limit::CpuTime, false)],
            ),
            (
                failed("bash: line 1:  7 File size limit exceeded head -c 2M /dev/zero > f"),
                vec![(Limit::FileSize, true)],
            ),
            (
                Ending {
                    cgroup_pids: Some(true),
                    ..Ending::default()
                },
                vec![(Limit::Processes, true)],
            ),
            (
                Ending {
                    cgroup_pids: Some(false),
                    ..failed("xargs: cannot fork: Resource temporarily unavailable")
                },
                vec![],
            ),
            (
                failed("bash: fork: retry: Resource temporarily unavailable"),
                vec![(Limit::Processes, false)],
            ),
            (failed("MemoryError"), vec![(Limit::Memory, false)]),
            (
                failed("gawk: cmd. line:1: fatal: Out of memory"),
                vec![(Limit::Memory, false)],
            ),
            (
                Ending {
                    cgroup_memory: Some(true),
                    signal: Some(libc::SIGKILL),
                    failed: true,
                    ..Ending::default()
                },
                vec![(Limit::Memory, true)],
            ),
            (
                failed("OSError: [Errno 24] Too many open files: 'x'"),
                vec![(Limit::OpenFiles, false)],
            ),
            (failed("Too many open files in system"), vec![]),
            (
                failed("OSError: [Errno 27] File too large"),
                vec![(Limit::FileSize, false)],
            ),
            (
                failed("head: error writing: No space left on device"),
                vec![],
            ),
            (
                Ending {
                    tmpfs: true,
                    ..failed("head: error writing: No space left on device")
                },
                vec![(Limit::TmpSize, false), (Limit::ShmSize, false)],
            ),
            // A run that succeeded is not second-guessed from its output,
            // but for a write cut short in /tmp.
            (
                Ending {
                    failed: false,
                    exit_code: Some(0),
                    ..failed("MemoryError")
                },
                vec![],
            ),
            (
                Ending {
                    failed: false,
                    exit_code: Some(0),
                    tmpfs: true,
                    ..failed("No space left on device")
                },
                vec![(Limit::TmpSize, false), (Limit::ShmSize, false)],
            ),
        ];
        for (ending, expected) in cases {
            let got: Vec<(Limit, bool)> = hits(&limits, &ending)
                .iter()
                .map(|h| (h.limit(), h.certain()))
                .collect();
            assert_eq!(got, expected, "{ending:?}");
        }
        let hit = &hits(
            &limits,
            &Ending {
                cgroup_pids: Some(true),
                ..Ending::default()
            },
        )[0];
        assert_eq!(hit.value(), "64 per command");
    }
}
