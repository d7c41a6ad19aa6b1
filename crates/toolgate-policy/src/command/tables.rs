//! Which programs are read-only, which are development tools, and which need
//! their arguments looked at.
//!
//! The base lists are seed 000's; everything not listed is `dangerous`.

/// How a program is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Reads or prints only, whatever its arguments.
    Safe,
    /// A development tool (build, test, lint, format), whatever its arguments.
    Dev,
    /// Needs its arguments looked at: see `classify::check`.
    Check(Check),
}

/// The programs whose arguments decide their class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    Find,
    Fd,
    Rg,
    Tree,
    Sort,
    Uniq,
    Xxd,
    Tee,
    Sed,
    Awk,
    Date,
    Hostname,
    Yq,
    Tar,
    Unzip,
    Declare,
    Git,
    Cargo,
    Rustc,
    Rustup,
    Go,
    Npm,
    Pnpm,
    Yarn,
    Bun,
    Pip,
    Python,
    Node,
    Deno,
    Interpreter,
    Shell,
    Source,
    Docker,
    Kubectl,
    Helm,
    Terraform,
    Make,
    Maven,
    Gradle,
    Dotnet,
    /// `uv run X`, `poetry run X`, `bundle exec X`, …: classify `X`.
    Runner,
    /// `npx X`, `bunx X`: `X` may be downloaded first.
    Npx,
    /// A wrapper given no program (`env`, `xargs`, `nice`, …).
    WrapperAlone,
    /// `command -v X`, `command -V X`.
    Command,
}

/// The rule for a program name (the last path component).
pub(crate) fn lookup(name: &str) -> Option<Rule> {
    use Check as C;
    let rule = match name {
        // Read or print only.
        "ls" | "ll" | "dir" | "vdir" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep"
        | "fgrep" | "zgrep" | "ag" | "ack" | "file" | "which" | "whereis" | "type" | "echo"
        | "printf" | "pwd" | "printenv" | "whoami" | "id" | "groups" | "uname" | "uptime"
        | "true" | "false" | ":" | "test" | "[" | "basename" | "dirname" | "realpath"
        | "readlink" | "stat" | "du" | "df" | "free" | "ps" | "pgrep" | "nproc" | "lscpu"
        | "lsblk" | "lsof" | "cut" | "tr" | "column" | "nl" | "fold" | "fmt" | "paste" | "join"
        | "comm" | "diff" | "cmp" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum"
        | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" | "base64" | "base32" | "od"
        | "hexdump" | "strings" | "less" | "more" | "jq" | "rev" | "tac" | "expand"
        | "unexpand" | "seq" | "sleep" | "expr" | "cal" | "locale" | "tty" | "cd" | "pushd"
        | "popd" | "dirs" | "unset" | "set" | "shopt" | "wait" | "jobs" | "read" | "getconf"
        | "arch" | "hash" | "zcat" | "bzcat" | "xzcat" | "numfmt" | "look" | "factor" | "exit"
        | "return" | "break" | "continue" | "shift" | "pr" | "tsort" | "mapfile" | "readarray"
        | "let" | "[[" | "((" | "for" | "case" | "users" | "who" | "w" | "last" | "top"
        | "htop" | "nm" | "objdump" | "readelf" | "ldd" | "size" | "shellcheck" => Rule::Safe,
        // Development tools: build, test, lint, format.
        "pytest" | "py.test" | "mypy" | "ruff" | "black" | "isort" | "flake8" | "pylint"
        | "pyright" | "tox" | "nox" | "coverage" | "eslint" | "prettier" | "tsc" | "jest"
        | "vitest" | "mocha" | "cmake" | "ctest" | "ninja" | "javac" | "gcc" | "g++" | "cc"
        | "c++" | "clang" | "clang++" | "rustfmt" | "gofmt" | "golangci-lint" | "pre-commit"
        | "bazel" | "bazelisk" | "meson" | "hadolint" | "stylelint" | "biome" | "swiftc"
        | "kotlinc" | "scalac" | "sbt" | "phpunit" | "rspec" | "rubocop" | "clippy-driver"
        | "cargo-nextest" | "nextest" | "gotestsum" | "staticcheck" | "buf" | "protoc" => Rule::Dev,
        "find" => Rule::Check(C::Find),
        "fd" | "fdfind" => Rule::Check(C::Fd),
        "rg" => Rule::Check(C::Rg),
        "tree" => Rule::Check(C::Tree),
        "sort" => Rule::Check(C::Sort),
        "uniq" => Rule::Check(C::Uniq),
        "xxd" => Rule::Check(C::Xxd),
        "tee" => Rule::Check(C::Tee),
        "sed" | "gsed" => Rule::Check(C::Sed),
        "awk" | "gawk" | "mawk" | "nawk" => Rule::Check(C::Awk),
        "date" => Rule::Check(C::Date),
        "hostname" => Rule::Check(C::Hostname),
        "yq" => Rule::Check(C::Yq),
        "tar" => Rule::Check(C::Tar),
        "unzip" => Rule::Check(C::Unzip),
        "export" | "declare" | "typeset" | "local" | "readonly" => Rule::Check(C::Declare),
        "git" => Rule::Check(C::Git),
        "cargo" => Rule::Check(C::Cargo),
        "rustc" => Rule::Check(C::Rustc),
        "rustup" => Rule::Check(C::Rustup),
        "go" => Rule::Check(C::Go),
        "npm" => Rule::Check(C::Npm),
        "pnpm" => Rule::Check(C::Pnpm),
        "yarn" => Rule::Check(C::Yarn),
        "bun" => Rule::Check(C::Bun),
        "pip" | "pip3" => Rule::Check(C::Pip),
        "node" | "nodejs" => Rule::Check(C::Node),
        "deno" => Rule::Check(C::Deno),
        "ruby" | "perl" | "php" | "java" | "lua" | "luajit" | "Rscript" | "R" | "julia"
        | "swift" | "kotlin" | "scala" | "groovy" | "tclsh" | "osascript" => {
            Rule::Check(C::Interpreter)
        }
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" => {
            Rule::Check(C::Shell)
        }
        "source" | "." => Rule::Check(C::Source),
        "docker" | "podman" => Rule::Check(C::Docker),
        "kubectl" | "oc" => Rule::Check(C::Kubectl),
        "helm" => Rule::Check(C::Helm),
        "terraform" | "tofu" => Rule::Check(C::Terraform),
        "make" | "gmake" => Rule::Check(C::Make),
        "mvn" | "mvnw" => Rule::Check(C::Maven),
        "gradle" | "gradlew" => Rule::Check(C::Gradle),
        "dotnet" => Rule::Check(C::Dotnet),
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "bundle" => Rule::Check(C::Runner),
        "npx" | "bunx" | "pnpx" => Rule::Check(C::Npx),
        "env" | "xargs" | "nice" | "timeout" | "nohup" | "time" | "exec" | "stdbuf" | "builtin" => {
            Rule::Check(C::WrapperAlone)
        }
        "command" => Rule::Check(C::Command),
        _ if is_python(name) => Rule::Check(C::Python),
        _ => return None,
    };
    Some(rule)
}

/// `python`, `python3`, `python3.12`, `pypy3`.
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"))
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Variables whose value decides which code a program loads or runs: setting
/// one turns a read-only command into arbitrary code
/// (`GIT_EXTERNAL_DIFF=./x git diff`, `LD_PRELOAD=./x.so ls`).
pub(crate) fn is_code_loading_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "LESSOPEN",
        "LESSCLOSE",
        "RUSTC_WRAPPER",
        "RUSTC",
        "SSH_ASKPASS",
        "BROWSER",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC_")
}

/// Programs that download: the left side of `curl … | sh`.
pub(crate) const DOWNLOADERS: &[&str] = &[
    "curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lynx", "links", "ftp", "tftp",
];

/// Programs that run code read from standard input when given no script:
/// the right side of `curl … | sh`.
///
/// Shells, plus the interpreters commonly piped into in install one-liners
/// (`curl … | python3`, `| perl`, `| node`): a downloaded program runs
/// unseen whichever language it is in.
pub(crate) const STDIN_INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "python", "python2",
    "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun",
];

/// What some common programs outside the tables do, for the reason given when
/// they are `dangerous`.
pub(crate) fn known_danger(name: &str) -> Option<&'static str> {
    Some(match name {
        "rm" | "rmdir" | "unlink" | "shred" => "deletes files",
        "mv" => "moves or renames files",
        "cp" | "install" | "rsync" => "copies files and can overwrite them",
        "mkdir" | "mktemp" => "creates directories or files",
        "touch" | "truncate" | "fallocate" => "creates or changes files",
        "ln" => "creates links",
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => "changes permissions or ownership",
        "patch" | "ed" | "ex" | "vi" | "vim" | "nvim" | "nano" | "emacs" => "edits files",
        "kill" | "pkill" | "killall" => "signals processes",
        "curl" | "wget" | "fetch" | "http" | "xh" | "aria2c" | "nc" | "ncat" | "netcat"
        | "socat" | "telnet" | "ftp" => "reaches the network",
        "ssh" | "scp" | "sftp" | "mosh" => "reaches another machine",
        "dd" => "copies raw data between files and devices",
        "systemctl" | "service" | "launchctl" | "crontab" | "at" => {
            "manages services or scheduled jobs"
        }
        "apt" | "apt-get" | "dpkg" | "yum" | "dnf" | "rpm" | "pacman" | "apk" | "brew" | "snap"
        | "flatpak" | "port" | "zypper" | "nix-env" | "gem" | "conda" | "mamba" | "pipx" => {
            "installs or removes software"
        }
        "mount" | "umount" | "losetup" | "fdisk" | "sfdisk" | "parted" | "gdisk" | "sgdisk" => {
            "changes disks or mounts"
        }
        "iptables" | "nft" | "ip" | "ifconfig" | "route" => "changes the network configuration",
        "useradd" | "userdel" | "usermod" | "passwd" | "groupadd" | "chpasswd" => "changes users",
        "open" | "xdg-open" => "opens files or URLs in other programs",
        "watch" | "parallel" | "nohup" | "setsid" | "screen" | "tmux" => "runs other commands",
        _ => return None,
    })
}
