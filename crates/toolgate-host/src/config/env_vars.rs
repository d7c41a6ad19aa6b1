//! Every environment variable toolgate reads, in one place.

/// The configuration file to use instead of `WORKSPACE/toolgate.yaml` (same
/// as `--config`).
pub const TOOLGATE_CONFIG: &str = "TOOLGATE_CONFIG";
/// The workspace directory (same as `--workspace`). Default: the current
/// directory.
pub const TOOLGATE_WORKSPACE: &str = "TOOLGATE_WORKSPACE";
/// The confirmation mode (same as `--mode`).
pub const TOOLGATE_MODE: &str = "TOOLGATE_MODE";
/// Dry-run on (`1`/`true`/`yes`/`on`) or off (`0`/`false`/`no`/`off`);
/// same as `--dry-run`.
pub const TOOLGATE_DRY_RUN: &str = "TOOLGATE_DRY_RUN";
/// Apply the workspace configuration file fully for this run, trusted or
/// not, without recording trust (same as `--trust-workspace`; for CI):
/// `1`/`true`/`yes`/`on`, or `0`/`false`/`no`/`off`. `--no-trust-workspace`
/// wins over it.
pub const TOOLGATE_TRUST_WORKSPACE: &str = "TOOLGATE_TRUST_WORKSPACE";
/// Log filter for stderr diagnostics, in `tracing` `EnvFilter` syntax
/// (e.g. `toolgate=debug`). `RUST_LOG` is read when this is unset.
pub const TOOLGATE_LOG: &str = "TOOLGATE_LOG";
/// The standard fallback for [`TOOLGATE_LOG`].
pub const RUST_LOG: &str = "RUST_LOG";
/// How stderr diagnostics are written (same as `--log-format`): `text`
/// (the default), or `json`, one JSON object per line.
pub const TOOLGATE_LOG_FORMAT: &str = "TOOLGATE_LOG_FORMAT";
/// Base directory of the user configuration (`$XDG_CONFIG_HOME/toolgate/config.yaml`)
/// and of the trust store (`$XDG_CONFIG_HOME/toolgate/trusted.json`).
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// Used for `~/.config/toolgate/config.yaml` and `~/.config/toolgate/trusted.json`
/// when `XDG_CONFIG_HOME` is unset.
pub const HOME: &str = "HOME";

/// Prefix of the variables that set any configuration key:
/// `TOOLGATE_<SECTION>__<KEY>[__<KEY>…]`, upper-case, with `__` between
/// levels, e.g. `TOOLGATE_CONFIRMATION__MODE=yolo` or
/// `TOOLGATE_WORKSPACE__ALLOW_DELETE=true`. The value is read as a YAML
/// scalar. Only names containing `__` are read this way, so variables that
/// toolgate sets for its hooks (`TOOLGATE_EVENT`, …) are never mistaken for
/// configuration.
pub const CONFIG_KEY_PREFIX: &str = "TOOLGATE_";
