//! Which programs are read-only, which are development tools, and which need
//! their arguments looked at.
//!
//! The base lists are seed 000's; everything not listed is `dangerous`. A
//! program is `safe` only with the options in its table (`specs.rs`).

use super::specs;
use toolgate_shell::options::Spec;

/// How a program is judged.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule {
    /// Reads or prints only, given the options in its table: anything else
    /// is `dev` or `dangerous` (see `options.rs`).
    Safe(&'static Spec),
    /// Reads or prints only, whatever its arguments (`ps`, `expr`).
    AnyArgs,
    /// A reader toolgate does not vouch for under the `safe` profile, with
    /// the reason: it may start other programs or write as a side effect.
    NotSafe(&'static str),
    /// A development tool (build, test, lint, format), whatever its arguments.
    Dev,
    /// Needs its arguments looked at: see `classify::check`.
    Check(Check),
}

/// The programs whose arguments decide their class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    Find,
    Pager,
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
    /// A development tool (a C compiler, `cmake`, `mypy`, `javac`): `dev`,
    /// unless an option names a program for it to run (`hooks.rs`).
    DevHooks,
    /// `uv run X`, `poetry run X`, `bundle exec X`, …: classify `X`.
    Runner,
    /// `npx X`, `bunx X`: `X` may be downloaded first.
    Npx,
    /// A wrapper given no program (`env`, `xargs`, `nice`, …).
    WrapperAlone,
}

/// The rule for a program name (the last path component). Shell builtins
/// are judged before this (`builtins.rs`).
pub(crate) fn lookup(name: &str) -> Option<Rule> {
    use Check as C;
    use specs as s;
    let rule = match name {
        "ls" | "dir" | "vdir" => Rule::Safe(&s::LS),
        "cat" => Rule::Safe(&s::CAT),
        "head" => Rule::Safe(&s::HEAD),
        "tail" => Rule::Safe(&s::TAIL),
        "wc" => Rule::Safe(&s::WC),
        "grep" | "egrep" | "fgrep" => Rule::Safe(&s::GREP),
        "cut" => Rule::Safe(&s::CUT),
        "tr" => Rule::Safe(&s::TR),
        "sort" => Rule::Safe(&s::SORT),
        "comm" => Rule::Safe(&s::COMM),
        "join" => Rule::Safe(&s::JOIN),
        "paste" => Rule::Safe(&s::PASTE),
        "nl" => Rule::Safe(&s::NL),
        "fold" => Rule::Safe(&s::FOLD),
        "fmt" => Rule::Safe(&s::FMT),
        "expand" | "unexpand" => Rule::Safe(&s::EXPAND),
        "tac" => Rule::Safe(&s::TAC),
        "rev" => Rule::Safe(&s::REV),
        "seq" => Rule::Safe(&s::SEQ),
        "basename" => Rule::Safe(&s::BASENAME),
        "dirname" => Rule::Safe(&s::DIRNAME),
        "realpath" => Rule::Safe(&s::REALPATH),
        "readlink" => Rule::Safe(&s::READLINK),
        "stat" => Rule::Safe(&s::STAT),
        "du" => Rule::Safe(&s::DU),
        "df" => Rule::Safe(&s::DF),
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum"
        | "cksum" | "sum" => Rule::Safe(&s::CHECKSUM),
        "base64" | "base32" | "basenc" => Rule::Safe(&s::BASE64),
        "od" => Rule::Safe(&s::OD),
        "printenv" | "whoami" | "groups" | "factor" | "tsort" | "arch" | "users" | "sleep"
        | "true" | "false" => Rule::Safe(&s::PLAIN),
        "id" => Rule::Safe(&s::ID),
        "uname" => Rule::Safe(&s::UNAME),
        "nproc" => Rule::Safe(&s::NPROC),
        "tty" => Rule::Safe(&s::TTY),
        "numfmt" => Rule::Safe(&s::NUMFMT),
        "pr" => Rule::Safe(&s::PR),
        "cmp" => Rule::Safe(&s::CMP),
        "diff" => Rule::Safe(&s::DIFF),
        "file" => Rule::Safe(&s::FILE),
        "which" => Rule::Safe(&s::WHICH),
        "whereis" => Rule::Safe(&s::WHEREIS),
        "pgrep" => Rule::Safe(&s::PGREP),
        "uptime" => Rule::Safe(&s::UPTIME),
        "free" => Rule::Safe(&s::FREE),
        "who" | "w" => Rule::Safe(&s::WHO),
        "last" => Rule::Safe(&s::LAST),
        "top" => Rule::Safe(&s::TOP),
        "lscpu" => Rule::Safe(&s::LSCPU),
        "lsblk" => Rule::Safe(&s::LSBLK),
        "lsof" => Rule::Safe(&s::LSOF),
        "getconf" => Rule::Safe(&s::GETCONF),
        "locale" => Rule::Safe(&s::LOCALE),
        "cal" | "ncal" => Rule::Safe(&s::CAL),
        "look" => Rule::Safe(&s::LOOK),
        "column" => Rule::Safe(&s::COLUMN),
        "hexdump" => Rule::Safe(&s::HEXDUMP),
        "strings" => Rule::Safe(&s::STRINGS),
        "nm" => Rule::Safe(&s::NM),
        "objdump" => Rule::Safe(&s::OBJDUMP),
        "readelf" => Rule::Safe(&s::READELF),
        "size" => Rule::Safe(&s::SIZE),
        "jq" => Rule::Safe(&s::JQ),
        "tree" => Rule::Safe(&s::TREE),
        "rg" => Rule::Safe(&s::RG),
        "fd" | "fdfind" => Rule::Safe(&s::FD),
        "zcat" | "bzcat" | "xzcat" | "zstdcat" => Rule::Safe(&s::ZCAT),
        // `ps` and `expr` have no option that writes or runs anything; the
        // files `echo`, `printf`, `test`, `[` and `pwd` (run by `env echo`,
        // `xargs echo`) neither.
        "ps" | "expr" | "echo" | "printf" | "test" | "[" | "pwd" => Rule::AnyArgs,
        "less" | "more" | "most" => Rule::Check(C::Pager),
        "zgrep" | "zless" | "zdiff" | "ack" | "ag" | "htop" | "man" | "info" => {
            Rule::NotSafe("starts other programs or writes as a side effect")
        }
        // Development tools: build, test, lint, format.
        "shellcheck" | "pytest" | "py.test" | "ruff" | "black" | "isort" | "flake8" | "pylint"
        | "pyright" | "tox" | "nox" | "coverage" | "eslint" | "prettier" | "tsc" | "jest"
        | "vitest" | "mocha" | "ninja" | "rustfmt" | "gofmt" | "golangci-lint" | "pre-commit"
        | "bazel" | "bazelisk" | "meson" | "hadolint" | "stylelint" | "biome" | "swiftc"
        | "kotlinc" | "scalac" | "sbt" | "phpunit" | "rspec" | "rubocop" | "clippy-driver"
        | "cargo-nextest" | "nextest" | "gotestsum" | "staticcheck" | "buf" | "protoc" => Rule::Dev,
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "cmake" | "ctest" | "mypy"
        | "javac" => Rule::Check(C::DevHooks),
        "find" => Rule::Check(C::Find),
        "uniq" => Rule::Check(C::Uniq),
        "xxd" => Rule::Check(C::Xxd),
        "tee" => Rule::Check(C::Tee),
        "sed" | "gsed" => Rule::Check(C::Sed),
        "awk" | "gawk" | "mawk" | "nawk" => Rule::Check(C::Awk),
        "date" => Rule::Check(C::Date),
        "hostname" => Rule::Check(C::Hostname),
        "yq" => Rule::Check(C::Yq),
        "tar" | "gtar" => Rule::Check(C::Tar),
        "unzip" => Rule::Check(C::Unzip),
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
        "env" | "xargs" | "nice" | "timeout" | "nohup" | "time" | "stdbuf" | "exec" | "command"
        | "builtin" | "setsid" | "ionice" | "chrt" | "taskset" | "prlimit" => {
            Rule::Check(C::WrapperAlone)
        }
        _ if is_python(name) => Rule::Check(C::Python),
        _ => return None,
    };
    Some(rule)
}

/// Programs a `safe` program starts itself, beyond those the line names:
/// `egrep` is a `/bin/sh` script running `grep`; `xargs` alone runs
/// `echo`; GNU `tar` runs a decompressor through `/bin/sh -c` when it
/// recognises a compressed archive. The kernel profile must let them run.
pub(crate) fn implied_programs(name: &str) -> &'static [&'static str] {
    match name {
        "egrep" | "fgrep" => &["sh", "grep"],
        "zcat" => &["sh", "gzip"],
        "which" => &["sh"],
        "xargs" => &["echo"],
        "tar" | "gtar" => &[
            "sh", "gzip", "bzip2", "xz", "lzip", "lzma", "lzop", "zstd", "compress",
        ],
        _ => &[],
    }
}

/// `python`, `python3`, `python3.12`, `pypy3`.
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"))
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Programs that download: the left side of `curl … | sh`.
pub(crate) const DOWNLOADERS: &[&str] = &[
    "curl", "wget", "wget2", "curlie", "fetch", "http", "https", "xh", "aria2c", "lynx", "links",
    "elinks", "w3m", "ftp", "tftp", "nc", "ncat", "netcat", "socat",
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
        "ldd" => "can run the program it inspects (use `readelf -d` or `objdump -p`)",
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
        "watch" | "parallel" | "screen" | "tmux" | "script" | "flock" | "unbuffer" | "strace"
        | "ltrace" | "systemd-run" | "chroot" | "unshare" | "nsenter" | "busybox" | "toybox" => {
            "runs other commands"
        }
        _ => return None,
    })
}
