//! Shell commands: parsing, the blocklist, and classification into `safe`,
//! `dev` and `dangerous` (DESIGN.md §9, layers 1 and 2).
//!
//! [`parse_command`] turns a command line into a [`ParsedCommand`]: every
//! simple command with its program (wrappers and assignments stripped), its
//! argv with quotes removed, its redirections and its context.
//! [`CommandPolicy::classify`] decides from that parsed form whether the line
//! is refused outright (the blocklist) or which class it is in, and for a
//! `safe` line which programs it may run ([`Verdict::programs`]).
//!
//! # Where the rules live
//!
//! - `blocklist/`: layer 1, refused in every mode;
//! - `classify.rs`: the order of the rules for one simple command;
//! - `toolgate_shell::options`: the one option matcher (GNU `getopt_long`
//!   semantics, abbreviations included) every table is read with;
//! - `specs.rs` and `git.rs`: the option tables of the programs that may be
//!   `safe`; `tables.rs`: which program gets which rule;
//! - `toolchains.rs`: build tools and package managers; `hooks.rs`: their
//!   options that name a program to run (`cargo --config
//!   build.rustc-wrapper=…`, `go build -toolexec`, `make SHELL=…`);
//! - in `toolgate-shell`, read while parsing: `variables` and `builtins`
//!   (variable names that change how programs load, and the bash builtins
//!   that set them or change the shell), `wrappers` (`env`, `xargs`,
//!   `timeout`, `setsid`, `flock`, … seen through) and `forks` (what
//!   multiplies processes: a background job in a loop, `xargs -P`,
//!   recursive functions);
//! - `programs.rs`: what a `safe` line may `execve`;
//! - `scripts/`: `sed` scripts and `awk` programs, each read with a lexer
//!   of its language.
//!
//! # The parser
//!
//! The bash parser and the command model live in `toolgate-shell`, which
//! says why brush-parser and how it is guarded.
//!
//! # What the blocklist can and cannot do
//!
//! The blocklist sees the command as the shell will run it, so spelling does
//! not matter and quoted text is data. It cannot see through what is only
//! known at run time (`eval "$(base64 -d <<< …)"`, `$CMD`): such commands are
//! `dangerous`, so they need confirmation, but they are not blocked. In
//! `yolo` mode the OS sandbox is what contains them.

use std::collections::HashSet;
use std::fmt;

use regex::RegexSet;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use toolgate_core::CommandClass;
use toolgate_shell::{builtins, forks};

pub use toolgate_shell::{
    CommandContext, MAX_COMMAND_LEN, MAX_NESTING, Operand, OperandKind, Origin, ParseError,
    ParsedCommand, PipelineSlot, Redirection, RedirectionKind, ShellFeatures, SimpleCommand, Word,
    command_operands, parse_command,
};

mod blocklist;
mod classify;
mod git;
mod hooks;
mod programs;
mod scripts;
mod specs;
mod tables;
mod toolchains;

/// What a command line is: refused, or allowed with a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerdictKind {
    /// Refused in every mode, yolo included.
    Blocked,
    /// Allowed, subject to confirmation by class.
    Class(CommandClass),
}

/// The decision on a command line and the reason for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    kind: VerdictKind,
    reason: String,
    programs: Vec<String>,
}

impl Verdict {
    fn blocked(reason: String) -> Self {
        Self {
            kind: VerdictKind::Blocked,
            reason,
            programs: Vec::new(),
        }
    }

    fn class(class: CommandClass, reason: String) -> Self {
        Self {
            kind: VerdictKind::Class(class),
            reason,
            programs: Vec::new(),
        }
    }

    /// Blocked, or the class.
    pub fn kind(&self) -> VerdictKind {
        self.kind
    }

    /// Whether the command is refused in every mode.
    pub fn is_blocked(&self) -> bool {
        self.kind == VerdictKind::Blocked
    }

    /// The class for confirmation: a blocked command counts as
    /// [`CommandClass::Dangerous`] (it never runs anyway).
    pub fn command_class(&self) -> CommandClass {
        match self.kind {
            VerdictKind::Blocked => CommandClass::Dangerous,
            VerdictKind::Class(class) => class,
        }
    }

    /// Why, in words a person can act on: "`sed -i` edits files in place".
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// For a `safe` verdict, every program the line may `execve`, each once,
    /// in the order met: each simple command's program as written (`ls`,
    /// `/usr/bin/ls`), nested ones included (`sh -c 'ls'` gives `sh`,
    /// `ls`), the wrappers that are programs (`timeout 5 ls` gives
    /// `timeout`, `ls`; `xargs cat` gives `xargs`, `cat`; `env ls` gives
    /// `env`, `ls`), and the programs those start themselves (`egrep` runs
    /// `sh` and `grep`; `xargs` alone runs `echo`; `tar` runs a
    /// decompressor through `sh`). Bash's builtins and keywords (`echo`,
    /// `printf`, `test`, `[`, `cd`, `read`, `true`, `pwd`, …) are left out:
    /// bash never `execve`s them, unless a wrapper that is a program runs
    /// the file of that name (`env echo` gives `env`, `echo`).
    ///
    /// Empty for any other verdict.
    ///
    /// The kernel profile of a `safe` command grants `EXECUTE` on exactly
    /// these files, resolved through `PATH` as the shell will resolve them
    /// (and on the shell itself): a `safe` line that tries to start anything
    /// else is refused by the kernel.
    ///
    /// ```
    /// use toolgate_command::classify;
    ///
    /// assert_eq!(classify("timeout 5 git log -3 | head").programs(), ["timeout", "git", "head"]);
    /// assert_eq!(classify("echo hi; cd src && ls").programs(), ["ls"]);
    /// assert!(classify("cargo build").programs().is_empty());
    /// ```
    pub fn programs(&self) -> &[String] {
        &self.programs
    }

    /// `blocked`, `safe`, `dev` or `dangerous`.
    pub fn label(&self) -> &'static str {
        match self.kind {
            VerdictKind::Blocked => "blocked",
            VerdictKind::Class(class) => class.as_str(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.label(), self.reason)
    }
}

/// Serialized as `{"class": "blocked"|"safe"|"dev"|"dangerous", "reason": "…"}`,
/// plus `"programs": ["…", …]` for a `safe` verdict that runs any (see
/// [`Verdict::programs`]).
impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.programs.is_empty() { 2 } else { 3 };
        let mut s = serializer.serialize_struct("Verdict", fields)?;
        s.serialize_field("class", self.label())?;
        s.serialize_field("reason", &self.reason)?;
        if !self.programs.is_empty() {
            s.serialize_field("programs", &self.programs)?;
        }
        s.end()
    }
}

/// An invalid [`CommandPolicy`] configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandPolicyError {
    /// A blocked-command pattern is not a valid regular expression.
    #[error("invalid blocked command pattern `{pattern}`")]
    Pattern {
        /// The pattern as configured.
        pattern: String,
        /// Why it is invalid.
        #[source]
        source: regex::Error,
    },
    /// An extra safe or dev program is not a bare program name.
    #[error("invalid program name `{name}` (expected a bare name such as `just`)")]
    ProgramName {
        /// The name as configured.
        name: String,
    },
}

/// Classifies a command line with the built-in rules only.
///
/// The same as `CommandPolicy::default().classify(cmd)`; see
/// [`CommandPolicy`] for the rules.
///
/// # Example
///
/// ```
/// use toolgate_core::CommandClass;
/// use toolgate_command::{VerdictKind, classify};
///
/// assert_eq!(classify("git status && ls -la").kind(), VerdictKind::Class(CommandClass::Safe));
/// assert_eq!(classify("cargo test -p x").kind(), VerdictKind::Class(CommandClass::Dev));
/// assert_eq!(classify("sed -i s/a/b/ f").reason(), "`sed -i` edits files in place");
/// assert!(classify("rm -fr ~").is_blocked());
/// assert!(!classify("echo 'rm -rf /'").is_blocked());
/// ```
pub fn classify(cmd: &str) -> Verdict {
    CommandPolicy::default().classify(cmd)
}

/// Decides whether a shell command line is blocked, `safe`, `dev` or
/// `dangerous`.
///
/// Built by [`CommandPolicy::builder`]; [`CommandPolicy::default`] has the
/// built-in rules only.
///
/// # Rules
///
/// The line is parsed as bash ([`parse_command`]) and judged on the parsed
/// form, so quoted text is data (`echo 'sudo'` is safe) and spelling does
/// not matter (`rm -fr /` is `rm -r -f /`). Classification fails closed: a
/// `safe` command runs unasked under a kernel profile that refuses writes,
/// the network and any program but those in [`Verdict::programs`], so
/// `safe` is kept for exact programs with exact options, and anything
/// toolgate does not know is `dev` or `dangerous`. In order, first match
/// wins:
///
/// 1. **Configured patterns block.** Each configured blocked pattern (a
///    regex, unanchored) is matched against the raw line and against each
///    simple command's normalised text ([`SimpleCommand::text`]); a match is
///    `blocked`. This is the only rule that applies to lines that do not
///    parse.
/// 2. **Unparseable is dangerous.** A line that is not valid shell, is
///    longer than [`MAX_COMMAND_LEN`], nests deeper than [`MAX_NESTING`]
///    (or has more than ten unclosed `(`, `$(`, `${` and `case` together),
///    uses a construct the parser is known to mishandle (a here-document
///    with no delimiter, or with `$((…))`; a file descriptor number beyond
///    `i32`), or that the parser fails on, is `dangerous`.
/// 3. **The built-in blocklist blocks**, looking at every simple command,
///    nested ones included (`$(…)`, `<(…)`, `sh -c '…'`, `eval`,
///    `find -exec`, `watch CMD`, `script -c CMD`, `flock -c CMD`, function
///    bodies), through every wrapper and its options (`env`, `nice -n 5`,
///    `timeout -s KILL 5`, `setsid -f`, `flock -x FILE`, `ionice -c3`,
///    `chrt -f 1`, `taskset -c 0`, `unbuffer`, `systemd-run`, `busybox`,
///    …) and runner (`uv run`, `poetry run`, `bundle exec`, `pnpm exec`,
///    `yarn exec`, `npx`), paths normalised first (`//dev/sda`, `/./dev/../dev/sda`):
///    `rm` with `-r`/`-R`/`--recursive` (any spelling or prefix) on `/`,
///    a glob that reaches it (`/*`, `/{a,b}`, `/[a-z]*`), `~`, `$HOME`
///    (`"${HOME:?}"`, `${HOME}/`, …), a user's home (`~root`, `~bob/*`,
///    `/home/bob`) or a top-level system directory,
///    directly or relative to a `cd /` or `cd ~` earlier in the line
///    (`cd / && rm -rf *`), `find / -delete`, and `rm --no-preserve-root`;
///    `sudo`, `su`, `doas`, `pkexec`, `run0`, `runuser`, `sg`; `chmod` to a
///    mode with the world-write bit (`777`, `0777`, `77`, `1777`, `o=rwx`,
///    `a+w`, `+w`); a shell or interpreter that reads its program from
///    standard input fed by a pipe, a file, a here-document or a
///    here-string or an output process substitution (`curl … | sh`,
///    `cat x.sh | sh`, `sh < x.sh`, `bash <<EOF`, `python3 - <<EOF`,
///    `bash <<< "…"`, `curl … | tee >(sh)`), a download piped
///    into one through `xargs` or `parallel` (`curl … | xargs -0 bash -c`,
///    `wget -O- … | parallel`), or a downloader substituted into one
///    (`sh <(curl …)`, `bash -c "$(curl …)"`); `dd of=/dev/…` (except
///    `/dev/null` and the like); writing to a disk device (`> /dev/sda`,
///    `tee /dev/nvme0n1`, `shred /dev/sda`); programs that format or wipe
///    disks (`mkfs*`, `newfs*`, `mke2fs`, `mkntfs`, `mkdosfs`, `mkswap`,
///    `wipefs`, `blkdiscard`, `lvremove`, …) and disk tools given the
///    options that do (`sgdisk --zap-all`, `sfdisk --delete`,
///    `hdparm --security-erase`, `nvme format`, `cryptsetup luksFormat`,
///    `badblocks -w`, `zpool destroy`, `flashrom -w`, …); a function
///    calling itself (directly, through `$FUNCNAME` or through other
///    functions of the line) in a pipeline or in the background (the fork
///    bomb `:(){ :|:& };:` under any name); signalling every process
///    (`kill … -1`, `killall5`, `pkill .`, `pkill -v x`), every process of
///    a user (`pkill -u bob`, `killall -u bob`) or init (`kill -INT 1`);
///    `pkill` with SIGKILL and `-f`; `killall` with SIGKILL;
///    `shutdown`, `reboot`, `halt`, `poweroff`, `systemctl poweroff`,
///    `halt`, `reboot`, `kexec`, `suspend`, `hibernate`, `soft-reboot`,
///    `isolate …`, `start poweroff.target` and the like, `loginctl
///    poweroff`, `kexec -e`, `init`/`telinit` 0, 1 or 6; `SysRq` (writing
///    `/proc/sysrq-trigger`, `sysctl kernel.sysrq`).
/// 4. **Nothing to run is safe**: an empty line or only comments.
/// 5. **Each simple command gets a class**, first match wins:
///    1. a command or process substitution in any word is `dangerous`;
///    2. arithmetic that names a variable is `dangerous`, since bash
///       evaluates a variable holding `a[$(cmd)]` as code: `$((x))`,
///       `(( i++ ))`, `let x=y`, `[[ $x -eq 1 ]]`, `declare -i`, array
///       subscripts (`a[i]=1`, `${a[i]}`, `read 'a[$i]'`), `${s:n}` and
///       `${!ref}`; arithmetic on literal numbers only is not;
///    3. a redirection writing a file (`>`, `>>`, `>|`, `<>`, `&>`, `>&f`)
///       is `dangerous`, unless the target is `/dev/null`, `/dev/stdout`,
///       `/dev/stderr` or `/dev/tty`; duplicating descriptors (`2>&1`) is
///       not writing;
///    4. setting a variable is judged by its name: an assignment before a
///       program, one given to `env` (or removed with `env -u`), or an
///       `export`/`declare -x` reaches the programs run; a name that
///       decides which code runs (`PATH`, `LD_*`, `BASH_ENV`, `ENV`,
///       `PYTHON*`, `NODE_OPTIONS`, `PERL5*`, `RUBYOPT`, `GIT_*`,
///       `GLIBC_TUNABLES`, `HOME`, `XDG_CONFIG_HOME`, `CARGO_*`,
///       `RUSTFLAGS`, `CC`, `PAGER`, `EDITOR`, `LESSOPEN`, `SHELL`,
///       `PROMPT_COMMAND`, `IFS`, …) is `dangerous`; a name not known to be
///       harmless (`LANG`, `LC_*`, `TZ`, `TERM`, `NO_COLOR`, `COLUMNS`,
///       `RUST_LOG`, `RUST_BACKTRACE`, `CI`, `DEBUG`, …) is `dev`, except a
///       shell variable set on its own with a lower-case name (`f=x`). The
///       same holds for every way a script sets or removes one: `read`,
///       `for NAME in`, `mapfile`, `getopts`, `printf -v`, `declare`,
///       `local`, `readonly`, `unset`, `wait -p`;
///    5. the other words of `for`, `case`, `[[ ]]` and `(( ))` are `safe`
///       (their substitutions were caught by 5.1);
///    6. a wrapper with an option toolgate does not know is `dangerous`;
///       otherwise the wrapped program is judged, and some wrappers add a
///       floor: `env -i`, `command -p` (a default `PATH`), `flock` (it
///       creates its lock file), `busybox`, `watch`, `unbuffer`, `strace`
///       are at least `dev`; `systemd-run`, `chroot`, `unshare`, `nsenter`,
///       and `time -o`/`strace -o` (which write) are `dangerous`;
///       `xargs -P N` with `N` above 8, `-P 0` or a count only known at
///       run time is at least `dev` (it runs that many processes at once);
///    7. assignments or input redirections alone are `safe`;
///    8. a program name only known at run time (`$CMD`) is `dangerous`;
///    9. a program run by path is `dangerous`, unless the path is a system
///       `bin` directory (`/usr/bin/ls` is `ls`) or it is `gradlew`/`mvnw`;
///    10. `sh -c SCRIPT`, `eval ARGS`, `watch CMD`, `script -c CMD` and
///        `flock -c CMD` are judged by the script's own commands, which are
///        in the list; a script only known at run time or that does not
///        parse is `dangerous`;
///    11. programs configured as safe or dev have that class;
///    12. bash builtins are judged by what they change: `hash -p`,
///        `enable -f`/`-n`, `trap CMD`, `alias NAME=…`,
///        `shopt -s expand_aliases`, `set -k`, `declare -n`, `mapfile -C`
///        are `dangerous`, `set -a` and `ulimit VALUE` are `dev`, the rest
///        (`echo`, `printf`, `test`, `cd`, `pwd`, `read`, …) `safe` under
///        rule 5.4;
///    13. a program with an option table (`ls`, `cat`, `grep`, `sort`,
///        `find`, `sed`, `awk`, `tar`, `rg`, `fd`, `jq`, `diff`, …, and the
///        read-only `git` subcommands: `status`, `log`, `diff`, `show`,
///        `blame`, `grep`, `rev-parse`, `ls-files`, `describe`,
///        `branch`/`tag` listing, `remote -v`, `config --get`, …) is `safe`
///        only if every option is in its read-only table. An option known
///        to write or run a program is `dangerous` with what it does
///        (`sort --compress-program`, `tar --to-command`, `rg --pre`,
///        `rg -z`, `fd -x`, `find -exec`/`-delete`/`-fprint`, `sed -i`,
///        `awk -f`, `nm --plugin`, `tree -o`, `diff -l`, `git --ext-diff`,
///        `git -c`, `git grep -O`, …); any other option, an unknown letter
///        in a cluster, a value given to a flag, and an ambiguous
///        abbreviation are `dev`. Long options are matched as GNU
///        `getopt_long` does, so an abbreviation counts: a prefix of a
///        dangerous option is `dangerous` (`--to-com=x`, `--in`), a prefix
///        of exactly one read-only option is that option, anything else is
///        `dev`. A word only known at run time that could start with `-`
///        (`"$f"`, `*.rs`, the input `xargs` appends) is `dev`, unless the
///        program has no dangerous option at all (`cat`, `grep`, `wc`,
///        `ls`). The program's own operands are checked too: a `sed`
///        script that writes or runs (`w`, `W`, `e`, `s///w`, `s///e`),
///        an `awk` program with `system()`, pipes, `print >` or `@load`,
///        `tar` without `-t` or with a remote `-f HOST:FILE`, `tee FILE`,
///        `uniq IN OUT`, `date MMDDhhmm`, `hostname NAME` are `dangerous`;
///        a `sed` script reading a file it names (`r`, `R`) is `dev`.
///        Scripts are read with a lexer of their language, so nothing
///        hides behind a regular expression holding a quote or a bracket
///        expression holding the delimiter (`awk '/"/ {system("id")}'`,
///        `sed 's/[/]/x/e'`); one it cannot read with certainty (`awk
///        '/[/]/'`, where awks disagree) is `dangerous`;
///    14. the other tables: development tools (`pytest`, `cargo build`,
///        `npm run`, `docker ps`, `kubectl get`, …) are `dev`; toolchains
///        and package managers are `dev` at best, even for queries
///        (`cargo tree`, `npm ls`, `python3 --version`: proxies and scripts
///        that start other programs); installing, publishing and running
///        arbitrary code (`pip install`, `git push`, `python x.py`,
///        `ldd`) is `dangerous`, and so is an option of a development tool
///        that names a program for it to run, said in the reason
///        (`cargo --config build.rustc-wrapper=…`, `rustc -C linker=…`,
///        `go build -toolexec`, `go test -exec`, `npm --script-shell`,
///        `git -c core.sshCommand=…`, `make SHELL=…`, `pip --python`,
///        `gcc -B`); pagers (`less`) are `dev`;
///    15. anything else is `dangerous`;
///
///    whatever its rule says, a command started in the background (`&`,
///    `coproc`, `setsid -f`) where it may run again and again (in a loop's
///    condition or body, in a function that calls itself, in a script run
///    by `xargs` or `find -exec`) is at least `dev`: `while :; do sleep 1
///    & done` piles up processes without bound.
/// 6. **The line is its most dangerous part**, with that part's reason; a
///    line starting more than 64 processes at once (pipeline stages and
///    background jobs) is at least `dev`.
/// 7. **The `env` argument** of `run_command`, given to
///    [`classify_with_env`](Self::classify_with_env), is judged like
///    assignments in front of the whole line (rule 5.4): never lowering
///    the class, and never unblocking.
/// 8. **A `safe` line lists its programs** ([`Verdict::programs`]): the
///    kernel profile lets it run only those.
#[derive(Debug, Clone, Default)]
pub struct CommandPolicy {
    patterns: Vec<String>,
    set: Option<RegexSet>,
    extra: classify::Extra,
}

impl CommandPolicy {
    /// A builder for a policy with configured additions.
    pub fn builder() -> CommandPolicyBuilder {
        CommandPolicyBuilder::default()
    }

    /// Classifies a command line (see the [rules](Self#rules)).
    ///
    /// Never panics; input it cannot analyse is `dangerous`.
    pub fn classify(&self, cmd: &str) -> Verdict {
        if let Some(reason) = self.pattern_match(cmd) {
            return Verdict::blocked(reason);
        }
        match parse_command(cmd) {
            Ok(parsed) => self.classify_parsed(cmd, &parsed),
            Err(err) => Verdict::class(
                CommandClass::Dangerous,
                format!(
                    "the command could not be analysed ({})",
                    toolgate_core::error_chain(&err)
                ),
            ),
        }
    }

    /// Classifies a command line already parsed by [`parse_command`].
    ///
    /// `cmd` is the line as written, for the configured patterns.
    pub fn classify_parsed(&self, cmd: &str, parsed: &ParsedCommand) -> Verdict {
        if let Some(reason) = self.pattern_match(cmd) {
            return Verdict::blocked(reason);
        }
        if self.set.is_some() {
            for simple in parsed.simple_commands() {
                if let Some(reason) = self.pattern_match(&simple.text()) {
                    return Verdict::blocked(reason);
                }
            }
        }
        if let Some(reason) = blocklist::check(parsed) {
            return Verdict::blocked(reason);
        }
        let mut worst: Option<toolgate_shell::judgement::Judgement> = None;
        let mut names: Vec<&str> = Vec::new();
        for simple in parsed.simple_commands() {
            let judgement = classify::classify_simple(simple, &self.extra);
            if judgement.class == CommandClass::Safe
                && !simple.is_compound_part()
                && !simple.program().is_empty()
                && !names.contains(&simple.program_name())
            {
                names.push(simple.program_name());
            }
            if worst.as_ref().is_none_or(|w| judgement.class > w.class) {
                let done = judgement.class == CommandClass::Dangerous;
                worst = Some(judgement);
                if done {
                    break;
                }
            }
        }
        if let Some(j) = forks::fan_out(parsed)
            && worst.as_ref().is_none_or(|w| j.class > w.class)
        {
            worst = Some(j);
        }
        let mut verdict = match worst {
            Some(j) if j.class == CommandClass::Safe && names.len() > 1 => Verdict::class(
                j.class,
                format!(
                    "every command only reads or prints (`{}`)",
                    names.join("`, `")
                ),
            ),
            Some(j) => Verdict::class(j.class, j.reason),
            None => Verdict::class(CommandClass::Safe, "the command runs nothing".to_owned()),
        };
        if verdict.kind == VerdictKind::Class(CommandClass::Safe) {
            for simple in parsed.simple_commands() {
                programs::executed(simple, &mut verdict.programs);
            }
        }
        verdict
    }

    /// Classifies a command line to be run with extra environment variables,
    /// as `run_command` does with its `env` argument.
    ///
    /// `env_names` are judged like assignments in front of the whole line
    /// (`NAME=value cmd`): a name that decides which code runs (`PATH`,
    /// `LD_PRELOAD`, `GIT_*`, `HOME`, `PAGER`, …) makes the line at least
    /// `dangerous`, and a name toolgate does not know to be harmless (only
    /// `LANG`, `LC_*`, `TZ`, `TERM`, `NO_COLOR`, `COLUMNS`, `RUST_LOG`,
    /// `CI` and the like are) makes it at least `dev`. The values do not
    /// matter. A blocked line stays blocked.
    ///
    /// ```
    /// use toolgate_command::classify;
    /// use toolgate_command::CommandPolicy;
    ///
    /// let policy = CommandPolicy::default();
    /// assert_eq!(policy.classify_with_env("ls", &["LANG", "TZ"]).label(), "safe");
    /// assert_eq!(policy.classify_with_env("ls", &["MY_FLAG"]).label(), "dev");
    /// assert_eq!(policy.classify_with_env("ls", &["LD_PRELOAD"]).label(), "dangerous");
    /// assert!(policy.classify_with_env("sudo ls", &[]).is_blocked());
    /// # let _ = classify;
    /// ```
    pub fn classify_with_env(&self, cmd: &str, env_names: &[&str]) -> Verdict {
        let verdict = self.classify(cmd);
        if verdict.is_blocked() {
            return verdict;
        }
        let mut worst: Option<toolgate_shell::judgement::Judgement> = None;
        for name in env_names {
            if let Some(j) =
                builtins::judge_name(name, builtins::Scope::Exported, "the `env` argument")
                && worst.as_ref().is_none_or(|w| j.class > w.class)
            {
                worst = Some(j);
            }
        }
        match worst {
            Some(j) if j.class > verdict.command_class() => Verdict::class(j.class, j.reason),
            _ => verdict,
        }
    }

    fn pattern_match(&self, text: &str) -> Option<String> {
        let set = self.set.as_ref()?;
        let index = set.matches(text).into_iter().next()?;
        let pattern = self.patterns.get(index).map_or("?", String::as_str);
        Some(format!(
            "matches the configured blocked pattern `{pattern}`"
        ))
    }
}

/// Builds a [`CommandPolicy`].
#[derive(Debug, Clone, Default)]
pub struct CommandPolicyBuilder {
    patterns: Vec<String>,
    safe: Vec<String>,
    dev: Vec<String>,
}

impl CommandPolicyBuilder {
    /// Extra blocked patterns (`guardrails.blocked_commands`), regexes in
    /// [`regex`](https://docs.rs/regex) syntax, unanchored, matched against
    /// the raw line and each simple command's normalised text.
    ///
    /// By default, none: only the built-in blocklist applies. Calling this
    /// again adds to the list.
    pub fn blocked_patterns<I, S>(&mut self, patterns: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.patterns
            .extend(patterns.into_iter().map(|p| p.as_ref().to_owned()));
        self
    }

    /// Extra programs classified `safe` whatever their arguments (bare
    /// names, such as `just`). They are still subject to the blocklist and
    /// to the redirection and substitution rules.
    ///
    /// By default, none.
    pub fn safe_programs<I, S>(&mut self, programs: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.safe
            .extend(programs.into_iter().map(|p| p.as_ref().to_owned()));
        self
    }

    /// Extra programs classified `dev` whatever their arguments (bare names,
    /// such as `just` or `nx`).
    ///
    /// By default, none.
    pub fn dev_programs<I, S>(&mut self, programs: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.dev
            .extend(programs.into_iter().map(|p| p.as_ref().to_owned()));
        self
    }

    /// Validates the configuration and compiles the patterns.
    ///
    /// # Errors
    ///
    /// [`CommandPolicyError::Pattern`] for a pattern that is not a valid
    /// regex, [`CommandPolicyError::ProgramName`] for a program that is not a
    /// bare name.
    pub fn build(&self) -> Result<CommandPolicy, CommandPolicyError> {
        for pattern in &self.patterns {
            if let Err(source) = regex::Regex::new(pattern) {
                return Err(CommandPolicyError::Pattern {
                    pattern: pattern.clone(),
                    source,
                });
            }
        }
        let set = if self.patterns.is_empty() {
            None
        } else {
            Some(
                RegexSet::new(&self.patterns).map_err(|source| CommandPolicyError::Pattern {
                    pattern: self.patterns.join(" | "),
                    source,
                })?,
            )
        };
        let names = |list: &[String]| -> Result<HashSet<String>, CommandPolicyError> {
            list.iter()
                .map(|name| {
                    let bare = !name.is_empty()
                        && !name.contains('/')
                        && !name.chars().any(char::is_whitespace);
                    if bare {
                        Ok(name.clone())
                    } else {
                        Err(CommandPolicyError::ProgramName { name: name.clone() })
                    }
                })
                .collect()
        };
        Ok(CommandPolicy {
            patterns: self.patterns.clone(),
            set,
            extra: classify::Extra {
                safe: names(&self.safe)?,
                dev: names(&self.dev)?,
            },
        })
    }
}
