//! Where the user's configuration files are.

use std::path::{Path, PathBuf};

use super::env_vars;

/// `$XDG_CONFIG_HOME/toolgate`, else `~/.config/toolgate`.
pub(crate) fn user_config_dir(env: &[(String, String)]) -> Option<PathBuf> {
    let get = |key: &str| {
        env.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let base = get(env_vars::XDG_CONFIG_HOME)
        .map(PathBuf::from)
        .or_else(|| get(env_vars::HOME).map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("toolgate"))
}

pub(crate) fn user_config_path(env: &[(String, String)]) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| dir.join("config.yaml"))
}

/// Where the trust store lives: `trusted.json` next to the user file.
pub fn trust_store_path(env: &[(String, String)]) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| dir.join("trusted.json"))
}
