//! Environment and shell variables: which names change how programs are
//! found, loaded or configured.
//!
//! A `safe` command is trusted to only read because toolgate knows the
//! program and its options. That knowledge is about the program run the
//! usual way: `LD_PRELOAD=./x.so ls`, `PATH=.:$PATH ls`,
//! `GIT_EXTERNAL_DIFF=./x git diff`, `PAGER='sh -c id' git log` and
//! `HOME=./evil git status` (which reads `./evil/.gitconfig`) all run code
//! of the caller's choosing through a "read-only" program. So every variable
//! a command sets is judged:
//!
//! - a name known to be harmless (`LANG`, `LC_*`, `TZ`, `TERM`, `NO_COLOR`,
//!   `COLUMNS`, `RUST_LOG`, `CI`, …) changes nothing;
//! - a name known to decide which code runs ([`VarClass::CodeLoading`]) is
//!   `dangerous`;
//! - any other name is [`VarClass::Unknown`], at least `dev`: toolgate
//!   cannot tell what a program does with it (`RIPGREP_CONFIG_PATH` makes
//!   `rg` read a config file that can name a preprocessor).

/// What setting a variable can do to the programs that see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarClass {
    /// Changes formatting or locale only.
    Harmless,
    /// Changes which programs or code run: the search path, the dynamic
    /// loader, interpreters' start-up code, configuration that names
    /// programs (`PAGER`, `GIT_*`, `HOME`).
    CodeLoading,
    /// Neither known harmless nor known to load code.
    Unknown,
}

/// Names that only change formatting, colours or locale.
const HARMLESS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "CI",
    "DEBUG",
    "LS_COLORS",
    "GREP_COLOR",
    "GREP_COLORS",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "BLOCK_SIZE",
    "BLOCKSIZE",
    "DF_BLOCK_SIZE",
    "DU_BLOCK_SIZE",
    "LS_BLOCK_SIZE",
    "POSIXLY_CORRECT",
    // Python settings that load nothing (the rest of `PYTHON*` can).
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
];

/// Names that decide which code runs, exactly.
const CODE_LOADING: &[&str] = &[
    // Where programs, libraries and locales are found.
    "PATH",
    "EXECIGNORE",
    "CDPATH",
    "GLIBC_TUNABLES",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RESOLV_HOST_CONF",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    "GTK_MODULES",
    "GIO_MODULE_DIR",
    "GDK_PIXBUF_MODULE_FILE",
    "QT_PLUGIN_PATH",
    // The shell's own start-up code, parsing and hooks.
    "BASH_ENV",
    "ENV",
    "SHELL",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_CMDS",
    "BASH_ALIASES",
    "BASH_LOADABLES_PATH",
    "BASH_XTRACEFD",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "IFS",
    "GLOBIGNORE",
    "HISTFILE",
    "ZDOTDIR",
    "INPUTRC",
    "FCEDIT",
    // Where configuration (which names programs to run) is read from.
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "AWS_CONFIG_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "RIPGREP_CONFIG_PATH",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "LESS",
    "MORE",
    "MANOPT",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKE",
    "MAKEFILES",
    "MAKESHELL",
    // Programs run on a program's behalf.
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "SYSTEMD_EDITOR",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "FZF_DEFAULT_COMMAND",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "FC",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "CARGO",
    "RUSTDOC",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    // Interpreters' start-up code and module paths.
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "JAVA_HOME",
    "JAVA_OPTS",
    "MAVEN_OPTS",
    "MAVEN_ARGS",
    "GRADLE_OPTS",
    "SBT_OPTS",
    "ANT_OPTS",
    "LUA_INIT",
    "LUA_PATH",
    "LUA_CPATH",
    "TCLLIBPATH",
    "PHPRC",
    "PHP_INI_SCAN_DIR",
    "R_PROFILE",
    "R_PROFILE_USER",
    "R_ENVIRON",
    "R_ENVIRON_USER",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "GOROOT",
    "GOPATH",
    "GOBIN",
    "GOENV",
    "GOPROXY",
    "GOEXPERIMENT",
    "GOAUTH",
    "GCCGO",
];

/// Prefixes of names that decide which code runs.
const CODE_LOADING_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "BASH_FUNC_",
    "GIT_",
    "PYTHON",
    "PERL5",
    "PERL_",
    "CARGO_",
    "RUSTUP_",
    "CGO_",
    "NPM_CONFIG_",
    "npm_config_",
    "YARN_",
    "PIP_",
    "UV_",
    "LESSKEY",
    "GEM_",
    "BUNDLE_",
    "JULIA_",
];

/// How setting `name` can change the programs that see it.
///
/// `name` may carry an array subscript (`BASH_CMDS[ls]`), which is ignored.
pub fn classify_variable(name: &str) -> VarClass {
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    let name = name.strip_suffix('+').unwrap_or(name);
    if HARMLESS.contains(&name) || name.starts_with("LC_") {
        return VarClass::Harmless;
    }
    if CODE_LOADING.contains(&name) || CODE_LOADING_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return VarClass::CodeLoading;
    }
    // npm reads `npm_config_*` whatever the case of the prefix.
    if name
        .get(..11)
        .is_some_and(|p| p.eq_ignore_ascii_case("npm_config_"))
    {
        return VarClass::CodeLoading;
    }
    VarClass::Unknown
}

/// Whether a variable set in the shell only (not exported by the line) is
/// by convention the shell's own: a name with a lower-case letter
/// (`f`, `count`, `my_dir`). Environment variables are upper-case by
/// convention, so an upper-case name may already be exported and reach
/// every program the line runs.
pub fn is_shell_local(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_lowercase())
        && !matches!(
            name,
            "http_proxy" | "https_proxy" | "ftp_proxy" | "all_proxy" | "no_proxy"
        )
}

/// Whether a word is a valid shell variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classified() {
        use VarClass::{CodeLoading as C, Harmless as H, Unknown as U};
        let cases: &[(&str, VarClass)] = &[
            ("LANG", H),
            ("LC_ALL", H),
            ("TZ", H),
            ("RUST_LOG", H),
            ("NO_COLOR", H),
            ("PYTHONUNBUFFERED", H),
            ("PATH", C),
            ("PATH+", C),
            ("LD_PRELOAD", C),
            ("LD_LIBRARY_PATH", C),
            ("BASH_ENV", C),
            ("BASH_CMDS[ls]", C),
            ("GIT_EXTERNAL_DIFF", C),
            ("PYTHONPATH", C),
            ("PYTHONSTARTUP", C),
            ("PERL5OPT", C),
            ("CARGO_TARGET_DIR", C),
            ("HOME", C),
            ("PAGER", C),
            ("IFS", C),
            ("GLIBC_TUNABLES", C),
            ("npm_config_script_shell", C),
            ("Npm_Config_Script_Shell", C),
            ("RUSTC_WORKSPACE_WRAPPER", C),
            ("CARGO", C),
            ("GOAUTH", C),
            ("MAKEFILES", C),
            ("JAVA_OPTS", C),
            ("FOO", U),
            ("TMPDIR", U),
            ("AWS_PROFILE", U),
            ("x", U),
        ];
        for (name, want) in cases {
            assert_eq!(classify_variable(name), *want, "{name}");
        }
    }

    #[test]
    fn shell_local_names() {
        assert!(is_shell_local("f"));
        assert!(is_shell_local("my_Dir"));
        assert!(!is_shell_local("FOO"));
        assert!(!is_shell_local("http_proxy"));
    }
}
