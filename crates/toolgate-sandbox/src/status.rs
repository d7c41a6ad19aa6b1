//! What the kernel lets the sandbox enforce on this machine.

use std::fmt;

use crate::Limit;

/// How much of the sandbox is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No sandbox: processes run with toolgate's rights (only their
    /// environment is built).
    Off,
    /// Landlock only: writes confined, but nothing hidden — sensitive files,
    /// the home directory and other processes stay visible.
    LandlockOnly,
    /// Namespaces, mounts and Landlock: the full profiles.
    Full,
}

/// What the sandbox enforces here, and what it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxStatus {
    pub(crate) level: Level,
    pub(crate) landlock_abi: i32,
    pub(crate) missing: Vec<String>,
    pub(crate) limits: Vec<LimitStatus>,
    /// How the full sandbox gets its namespaces here, or why it does not
    /// (see [`SandboxStatus::namespaces`]).
    pub(crate) namespaces: String,
}

/// How one [`Limit`] is enforced here, or why it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitStatus {
    pub(crate) limit: Limit,
    pub(crate) value: String,
    pub(crate) enforced: bool,
    pub(crate) how: String,
}

impl LimitStatus {
    /// Which limit.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Its value and what it applies to: "512 per command", "1 GiB per
    /// process".
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether the kernel enforces it here as [`value`](Self::value) says
    /// (memory limited per process only, without a cgroup, is not).
    pub fn enforced(&self) -> bool {
        self.enforced
    }

    /// How it is enforced ("cgroup v1 `pids.max`", "`RLIMIT_CPU`"), or why
    /// it is not.
    pub fn how(&self) -> &str {
        &self.how
    }
}

impl fmt::Display for LimitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.enforced {
            write!(f, "{} {} ({})", self.limit.key(), self.value, self.how)
        } else {
            write!(
                f,
                "{} {}: not enforced ({})",
                self.limit.key(),
                self.value,
                self.how
            )
        }
    }
}

impl SandboxStatus {
    /// How processes get their namespaces here, in words for `doctor`:
    /// a user namespace of their own (the usual case), namespaces made
    /// directly because toolgate holds `CAP_SYS_ADMIN` where user
    /// namespaces are refused, or why there are none (and what to do).
    pub fn namespaces(&self) -> &str {
        &self.namespaces
    }

    /// How much is in force.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The kernel's Landlock ABI version (0: none).
    pub fn landlock_abi(&self) -> i32 {
        self.landlock_abi
    }

    /// Whether the read-only profile is enforced by the kernel: a command
    /// judged read-only can then run without asking, because if the
    /// judgement is wrong it still cannot write, reach the network, run
    /// other programs, or read a secret.
    pub fn enforces_read_only(&self) -> bool {
        self.level == Level::Full && self.landlock_abi >= 1
    }

    /// `full`, `landlock only` or `none`.
    pub fn level_name(&self) -> &'static str {
        match self.level {
            Level::Full => "full",
            Level::LandlockOnly => "landlock only",
            Level::Off => "none",
        }
    }

    /// What is not enforced, one item per line, for people (limits that
    /// are not enforced included).
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// How each [`Limit`] is enforced here, in [`Limit::ALL`]'s order.
    pub fn limits(&self) -> &[LimitStatus] {
        &self.limits
    }

    /// The limits in one line, for people: `processes 512 per command
    /// (cgroup v1 pids.max); memory …`.
    pub fn limits_line(&self) -> String {
        self.limits
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.level {
            Level::Full => write!(
                f,
                "namespaces + read-only mounts + Landlock ABI {}",
                self.landlock_abi
            )?,
            Level::LandlockOnly => write!(f, "Landlock ABI {} only", self.landlock_abi)?,
            Level::Off => f.write_str("none")?,
        }
        if !self.missing.is_empty() {
            write!(f, " (not enforced: {})", self.missing.join("; "))?;
        }
        Ok(())
    }
}
