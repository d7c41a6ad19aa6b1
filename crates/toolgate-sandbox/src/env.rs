//! The environment of a process toolgate starts: built, not inherited.
//!
//! # Rules
//!
//! 1. Start from nothing.
//! 2. Take the [core variables](CORE_VARIABLES) (and every `LC_*`) from
//!    toolgate's own environment, when set: what programs need to find
//!    themselves, their toolchains, the user's locale and terminal.
//! 3. Take the names in `inherit`. An exact name is taken whatever it looks
//!    like; a pattern (`NPM_CONFIG_*`) never takes a name that
//!    [looks like a credential](looks_like_credential) or is one of the
//!    *secret names* (the variables toolgate itself reads keys from).
//! 4. A core variable that looks like a credential, or is a secret name, is
//!    not taken (rule 2), and neither is a proxy URL that carries a password.
//! 5. `TMPDIR` is `/tmp` (the sandbox's private one), `HOME` is always set,
//!    `PATH` defaults to the system directories.
//! 6. Then `set`, then what the caller adds for one process (a hook's
//!    `TOOLGATE_*` variables, `run_command`'s `env`, an MCP server's `env`),
//!    later winning.
//! 7. With a [`NetworkPolicy`](crate::NetworkPolicy), standard-profile
//!    processes get the [proxy variables](proxy_variables) last, over
//!    everything: nothing else leads out of their network namespace.
//!
//! Codex's `shell_environment_policy` is the reference; unlike its default,
//! nothing is inherited wholesale.

use std::collections::BTreeMap;

/// Variables taken from toolgate's environment by default (plus `LC_*`).
pub const CORE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "JAVA_HOME",
    "NVM_DIR",
    "NVM_BIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "VOLTA_HOME",
    "SDKMAN_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// Parts of a name that mark it as holding a credential.
const CREDENTIAL_MARKERS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "COOKIE",
    "PRIVATE",
    "SIGNATURE",
    "DSN",
    "WEBHOOK",
    "_PAT",
    "PAT_",
];

/// Whether a variable's name looks like it holds a credential:
/// `OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `DB_PASSWORD`, `SENTRY_DSN`, `GH_PAT`… Case-insensitive.
pub fn looks_like_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    // `AUTH` as in `SSH_AUTH_SOCK` or `_authToken`, not as in `GIT_AUTHOR_NAME`.
    let auth = upper
        .match_indices("AUTH")
        .any(|(at, _)| !upper[at + 4..].starts_with("OR"));
    auth || CREDENTIAL_MARKERS.iter().any(|m| upper.contains(m)) || upper == "PAT"
}

/// How the environment of every process is built (see the rules atop `env.rs`).
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    inherit: Vec<String>,
    set: BTreeMap<String, String>,
    secret_names: Vec<String>,
}

impl EnvPolicy {
    /// A policy with the core variables only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also take these from toolgate's environment: exact names, or a
    /// prefix followed by `*`. By default, none.
    #[must_use]
    pub fn inherit<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.inherit.extend(names.into_iter().map(Into::into));
        self
    }

    /// Set these variables to these values. By default, none.
    #[must_use]
    pub fn set<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.set
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Variables that hold toolgate's own secrets (the model server's API
    /// key variable, MCP bearer-token variables): never taken unless listed
    /// by exact name in [`inherit`](Self::inherit). By default, none.
    #[must_use]
    pub fn secret_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.secret_names.extend(names.into_iter().map(Into::into));
        self
    }

    /// Builds the base environment from `host` (toolgate's own variables).
    pub fn build<I, K, V>(&self, host: I) -> BTreeMap<String, String>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut out = BTreeMap::new();
        for (name, value) in host {
            let (name, value): (String, String) = (name.into(), value.into());
            if self.takes(&name, &value) {
                out.insert(name, value);
            }
        }
        out.insert("TMPDIR".to_owned(), "/tmp".to_owned());
        out.entry("PATH".to_owned())
            .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".to_owned());
        if !out.contains_key("HOME") {
            let home =
                std::env::home_dir().map_or_else(|| "/".to_owned(), |h| h.display().to_string());
            out.insert("HOME".to_owned(), home);
        }
        for (name, value) in &self.set {
            out.insert(name.clone(), value.clone());
        }
        out
    }

    fn takes(&self, name: &str, value: &str) -> bool {
        if self.inherit.iter().any(|i| i == name) {
            return true;
        }
        let secret = looks_like_credential(name) || self.secret_names.iter().any(|s| s == name);
        if secret {
            return false;
        }
        let core = CORE_VARIABLES.contains(&name) || name.starts_with("LC_");
        if core {
            return !(name.to_ascii_lowercase().ends_with("_proxy") && has_password(value));
        }
        self.inherit.iter().any(|pattern| {
            pattern
                .strip_suffix('*')
                .is_some_and(|prefix| name.starts_with(prefix))
        })
    }
}

/// The variables that point programs at the sandbox's proxy (rule 7):
/// `HTTP_PROXY`, `HTTPS_PROXY` and their lower-case forms (curl, git,
/// Python, pip, cargo, Go, Node's `undici` with `NODE_USE_ENV_PROXY`…),
/// `ALL_PROXY` as SOCKS5 with remote resolution (`socks5h`: the proxy
/// resolves, the sandbox has no DNS), npm's `proxy` and `https-proxy`
/// settings (as variables they win over a `.npmrc` that names another
/// proxy, which would be unreachable), and `NO_PROXY` for the namespace's
/// own loopback, so servers a command starts inside the sandbox are
/// reached directly.
pub(crate) fn proxy_variables(http: u16, socks: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{http}");
    let socks = format!("socks5h://127.0.0.1:{socks}");
    let local = "localhost,127.0.0.1,::1";
    [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("http_proxy", &http),
        ("https_proxy", &http),
        ("ALL_PROXY", &socks),
        ("all_proxy", &socks),
        ("npm_config_proxy", &http),
        ("npm_config_https_proxy", &http),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.clone()))
    .chain(
        ["NO_PROXY", "no_proxy"]
            .into_iter()
            .map(|k| (k.to_owned(), local.to_owned())),
    )
    .collect()
}

/// Whether a URL carries a password (`http://user:pass@host`).
fn has_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
        let cases: &[(&str, bool)] = &[
            ("OPENAI_API_KEY", true),
            ("ANTHROPIC_API_KEY", true),
            ("GITHUB_TOKEN", true),
            ("GH_TOKEN", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("AWS_SESSION_TOKEN", true),
            ("DB_PASSWORD", true),
            ("PGPASSWORD", true),
            ("SENTRY_DSN", true),
            ("GH_PAT", true),
            ("SSH_AUTH_SOCK", true),
            ("npm_config__authToken", true),
            ("my_private_thing", true),
            ("PATH", false),
            ("HOME", false),
            ("LANG", false),
            ("CARGO_HOME", false),
            ("TERM", false),
            ("PATTERN", false),
            ("GIT_AUTHOR_NAME", false),
            ("TOOLGATE_SESSION_ID", false),
            ("GITHUB_AUTH", true),
        ];
        for (name, expected) in cases {
            assert_eq!(looks_like_credential(name), *expected, "{name}");
        }
    }

    fn host() -> Vec<(&'static str, &'static str)> {
        vec![
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("OPENAI_API_KEY", "sk-1"),
            ("ANTHROPIC_API_KEY", "sk-2"),
            ("MY_SERVICE_URL", "http://x"),
            ("NPM_CONFIG_REGISTRY", "http://r"),
            ("NPM_CONFIG__AUTH", "secret"),
            ("TOOLGATE_CONFIG", "/x"),
            ("LLM_KEYVAR", "v"),
            ("https_proxy", "http://user:pw@proxy:3128"),
            ("http_proxy", "http://proxy:3128"),
            ("TMPDIR", "/var/host-tmp"),
        ]
    }

    #[test]
    fn the_core_is_taken_and_nothing_else() {
        let env = EnvPolicy::new().build(host());
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["HOME", "LANG", "LC_ALL", "PATH", "TMPDIR", "http_proxy"]
        );
        assert_eq!(env["TMPDIR"], "/tmp");
    }

    #[test]
    fn inherit_set_and_secret_names() {
        let env = EnvPolicy::new()
            .inherit([
                "MY_SERVICE_URL",
                "NPM_CONFIG_*",
                "ANTHROPIC_API_KEY",
                "LLM_*",
            ])
            .set([("CI", "1"), ("LANG", "en_US.UTF-8")])
            .secret_names(["LLM_KEYVAR"])
            .build(host());
        assert_eq!(env["MY_SERVICE_URL"], "http://x");
        assert_eq!(env["NPM_CONFIG_REGISTRY"], "http://r");
        assert!(
            !env.contains_key("NPM_CONFIG__AUTH"),
            "a pattern never takes a credential"
        );
        assert_eq!(env["ANTHROPIC_API_KEY"], "sk-2", "listed by exact name");
        assert!(!env.contains_key("OPENAI_API_KEY"));
        assert!(
            !env.contains_key("LLM_KEYVAR"),
            "a secret name needs its exact name"
        );
        assert_eq!(env["CI"], "1");
        assert_eq!(env["LANG"], "en_US.UTF-8", "set wins");
    }

    #[test]
    fn defaults_when_the_host_has_nothing() {
        let env = EnvPolicy::new().build(Vec::<(String, String)>::new());
        assert_eq!(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
        assert!(env.contains_key("HOME"));
    }
}
