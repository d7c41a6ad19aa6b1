//! `commands:` — `run_command`, background processes, and the sandbox,
//! environment and limits of every process toolgate starts.

use serde::{Deserialize, Serialize};

use crate::network::NetworkSetting;

/// `commands:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommandsSection {
    /// Whether `run_command` and `process` are registered. Default: true.
    pub enabled: bool,
    /// Refuse `dangerous` commands instead of asking. Default: false.
    pub allowed_only: bool,
    /// Output lines kept per stream (head + tail). Default: 200.
    pub max_output_lines: usize,
    /// `full` (default), `landlock` or `none`: how much of the kernel
    /// sandbox every process toolgate starts runs in.
    pub sandbox: SandboxSetting,
    /// Refuse to run commands when the full sandbox is unavailable, instead
    /// of asking before every one. Default: false.
    pub sandbox_required: bool,
    /// `allow` (default), `deny`, or `{allow: [hosts], deny: [hosts]}`
    /// (only through toolgate's proxy): the network for processes that are
    /// not read-only (read-only commands never have it). See
    /// [`crate::network`].
    pub network: NetworkSetting,
    /// The environment of every process toolgate starts.
    pub env: EnvSection,
    /// Paths under the home directory processes may read, relative to it.
    /// Default: the toolchains (`.cargo`, `.rustup`, `.npm`, `.cache`, …).
    pub home_readable: Option<Vec<String>>,
    /// More paths processes may read where the sandbox hides them
    /// (absolute, or `~/…`). Default: none.
    pub readable: Vec<String>,
    /// More paths processes may write (absolute, or `~/…`): a package
    /// cache, say. Default: none.
    pub writable: Vec<String>,
    /// More paths to hide from every process (absolute, or `~/…`), on top
    /// of the built-in secrets. Default: none.
    pub deny_read: Vec<String>,
    /// Extra blocked-command regexes, on top of the built-in blocklist.
    pub blocked_patterns: Vec<String>,
    /// Background sessions at once. Default: 8.
    pub max_sessions: usize,
    /// Seconds a finished background session is kept. Default: 1800.
    pub session_ttl: u64,
    /// Bytes of unread output kept per background session. Default: 262144.
    pub session_output_cap: usize,
    /// What every command tree may consume: processes, memory, CPU time,
    /// file size, open files, the size of `/tmp` and `/dev/shm`.
    pub limits: LimitsSection,
}

impl Default for CommandsSection {
    fn default() -> Self {
        Self {
            enabled: true,
            allowed_only: false,
            max_output_lines: 200,
            sandbox: SandboxSetting::Full,
            sandbox_required: false,
            network: NetworkSetting::Allow,
            env: EnvSection::default(),
            home_readable: None,
            readable: Vec::new(),
            writable: Vec::new(),
            deny_read: Vec::new(),
            blocked_patterns: Vec::new(),
            max_sessions: 8,
            session_ttl: 1800,
            session_output_cap: 256 * 1024,
            limits: LimitsSection::default(),
        }
    }
}

/// `commands.limits:` what every command tree toolgate starts may consume
/// (commands, background processes, hooks, gates, MCP servers, dynamic
/// tools). Sizes are bytes, or a number with a unit (`256MiB`, `8GiB`).
/// How each limit is enforced on a machine: `toolgate doctor`; the rules:
/// [`toolgate_sandbox::limits`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// Processes and threads of one command at once. Default: 512.
    pub processes: u64,
    /// Memory of one command (and of each of its processes). Default: half
    /// of RAM, at most 8 GiB.
    #[serde(with = "size")]
    pub memory: u64,
    /// Seconds of CPU time of each process. Default: 3600.
    pub cpu_seconds: u64,
    /// The largest file a process may write. Default: 16 GiB.
    #[serde(with = "size")]
    pub file_size: u64,
    /// Files each process may have open. Default: 8192.
    pub open_files: u64,
    /// The size of each command's private `/tmp`. Default: a quarter of
    /// RAM, at most 4 GiB.
    #[serde(with = "size")]
    pub tmp_size: u64,
    /// The size of each command's private `/dev/shm`. Default: a quarter of
    /// RAM, at most 4 GiB.
    #[serde(with = "size")]
    pub shm_size: u64,
}

impl Default for LimitsSection {
    fn default() -> Self {
        use toolgate_sandbox::Limit;
        let limits = toolgate_sandbox::Limits::default();
        let get = |limit| limits.get(limit);
        Self {
            processes: get(Limit::Processes),
            memory: get(Limit::Memory),
            cpu_seconds: get(Limit::CpuTime),
            file_size: get(Limit::FileSize),
            open_files: get(Limit::OpenFiles),
            tmp_size: get(Limit::TmpSize),
            shm_size: get(Limit::ShmSize),
        }
    }
}

impl LimitsSection {
    /// The limits, checked.
    pub fn to_limits(&self) -> Result<toolgate_sandbox::Limits, toolgate_sandbox::LimitsError> {
        toolgate_sandbox::Limits::builder()
            .processes(self.processes)
            .memory(self.memory)
            .cpu_seconds(self.cpu_seconds)
            .file_size(self.file_size)
            .open_files(self.open_files)
            .tmp_size(self.tmp_size)
            .shm_size(self.shm_size)
            .build()
    }
}

/// Sizes in the configuration: a number of bytes, or a string with a unit
/// (`64MiB`, `8 GiB`); written back with the largest unit that fits.
mod size {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};
    use toolgate_sandbox::ByteSize;

    #[expect(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's `with` passes the field by reference"
    )]
    pub(super) fn serialize<S: Serializer>(bytes: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&ByteSize(*bytes).to_string())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        struct Size;
        impl Visitor<'_> for Size {
            type Value = u64;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size: a number of bytes, or one with a unit (`64MiB`, `8GiB`)")
            }

            fn visit_u64<E: de::Error>(self, bytes: u64) -> Result<u64, E> {
                Ok(bytes)
            }

            fn visit_i64<E: de::Error>(self, bytes: i64) -> Result<u64, E> {
                u64::try_from(bytes).map_err(|_| E::custom("a size cannot be negative"))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<u64, E> {
                text.parse::<ByteSize>().map(|b| b.0).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Size)
    }
}

/// `commands.env:`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvSection {
    /// Variables taken from toolgate's environment besides the core ones:
    /// exact names, or `PREFIX_*`. A name that looks like a credential is
    /// only taken when listed exactly. Default: none.
    pub inherit: Vec<String>,
    /// Variables set to fixed values. Default: none.
    pub set: std::collections::BTreeMap<String, String>,
}

/// `commands.sandbox`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Namespaces, read-only and masking mounts, Landlock.
    Full,
    /// Landlock only: writes confined, nothing hidden; every command asks.
    Landlock,
    /// No kernel sandbox; every command asks.
    None,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_limits_take_sizes_with_units_and_name_every_limit() {
        let section: LimitsSection =
            serde_yaml_ng::from_str("memory: 256MiB\nfile_size: 1048576\ntmp_size: 1 GiB\n")
                .unwrap();
        assert_eq!(
            (section.memory, section.file_size, section.tmp_size),
            (256 << 20, 1 << 20, 1 << 30)
        );
        assert_eq!(section.processes, 512);
        for bad in [
            "memory: lots",
            "memory: -5",
            "memory: 1.5GiB",
            "cpu_seconds: 1s",
        ] {
            assert!(
                serde_yaml_ng::from_str::<LimitsSection>(bad).is_err(),
                "{bad}"
            );
        }
        let error = serde_yaml_ng::from_str::<LimitsSection>("shm_size: 8 parsecs").unwrap_err();
        assert!(error.to_string().contains("is not a size"), "{error}");
        // One key per limit of the sandbox, named as its builder's setters.
        let defaults = serde_yaml_ng::to_value(LimitsSection::default()).unwrap();
        let keys: Vec<&str> = defaults
            .as_mapping()
            .unwrap()
            .keys()
            .map(|k| k.as_str().unwrap())
            .collect();
        let expected: Vec<&str> = toolgate_sandbox::Limit::ALL
            .iter()
            .map(|l| l.key())
            .collect();
        assert_eq!(keys, expected);
        // Written back as it is read.
        let back: LimitsSection = serde_yaml_ng::from_value(defaults).unwrap();
        assert_eq!(back, LimitsSection::default());
        assert_eq!(
            back.to_limits().unwrap(),
            toolgate_sandbox::Limits::default()
        );
        let small = LimitsSection {
            processes: 2,
            ..LimitsSection::default()
        };
        assert!(small.to_limits().is_err());
    }
}
