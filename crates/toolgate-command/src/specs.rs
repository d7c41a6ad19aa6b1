//! The option tables of the programs that may be `safe`: what each accepts
//! while only reading and printing (see [`Spec`] for the syntax).
//!
//! Each table lists options checked against the program's manual (GNU
//! coreutils 9, grep 3, findutils 4.9, diffutils 3, util-linux 2.39,
//! procps-ng 4, binutils 2.42, ripgrep 14, fd 10, tree 2). A `safe` command
//! runs under a kernel profile that denies writes, the network and every
//! `execve` but the programs the line names, so an entry here is a promise:
//! with these options, the program reads files and writes to stdout and
//! stderr, nothing else, and starts no other program. Notes mark the cases
//! where a program tries something the profile refuses and carries on.
//!
//! `complete: true` means the program has no option at all that writes or
//! runs anything, so a word only known at run time (`cat "$f"`, `wc *.rs`)
//! cannot become a dangerous option even if it starts with `-`.

use toolgate_shell::options::Spec;

#[rustfmt::skip]
const HELP: &[&str] = &["--help", "--version"];

#[rustfmt::skip]
pub(crate) const LS: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a|--all", "-A|--almost-all", "--author", "-b|--escape", "--block-size=",
            "-B|--ignore-backups", "-c", "-C", "--color[=]|--colour[=]", "-d|--directory",
            "-D|--dired", "-f", "-F|--classify[=]", "--file-type", "--format=", "--full-time", "-g",
            "--group-directories-first", "-G|--no-group", "-h|--human-readable", "--si",
            "-H|--dereference-command-line", "--dereference-command-line-symlink-to-dir", "--hide=",
            "--hyperlink[=]", "--indicator-style=", "-i|--inode", "-I=|--ignore=", "-k|--kibibytes",
            "-l", "-L|--dereference", "-m", "-n|--numeric-uid-gid", "-N|--literal", "-o", "-p",
            "-q|--hide-control-chars", "--show-control-chars", "-Q|--quote-name",
            "--quoting-style=", "-r|--reverse", "-R|--recursive", "-s|--size", "-S", "--sort=",
            "--time=", "--time-style=", "-t", "-T=|--tabsize=", "-u", "-U", "-v", "-w=|--width=",
            "-x", "-X", "-Z|--context", "--zero", "-1",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const CAT: Spec = Spec::read(
    &[
        HELP,
        &[
            "-A|--show-all", "-b|--number-nonblank", "-e", "-E|--show-ends", "-n|--number",
            "-s|--squeeze-blank", "-t", "-T|--show-tabs", "-u", "-v|--show-nonprinting",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const HEAD: Spec = Spec {
    read: &[
        HELP,
        &[
            "-c=|--bytes=", "-n=|--lines=", "-q|--quiet|--silent", "-v|--verbose",
            "-z|--zero-terminated",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

#[rustfmt::skip]
pub(crate) const TAIL: Spec = Spec {
    read: &[
        HELP,
        &[
            "-c=|--bytes=", "-f|--follow[=]", "-F", "-n=|--lines=", "--max-unchanged-stats=",
            "--pid=", "-q|--quiet|--silent", "--retry", "-s=|--sleep-interval=", "-v|--verbose",
            "-z|--zero-terminated",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

#[rustfmt::skip]
pub(crate) const WC: Spec = Spec::read(
    &[
        HELP,
        &[
            "-c|--bytes", "-m|--chars", "-l|--lines", "--files0-from=", "-L|--max-line-length",
            "-w|--words", "--total=",
        ],
    ],
    true,
);

/// GNU grep; `egrep` and `fgrep` are scripts running `grep -E`/`grep -F`.
#[rustfmt::skip]
pub(crate) const GREP: Spec = Spec {
    read: &[
        HELP,
        &[
            "-E|--extended-regexp", "-F|--fixed-strings", "-G|--basic-regexp", "-P|--perl-regexp",
            "-e=|--regexp=", "-f=|--file=", "-i|-y|--ignore-case", "--no-ignore-case",
            "-w|--word-regexp", "-x|--line-regexp", "-z|--null-data", "-s|--no-messages",
            "-v|--invert-match", "-V", "-m=|--max-count=", "-b|--byte-offset", "-n|--line-number",
            "--line-buffered", "-H|--with-filename", "-h|--no-filename", "--label=",
            "-o|--only-matching", "-q|--quiet|--silent", "--binary-files=", "-a|--text", "-I",
            "-d=|--directories=", "-D=|--devices=", "-r|--recursive", "-R|--dereference-recursive",
            "--include=", "--exclude=", "--exclude-from=", "--exclude-dir=",
            "-L|--files-without-match", "-l|--files-with-matches", "-c|--count", "-T|--initial-tab",
            "-Z|--null", "-B=|--before-context=", "-A=|--after-context=", "-C=|--context=",
            "--group-separator=", "--no-group-separator", "--color[=]|--colour[=]", "-U|--binary",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

#[rustfmt::skip]
pub(crate) const CUT: Spec = Spec::read(
    &[
        HELP,
        &[
            "-b=|--bytes=", "-c=|--characters=", "-d=|--delimiter=", "-f=|--fields=", "-n",
            "--complement", "-s|--only-delimited", "--output-delimiter=", "-z|--zero-terminated",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const TR: Spec = Spec::read(
    &[
        HELP,
        &[
            "-c|-C|--complement", "-d|--delete", "-s|--squeeze-repeats", "-t|--truncate-set1",
        ],
    ],
    true,
);

/// GNU sort. It spills to temporary files only when the input outgrows its
/// buffer (a fraction of the machine's memory); under the `safe` profile
/// such a sort fails instead of writing.
#[rustfmt::skip]
pub(crate) const SORT: Spec = Spec {
    read: &[
        HELP,
        &[
            "-b|--ignore-leading-blanks", "-d|--dictionary-order", "-f|--ignore-case",
            "-g|--general-numeric-sort", "-i|--ignore-nonprinting", "-M|--month-sort",
            "-h|--human-numeric-sort", "-n|--numeric-sort", "-R|--random-sort", "--random-source=",
            "-r|--reverse", "--sort=", "-V|--version-sort", "-c|--check[=]", "-C", "--debug",
            "--files0-from=", "-k=|--key=", "-m|--merge", "-s|--stable", "-S=|--buffer-size=",
            "-t=|--field-separator=", "--parallel=", "-u|--unique", "-z|--zero-terminated",
        ],
    ],
    danger: &[
        ("-o=|--output=", "writes its output to a file"),
        (
            "--compress-program=",
            "runs a program to compress temporary files",
        ),
        ("-T=|--temporary-directory=", "writes temporary files"),
        ("--batch-size=", "merges through temporary files"),
    ],
    numeric: false,
    complete: false,
};

/// `uniq [INPUT [OUTPUT]]`: a second operand is written (checked by the
/// caller).
#[rustfmt::skip]
pub(crate) const UNIQ: Spec = Spec {
    read: &[
        HELP,
        &[
            "-c|--count", "-d|--repeated", "-D", "--all-repeated[=]", "-f=|--skip-fields=",
            "--group[=]", "-i|--ignore-case", "-s=|--skip-chars=", "-u|--unique",
            "-z|--zero-terminated", "-w=|--check-chars=",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

#[rustfmt::skip]
pub(crate) const COMM: Spec = Spec::read(
    &[
        HELP,
        &[
            "-1", "-2", "-3", "--check-order", "--nocheck-order", "--output-delimiter=", "--total",
            "-z|--zero-terminated",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const JOIN: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a=", "-e=", "-i|--ignore-case", "-j=", "-o=", "-t=", "-v=", "-1=", "-2=",
            "--check-order", "--nocheck-order", "--header", "-z|--zero-terminated",
        ],
    ],
    true,
);

pub(crate) const PASTE: Spec = Spec::read(
    &[
        HELP,
        &["-d=|--delimiters=", "-s|--serial", "-z|--zero-terminated"],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const NL: Spec = Spec::read(
    &[
        HELP,
        &[
            "-b=|--body-numbering=", "-d=|--section-delimiter=", "-f=|--footer-numbering=",
            "-h=|--header-numbering=", "-i=|--line-increment=", "-l=|--join-blank-lines=",
            "-n=|--number-format=", "-p|--no-renumber", "-s=|--number-separator=",
            "-v=|--starting-line-number=", "-w=|--number-width=",
        ],
    ],
    true,
);

pub(crate) const FOLD: Spec = Spec::read(
    &[HELP, &["-b|--bytes", "-s|--spaces", "-w=|--width="]],
    true,
);

#[rustfmt::skip]
pub(crate) const FMT: Spec = Spec {
    read: &[
        HELP,
        &[
            "-c|--crown-margin", "-p=|--prefix=", "-s|--split-only", "-t|--tagged-paragraph",
            "-u|--uniform-spacing", "-w=|--width=", "-g=|--goal=",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

pub(crate) const EXPAND: Spec = Spec::read(
    &[
        HELP,
        &["-i|--initial", "-t=|--tabs=", "-a|--all", "--first-only"],
    ],
    true,
);

pub(crate) const TAC: Spec = Spec::read(
    &[HELP, &["-b|--before", "-r|--regex", "-s=|--separator="]],
    true,
);

/// util-linux `rev`.
pub(crate) const REV: Spec = Spec::read(&[HELP, &["-0|--zero", "-h", "-V"]], true);

pub(crate) const SEQ: Spec = Spec::read(
    &[
        HELP,
        &["-f=|--format=", "-s=|--separator=", "-w|--equal-width"],
    ],
    true,
);

pub(crate) const BASENAME: Spec = Spec::read(
    &[HELP, &["-a|--multiple", "-s=|--suffix=", "-z|--zero"]],
    true,
);

#[rustfmt::skip]
pub(crate) const DIRNAME: Spec = Spec::read(&[HELP, &["-z|--zero"]], true);

#[rustfmt::skip]
pub(crate) const REALPATH: Spec = Spec::read(
    &[
        HELP,
        &[
            "-e|--canonicalize-existing", "-m|--canonicalize-missing", "-L|--logical",
            "-P|--physical", "-q|--quiet", "--relative-to=", "--relative-base=",
            "-s|--strip|--no-symlinks", "-z|--zero",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const READLINK: Spec = Spec::read(
    &[
        HELP,
        &[
            "-f|--canonicalize", "-e|--canonicalize-existing", "-m|--canonicalize-missing",
            "-n|--no-newline", "-q|--quiet", "-s|--silent", "-v|--verbose", "-z|--zero",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const STAT: Spec = Spec::read(
    &[
        HELP,
        &[
            "-L|--dereference", "-f|--file-system", "--cached=", "-c=|--format=", "--printf=",
            "-t|--terse",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const DU: Spec = Spec::read(
    &[
        HELP,
        &[
            "-0|--null", "-a|--all", "--apparent-size", "-A", "-B=|--block-size=", "-b|--bytes",
            "-c|--total", "-D|--dereference-args", "-d=|--max-depth=", "--files0-from=", "-H",
            "-h|--human-readable", "--inodes", "-k", "-L|--dereference", "-l|--count-links", "-m",
            "-P|--no-dereference", "-S|--separate-dirs", "--si", "-s|--summarize",
            "-t=|--threshold=", "--time[=]", "--time-style=", "-X=|--exclude-from=", "--exclude=",
            "-x|--one-file-system",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const DF: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a|--all", "-B=|--block-size=", "-h|--human-readable", "-H|--si", "-i|--inodes", "-k",
            "-l|--local", "--no-sync", "--output[=]", "-P|--portability", "--sync", "--total",
            "-t=|--type=", "-T|--print-type", "-x=|--exclude-type=", "-v",
        ],
    ],
    true,
);

/// `md5sum`, `sha*sum`, `b2sum`, `cksum`, `sum`.
#[rustfmt::skip]
pub(crate) const CHECKSUM: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a=|--algorithm=", "-b|--binary", "-c|--check", "-l=|--length=", "--tag", "--untagged",
            "--base64", "--raw", "-t|--text", "-z|--zero", "--ignore-missing", "--quiet",
            "--status", "--strict", "-w|--warn", "--debug", "-r", "-s|--sysv",
        ],
    ],
    true,
);

/// `base64`, `base32`, `basenc`.
pub(crate) const BASE64: Spec = Spec::read(
    &[
        HELP,
        &[
            "-d|--decode",
            "-i|--ignore-garbage",
            "-w=|--wrap=",
            "--base64",
            "--base64url",
            "--base58",
            "--base32",
            "--base32hex",
            "--base16",
            "--base2msbf",
            "--base2lsbf",
            "--z85",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const OD: Spec = Spec::read(
    &[
        HELP,
        &[
            "-A=|--address-radix=", "--endian=", "-j=|--skip-bytes=", "-N=|--read-bytes=", "-S=",
            "--strings[=]", "-t=|--format=", "-v|--output-duplicates", "-w[=]|--width[=]",
            "--traditional", "-a", "-b", "-c", "-d", "-f", "-i", "-l", "-o", "-s", "-x",
        ],
    ],
    true,
);

/// Programs whose only options are `--help` and `--version`: `whoami`,
/// `groups`, `factor`, `tsort`, `arch`, `users`, `sleep`, `printenv -0`.
#[rustfmt::skip]
pub(crate) const PLAIN: Spec = Spec::read(&[HELP, &["-0|--null"]], true);

#[rustfmt::skip]
pub(crate) const ID: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a", "-Z|--context", "-g|--group", "-G|--groups", "-n|--name", "-r|--real",
            "-u|--user", "-z|--zero",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const UNAME: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a|--all", "-s|--kernel-name", "-n|--nodename", "-r|--kernel-release",
            "-v|--kernel-version", "-m|--machine", "-p|--processor", "-i|--hardware-platform",
            "-o|--operating-system",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const NPROC: Spec = Spec::read(&[HELP, &["--all", "--ignore="]], true);

#[rustfmt::skip]
pub(crate) const TTY: Spec = Spec::read(&[HELP, &["-s|--silent|--quiet"]], true);

#[rustfmt::skip]
pub(crate) const NUMFMT: Spec = Spec::read(
    &[
        HELP,
        &[
            "--debug", "-d=|--delimiter=", "--field=", "--format=", "--from=", "--from-unit=",
            "--grouping", "--header[=]", "--invalid=", "--padding=", "--round=", "--suffix=",
            "--to=", "--to-unit=", "-z|--zero-terminated",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const PR: Spec = Spec {
    read: &[
        HELP,
        &[
            "-a|--across", "-c|--show-control-chars", "-d|--double-space", "-D=|--date-format=",
            "-e[=]|--expand-tabs[=]", "-F|-f|--form-feed", "-h=|--header=",
            "-i[=]|--output-tabs[=]", "-J|--join-lines", "-l=|--length=", "-m|--merge",
            "-n[=]|--number-lines[=]", "-N=|--first-line-number=", "-o=|--indent=",
            "-r|--no-file-warnings", "-s[=]|--separator[=]", "-S[=]|--sep-string[=]",
            "-t|--omit-header", "-T|--omit-pagination", "-v|--show-nonprinting", "-w=|--width=",
            "-W=|--page-width=",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: true,
};

/// `date`: operands other than `+FORMAT` set the clock (checked by the
/// caller).
#[rustfmt::skip]
pub(crate) const DATE: Spec = Spec {
    read: &[
        HELP,
        &[
            "-d=|--date=", "--debug", "-f=|--file=", "-I[=]|--iso-8601[=]", "--resolution",
            "-R|--rfc-email", "--rfc-3339=", "-r=|--reference=", "-u|--utc|--universal",
        ],
    ],
    danger: &[("-s=|--set=", "sets the system clock")],
    numeric: false,
    complete: false,
};

/// `tee`: every operand but `/dev/null` is written (checked by the caller).
#[rustfmt::skip]
pub(crate) const TEE: Spec = Spec::read(
    &[
        HELP,
        &[
            "-a|--append", "-i|--ignore-interrupts", "-p", "--output-error[=]",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const CMP: Spec = Spec {
    read: &[
        &["--help", "-v|--version"],
        &[
            "-b|--print-bytes", "-i=|--ignore-initial=", "-l|--verbose", "-n=|--bytes=",
            "-s|--quiet|--silent",
        ],
    ],
    danger: &[],
    numeric: false,
    complete: true,
};

/// GNU diff.
#[rustfmt::skip]
pub(crate) const DIFF: Spec = Spec {
    read: &[
        &["--help", "-v|--version"],
        &[
            "--normal", "-q|--brief", "-s|--report-identical-files", "-c", "-C=", "--context[=]",
            "-u", "-U=", "--unified[=]", "-e|--ed", "-n|--rcs", "-y|--side-by-side", "-W=|--width=",
            "--left-column", "--suppress-common-lines", "-p|--show-c-function",
            "-F=|--show-function-line=", "--label=", "-t|--expand-tabs", "-T|--initial-tab",
            "--tabsize=", "--suppress-blank-empty", "-r|--recursive", "--no-dereference",
            "-N|--new-file", "--unidirectional-new-file", "--ignore-file-name-case",
            "--no-ignore-file-name-case", "-x=|--exclude=", "-X=|--exclude-from=",
            "-S=|--starting-file=", "--from-file=", "--to-file=", "-i|--ignore-case",
            "-E|--ignore-tab-expansion", "-Z|--ignore-trailing-space", "-b|--ignore-space-change",
            "-w|--ignore-all-space", "-B|--ignore-blank-lines", "-I=|--ignore-matching-lines=",
            "-a|--text", "--strip-trailing-cr", "-D=|--ifdef=", "--old-group-format=",
            "--new-group-format=", "--unchanged-group-format=", "--changed-group-format=",
            "--line-format=", "--old-line-format=", "--new-line-format=",
            "--unchanged-line-format=", "-d|--minimal", "--horizon-lines=", "--speed-large-files",
            "--color[=]", "--palette=",
        ],
    ],
    danger: &[("-l|--paginate", "runs `pr` on its output")],
    numeric: true,
    complete: false,
};

/// `file`. Without `-z` it does not look inside compressed files (newer
/// versions would start decompressors for that).
#[rustfmt::skip]
pub(crate) const FILE: Spec = Spec {
    read: &[
        &["--help", "-v|--version"],
        &[
            "-m=|--magic-file=", "-b|--brief", "-c|--checking-printout", "-e=|--exclude=",
            "--exclude-quiet=", "-f=|--files-from=", "-F=|--separator=", "-i|--mime", "--apple",
            "--extension", "--mime-type", "--mime-encoding", "-k|--keep-going", "-l|--list",
            "-L|--dereference", "-h|--no-dereference", "-n|--no-buffer", "-N|--no-pad",
            "-0|--print0", "-P=|--parameter=", "-r|--raw", "-s|--special-files", "-d|--debug",
        ],
    ],
    danger: &[
        ("-C|--compile", "writes a compiled magic file"),
        (
            "-z|--uncompress",
            "may run decompressors to look inside files",
        ),
        (
            "-Z|--uncompress-noreport",
            "may run decompressors to look inside files",
        ),
        (
            "-p|--preserve-date",
            "changes the access times of the files it reads",
        ),
        ("-S|--no-sandbox", "turns off its own system-call sandbox"),
    ],
    numeric: false,
    complete: false,
};

/// debianutils `which` (a `/bin/sh` script).
pub(crate) const WHICH: Spec = Spec::read(&[&["-a", "-s"]], true);

pub(crate) const WHEREIS: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &["-b", "-B", "-m", "-M", "-s", "-S", "-f", "-u", "-l"],
    ],
    true,
);

/// procps `pgrep` (the same program as `pkill`, but it only lists).
#[rustfmt::skip]
pub(crate) const PGREP: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-d=|--delimiter=", "-l|--list-name", "-a|--list-full", "-v|--inverse",
            "-w|--lightweight", "-c|--count", "-f|--full", "-g=|--pgroup=", "-G=|--group=",
            "-i|--ignore-case", "-n|--newest", "-o|--oldest", "-O=|--older=", "-P=|--parent=",
            "-s=|--session=", "-t=|--terminal=", "-u=|--euid=", "-U=|--uid=", "-x|--exact",
            "-F=|--pidfile=", "-L|--logpidfile", "-r=|--runstates=", "-A|--ignore-ancestors",
            "--cgroup=", "--ns=", "--nslist=",
        ],
    ],
    true,
);

pub(crate) const UPTIME: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &["-p|--pretty", "-s|--since"],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const FREE: Spec = Spec::read(
    &[
        &["--help", "-V|--version"],
        &[
            "-b|--bytes", "--kilo", "--mega", "--giga", "--tera", "--peta", "-k|--kibi",
            "-m|--mebi", "-g|--gibi", "--tebi", "--pebi", "-h|--human", "--si", "-l|--lohi",
            "-t|--total", "-v|--committed", "-s=|--seconds=", "-c=|--count=", "-w|--wide",
        ],
    ],
    true,
);

/// `w`, `who`, `users`.
#[rustfmt::skip]
pub(crate) const WHO: Spec = Spec::read(
    &[
        &["--help", "-V|--version"],
        &[
            "-a|--all", "-b|--boot", "-d|--dead", "-H|--heading", "-l|--login", "-m",
            "-p|--process", "-q|--count", "-r|--runlevel", "-s|--short", "-t|--time",
            "-T|-w|--mesg|--message|--writable", "-u|--users|--no-current", "-h|--no-header",
            "-f|--from", "-o|--old-style", "-i|--ip-addr",
        ],
    ],
    true,
);

#[rustfmt::skip]
pub(crate) const LAST: Spec = Spec {
    read: &[
        &["-h|--help", "-V|--version"],
        &[
            "-a|--hostlast", "-f=|--file=", "-F|--fulltimes", "-i|--ip", "-n=|--limit=",
            "-R|--nohostname", "-s=|--since=", "-t=|--until=", "-p=|--present=", "-w|--fullnames",
            "-x|--system", "--time-format=",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: false,
};

/// procps `top`, in batch mode for a pipe. It writes its settings file only
/// on the interactive `W` command, which a command line cannot give.
#[rustfmt::skip]
pub(crate) const TOP: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-b|--batch-mode", "-c|--cmdline-toggle", "-d=|--delay=", "-E=|--scale-summary-mem=",
            "-e=|--scale-task-mem=", "-H|--threads-show", "-i|--idle-toggle", "-n=|--iterations=",
            "-O|--list-fields", "-o=|--sort-override=", "-p=|--pid=", "-S|--accum-time-toggle",
            "-s|--secure-mode", "-U=|--filter-any-user=", "-u=|--filter-only-euser=",
            "-w[=]|--width[=]", "-1|--single-cpu-toggle",
        ],
    ],
    false,
);

#[rustfmt::skip]
pub(crate) const LSCPU: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-a|--all", "-b|--online", "-B|--bytes", "-C[=]|--caches[=]", "-c|--offline",
            "-J|--json", "-e[=]|--extended[=]", "-p[=]|--parse[=]", "-s=|--sysroot=", "-x|--hex",
            "-y|--physical", "--output-all",
        ],
    ],
    false,
);

#[rustfmt::skip]
pub(crate) const LSBLK: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-A|--noempty", "-D|--discard", "-E=|--dedup=", "-I=|--include=", "-J|--json",
            "-M|--merge", "-O|--output-all", "-P|--pairs", "-S|--scsi", "-T[=]|--tree[=]",
            "-a|--all", "-b|--bytes", "-d|--nodeps", "-e=|--exclude=", "-f|--fs", "-i|--ascii",
            "-l|--list", "-m|--perms", "-n|--noheadings", "-o=|--output=", "-p|--paths", "-r|--raw",
            "-s|--inverse", "-t|--topology", "-w=|--width=", "-x=|--sort=", "-y|--shell",
            "-z|--zoned", "--sysroot=",
        ],
    ],
    false,
);

/// `lsof` forks (without `execve`) to `stat` files that may hang; that is
/// allowed under the `safe` profile.
#[rustfmt::skip]
pub(crate) const LSOF: Spec = Spec {
    read: &[
        &["-h", "-v"],
        &[
            "-i[=]", "-p=", "-u=", "-c=", "-g=", "-t", "-n", "-P", "-a", "-l", "-w", "-R", "-F[=]",
            "-s[=]", "-U", "-b", "-K[=]", "-M", "-N", "-o[=]", "-O", "-V", "-x[=]", "-E", "-Q",
        ],
    ],
    danger: &[
        ("-D=", "reads or writes a device cache file"),
        ("-r[=]", "repeats forever"),
    ],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
pub(crate) const GETCONF: Spec = Spec::read(&[&["-a", "-v="]], false);

#[rustfmt::skip]
pub(crate) const LOCALE: Spec = Spec::read(
    &[
        &["-?|--help", "--usage", "-V|--version"],
        &[
            "-a|--all-locales", "-m|--charmaps", "-c|--category-name", "-k|--keyword-name",
            "-v|--verbose",
        ],
    ],
    true,
);

/// util-linux or BSD `cal`.
#[rustfmt::skip]
pub(crate) const CAL: Spec = Spec {
    read: &[
        &["-h|--help", "-V|--version"],
        &[
            "-1|--one", "-3|--three", "-n=|--months=", "-S|--span", "-s|--sunday", "-m|--monday",
            "-j|--julian", "--reform=", "--iso", "-y|--year", "-Y|--twelve", "-w|--week[=]",
            "-v|--vertical", "--color[=]", "-c=|--columns=",
        ],
    ],
    danger: &[],
    numeric: false,
    complete: false,
};

#[rustfmt::skip]
pub(crate) const LOOK: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-a|--alternative", "-d|--alphanum", "-f|--ignore-case", "-t=|--terminate=",
        ],
    ],
    true,
);

/// util-linux `column`.
#[rustfmt::skip]
pub(crate) const COLUMN: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-t|--table", "-n=|--table-name=", "-O=|--table-order=", "-N=|--table-columns=",
            "-l=|--table-columns-limit=", "-E=|--table-noextreme=", "-d|--table-noheadings",
            "-e|--table-header-repeat", "-H=|--table-hide=", "-R=|--table-right=",
            "-T=|--table-truncate=", "-W=|--table-wrap=", "-L|--keep-empty-lines", "-J|--json",
            "-r=|--tree=", "-i=|--tree-id=", "-p=|--tree-parent=", "-c=|--output-width=",
            "-o=|--output-separator=", "-s=|--separator=", "-x|--fillrows",
        ],
    ],
    true,
);

/// util-linux `hexdump`.
#[rustfmt::skip]
pub(crate) const HEXDUMP: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version"],
        &[
            "-b|--one-byte-octal", "-X|--one-byte-hex", "-c|--one-byte-char", "-C|--canonical",
            "-d|--two-bytes-decimal", "-o|--two-bytes-octal", "-x|--two-bytes-hex",
            "-L[=]|--color[=]", "-e=|--format=", "-f=|--format-file=", "-n=|--length=",
            "-s=|--skip=", "-v|--no-squeezing",
        ],
    ],
    true,
);

/// binutils `strings`.
#[rustfmt::skip]
pub(crate) const STRINGS: Spec = Spec {
    read: &[
        &["-h|--help", "-v|-V|--version"],
        &[
            "-a|--all", "-d|--data", "-f|--print-file-name", "-n=|--bytes=", "-t=|--radix=",
            "-w|--include-all-whitespace", "-o", "-T=|--target=", "-e=|--encoding=", "--unicode=",
            "-U=", "-s=|--output-separator=",
        ],
    ],
    danger: &[],
    numeric: true,
    complete: false,
};

/// binutils `nm`; `--plugin` loads a shared library.
#[rustfmt::skip]
pub(crate) const NM: Spec = Spec {
    read: &[
        &["-h|--help", "-V|--version"],
        &[
            "-a|--debug-syms", "-A|-o|--print-file-name", "-B", "-C|--demangle[=]", "--no-demangle",
            "--recurse-limit", "--no-recurse-limit", "-D|--dynamic", "-e", "-f=|--format=",
            "-g|--extern-only", "--ifunc-chars=", "-j|--just-symbols", "-l|--line-numbers",
            "-n|-v|--numeric-sort", "-p|--no-sort", "-P|--portability", "-r|--reverse-sort",
            "-S|--print-size", "-s|--print-armap", "--quiet", "--size-sort", "--special-syms",
            "--synthetic", "-t=|--radix=", "--target=", "-u|--undefined-only", "-U|--defined-only",
            "--unicode=", "-W|--no-weak", "--with-symbol-versions", "-X=",
        ],
    ],
    danger: &[("--plugin=", "loads a plugin (a shared library)")],
    numeric: false,
    complete: false,
};

/// binutils `objdump`; `--plugin` loads a shared library.
#[rustfmt::skip]
pub(crate) const OBJDUMP: Spec = Spec {
    read: &[
        &["-H|--help", "-v|--version"],
        &[
            "-a|--archive-headers", "-f|--file-headers", "-p|--private-headers", "-P=|--private=",
            "-h|--section-headers|--headers", "-x|--all-headers", "-d|--disassemble[=]",
            "-D|--disassemble-all", "-S|--source", "--source-comment[=]", "-s|--full-contents",
            "-g|--debugging", "-e|--debugging-tags", "-G|--stabs", "-W[=]|--dwarf[=]",
            "-L|--process-links", "--ctf[=]", "--sframe[=]", "-t|--syms", "-T|--dynamic-syms",
            "-r|--reloc", "-R|--dynamic-reloc", "-i|--info", "-b=|--target=", "-m=|--architecture=",
            "-j=|--section=", "-M=|--disassembler-options=", "-EB", "-EL", "--endian=",
            "--file-start-context", "-I=|--include=", "-l|--line-numbers", "-F|--file-offsets",
            "-C|--demangle[=]", "--recurse-limit", "--no-recurse-limit", "-w|--wide", "-U=",
            "--unicode=", "-z|--disassemble-zeroes", "--start-address=", "--stop-address=",
            "--no-addresses", "--prefix-addresses", "--show-raw-insn", "--no-show-raw-insn",
            "--insn-width=", "--adjust-vma=", "--show-all-symbols", "--special-syms", "--inlines",
            "--prefix=", "--prefix-strip=", "--dwarf-depth=", "--dwarf-start=", "--dwarf-check",
            "--ctf-parent=", "--visualize-jumps[=]", "--disassembler-color=",
        ],
    ],
    danger: &[("--plugin=", "loads a plugin (a shared library)")],
    numeric: false,
    complete: false,
};

/// binutils `readelf`.
#[rustfmt::skip]
pub(crate) const READELF: Spec = Spec::read(
    &[
        &["-H|--help", "-v|--version"],
        &[
            "-a|--all", "-h|--file-header", "-l|--program-headers|--segments",
            "-S|--section-headers|--sections", "-g|--section-groups", "-t|--section-details",
            "-e|--headers", "-s|--syms|--symbols", "--dyn-syms", "--lto-syms", "--sym-base=",
            "-C|--demangle[=]", "--no-demangle", "--recurse-limit", "--no-recurse-limit",
            "-U=|--unicode=", "-n|--notes", "-r|--relocs", "-u|--unwind", "-d|--dynamic",
            "-V|--version-info", "-A|--arch-specific", "-c|--archive-index", "-D|--use-dynamic",
            "-L|--lint|--enable-checks", "-x=|--hex-dump=", "-p=|--string-dump=",
            "-R=|--relocated-dump=", "-z|--decompress", "-w[=]|--debug-dump[=]",
            "-P|--process-links", "--dwarf-depth=", "--dwarf-start=", "--ctf=", "--ctf-parent=",
            "--ctf-symbols=", "--ctf-strings=", "--sframe[=]", "-I|--histogram", "-W|--wide",
            "-T|--silent-truncation",
        ],
    ],
    false,
);

/// binutils `size`.
#[rustfmt::skip]
pub(crate) const SIZE: Spec = Spec::read(
    &[
        &["-h|-H|--help", "-v|-V|--version"],
        &[
            "-A", "-B", "-G", "--format=", "-o", "-d", "-x", "--radix=", "-t|--totals", "-f",
            "--common", "--target=",
        ],
    ],
    false,
);

/// vim's `xxd`: single-dash words (`-ps`, `-cols 8`). A second operand is
/// written (checked by the caller).
#[rustfmt::skip]
pub(crate) const XXD: Spec = Spec {
    read: &[&[
        "-a|-autoskip", "-b|-bits", "-C|-capitalize", "-c=|-cols=", "-E|-EBCDIC", "-e",
        "-g=|-groupsize=", "-h|-help", "-i|-include", "-l=|-len=", "-n=|-name=", "-o=|-offset=",
        "-p|-ps|-postscript|-plain", "-d", "-s=|-seek=", "-u", "-R=", "-v|-version",
    ]],
    danger: &[("-r|-revert", "writes binary data, possibly into a file")],
    numeric: false,
    complete: false,
};

/// jq has no option that writes or runs anything; `--arg NAME VALUE` takes
/// two words, the second read as an operand, which is harmless.
#[rustfmt::skip]
pub(crate) const JQ: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version", "--build-configuration"],
        &[
            "-c|--compact-output", "-n|--null-input", "-e|--exit-status", "-s|--slurp",
            "-r|--raw-output", "--raw-output0", "-j|--join-output", "-a|--ascii-output",
            "-R|--raw-input", "-C|--color-output", "-M|--monochrome-output", "-S|--sort-keys",
            "--tab", "--indent=", "--unbuffered", "--stream", "--stream-errors", "--seq",
            "-f=|--from-file=", "-L=|--library-path=", "--arg=", "--argjson=", "--slurpfile=",
            "--rawfile=", "--args", "--jsonargs",
        ],
    ],
    true,
);

/// `tree`. `-R` writes `00Tree.html` in every directory; `-o` writes a file.
#[rustfmt::skip]
pub(crate) const TREE: Spec = Spec {
    read: &[
        &["--help", "--version"],
        &[
            "-a", "-d", "-l", "-f", "-x", "-L=", "-P=", "-I=", "--gitignore", "--gitfile=",
            "--ignore-case", "--matchdirs", "--metafirst", "--prune", "--info", "--infofile=",
            "--noreport", "--charset=", "--filelimit=", "--hintro=", "--houtro=", "--fromfile",
            "--fromtabfile", "--fflinks", "-i", "-q", "-N", "-Q", "-p", "-u", "-g", "-s", "-h",
            "--si", "--du", "-D", "--timefmt=", "-F", "--inodes", "--device", "-v", "-t", "-c",
            "-U", "-r", "--dirsfirst", "--filesfirst", "--sort=", "-n", "-C", "-A", "-S", "-X",
            "-J", "-H=", "-T=", "--nolinks",
        ],
    ],
    danger: &[
        ("-o=", "writes its output to a file"),
        ("-R", "writes an HTML file in every directory"),
    ],
    numeric: false,
    complete: false,
};

/// ripgrep. `-z` starts decompressors; `--pre` runs a program on every
/// file; `--hostname-bin` runs a program for hyperlinks. ripgrep does not
/// abbreviate long options, so a prefix is rejected by it (and judged by
/// the prefix rules here).
#[rustfmt::skip]
pub(crate) const RG: Spec = Spec {
    read: &[
        &[
            "-h|--help", "-V|--version", "--pcre2-version", "--type-list",
        ],
        &[
            "-e=|--regexp=", "-f=|--file=", "-A=|--after-context=", "-B=|--before-context=",
            "-C=|--context=", "-b|--byte-offset", "--binary", "--no-binary", "--block-buffered",
            "--line-buffered", "-c|--count", "--count-matches", "--color=", "--colors=", "--column",
            "--no-column", "--context-separator=", "--no-context-separator", "--crlf", "--debug",
            "--trace", "--dfa-size-limit=", "-E=|--encoding=", "--engine=",
            "--field-context-separator=", "--field-match-separator=", "--files",
            "-l|--files-with-matches", "--files-without-match", "-F|--fixed-strings",
            "--no-fixed-strings", "-L|--follow", "--no-follow", "--generate=", "-g=|--glob=",
            "--glob-case-insensitive", "--iglob=", "--heading", "--no-heading", "-.|--hidden",
            "--no-hidden", "--hyperlink-format=", "-i|--ignore-case", "--ignore-file=",
            "--ignore-file-case-insensitive", "--include-zero", "-v|--invert-match", "--json",
            "--no-json", "-n|--line-number", "-N|--no-line-number", "-x|--line-regexp",
            "-M=|--max-columns=", "--max-columns-preview", "-m=|--max-count=",
            "-d=|--max-depth=|--maxdepth=", "--max-filesize=", "--mmap", "--no-mmap",
            "-U|--multiline", "--multiline-dotall", "--no-config", "--no-ignore", "--no-ignore-dot",
            "--no-ignore-exclude", "--no-ignore-files", "--no-ignore-global", "--no-ignore-parent",
            "--no-ignore-vcs", "--no-messages", "--no-require-git", "--no-unicode", "-0|--null",
            "--null-data", "--one-file-system", "-o|--only-matching", "--passthru|--passthrough",
            "--path-separator=", "-P|--pcre2", "--no-pcre2", "-p|--pretty", "-q|--quiet",
            "--regex-size-limit=", "-r=|--replace=", "-s|--case-sensitive", "-S|--smart-case",
            "--sort=", "--sortr=", "--sort-files", "--stats", "--no-stats", "--stop-on-nonmatch",
            "-a|--text", "--no-text", "-j=|--threads=", "--trim", "--no-trim", "-t=|--type=",
            "-T=|--type-not=", "--type-add=", "--type-clear=", "-u|--unrestricted", "--vimgrep",
            "-H|--with-filename", "-I|--no-filename", "-w|--word-regexp", "--auto-hybrid-regex",
            "--no-auto-hybrid-regex", "--no-search-zip", "--no-pre", "--ignore",
            "--no-ignore-messages", "--unicode",
        ],
    ],
    danger: &[
        ("--pre=", "runs a program on every file searched"),
        ("--pre-glob=", "chooses the files a `--pre` program runs on"),
        ("-z|--search-zip", "runs decompression programs"),
        ("--hostname-bin=", "runs a program to find the host name"),
    ],
    numeric: false,
    complete: false,
};

/// fd (`fdfind` on Debian). `-l` runs `ls` on the results.
#[rustfmt::skip]
pub(crate) const FD: Spec = Spec {
    read: &[
        &["-h|--help", "-V|--version"],
        &[
            "-H|--hidden", "--no-hidden", "-I|--no-ignore", "--ignore", "--no-ignore-vcs",
            "--ignore-vcs", "--no-require-git", "--require-git", "--no-ignore-parent",
            "--no-global-ignore-file", "-u|--unrestricted", "-s|--case-sensitive",
            "-i|--ignore-case", "-g|--glob", "--regex", "-F|--fixed-strings", "--and=",
            "-a|--absolute-path", "--relative-path", "-L|--follow", "--no-follow", "-p|--full-path",
            "-0|--print0", "-d=|--max-depth=", "--min-depth=", "--exact-depth=", "--prune",
            "-t=|--type=", "-e=|--extension=", "-S=|--size=",
            "--changed-within=|--change-newer-than=|--newer=",
            "--changed-before=|--change-older-than=|--older=", "-o=|--owner=", "--format=",
            "-E=|--exclude=", "--ignore-file=", "-c=|--color=", "--hyperlink[=]", "-j=|--threads=",
            "--max-results=", "-1", "-q|--quiet", "--show-errors", "--base-directory=",
            "--path-separator=", "--search-path=", "--strip-cwd-prefix[=]",
            "--one-file-system|--mount|--xdev",
        ],
    ],
    danger: &[
        ("-x=|--exec=", "runs a command on every result"),
        ("-X=|--exec-batch=", "runs a command on the results"),
        ("-l|--list-details", "runs `ls` on the results"),
        ("--batch-size=", "runs a command on the results"),
    ],
    numeric: false,
    complete: false,
};

/// `zcat` (a `/bin/sh` script running `gzip -cd`), `bzcat`, `xzcat`,
/// `zstdcat`: decompress to stdout.
#[rustfmt::skip]
pub(crate) const ZCAT: Spec = Spec::read(
    &[
        &["-h|--help", "-V|--version", "-L|--license"],
        &[
            "-f|--force", "-q|--quiet", "-v|--verbose", "-s|--small", "-T=|--threads=",
            "-M=|--memlimit=|--memory=", "-Q|--no-warn", "-k|--keep", "-c|--stdout|--to-stdout",
            "-d|--decompress|--uncompress",
        ],
    ],
    false,
);

/// `hostname`: only the forms that neither set the name nor ask DNS (the
/// `safe` profile has no network).
pub(crate) const HOSTNAME: Spec = Spec {
    read: &[&["-h|--help", "-V|--version"], &["-s|--short"]],
    danger: &[
        ("-F=|--file=", "sets the host name from a file"),
        ("-b|--boot", "sets the host name"),
    ],
    numeric: false,
    complete: false,
};

/// `sed`: the script is read by the caller (`scripts.rs`).
#[rustfmt::skip]
pub(crate) const SED: Spec = Spec {
    read: &[
        HELP,
        &[
            "-n|--quiet|--silent", "--debug", "-e=|--expression=", "--follow-symlinks",
            "-l=|--line-length=", "--posix", "-E|-r|--regexp-extended", "-s|--separate",
            "--sandbox", "-u|--unbuffered", "-z|--null-data", "-b|--binary",
        ],
    ],
    danger: &[
        ("-i[=]|--in-place[=]", "edits files in place"),
        (
            "-f=|--file=",
            "runs a script from a file (which can write files and run commands)",
        ),
    ],
    numeric: false,
    complete: false,
};

/// `awk`, `gawk`, `mawk`, `nawk`, busybox `awk`: the union of their
/// options; the program is read by the caller (`scripts.rs`).
#[rustfmt::skip]
pub(crate) const AWK: Spec = Spec {
    read: &[
        &["-h|--help", "-V|--version", "--usage", "--copyright|-C"],
        &[
            "-F=|--field-separator=", "-v=|--assign=", "-e=|--source=", "-b|--characters-as-bytes",
            "-c|--traditional", "-k|--csv", "-L[=]|--lint[=]", "-M|--bignum", "-N|--use-lc-numeric",
            "-n|--non-decimal-data", "-O|--optimize", "-P|--posix", "-r|--re-interval",
            "-s|--no-optimize", "-S|--sandbox", "-t|--lint-old", "-g|--gen-pot", "-I|--trace",
        ],
    ],
    danger: &[
        (
            "-f=|--file=",
            "runs a program from a file (which can write files and run commands)",
        ),
        (
            "-E=|--exec=",
            "runs a program from a file (which can write files and run commands)",
        ),
        ("-i=|--include=", "loads awk code from a file"),
        ("-l=|--load=", "loads an extension (a shared library)"),
        (
            "-d[=]|--dump-variables[=]",
            "writes its variables to a file",
        ),
        ("-o[=]|--pretty-print[=]", "writes the program to a file"),
        ("-p[=]|--profile[=]", "writes a profile to a file"),
        (
            "-D[=]|--debug[=]",
            "starts the debugger, which runs commands",
        ),
        (
            "-W=",
            "sets implementation options, some of which run programs (`mawk -W exec`)",
        ),
    ],
    numeric: false,
    complete: false,
};

/// `tar` in list mode (checked by the caller: `-t` and nothing that
/// writes). GNU tar runs `gzip -d` and the like through `/bin/sh -c` to
/// read a compressed archive, whether or not `-z` is given (it recognises
/// the format), so a `safe` `tar` may run the decompressors listed in
/// `programs.rs`.
#[rustfmt::skip]
pub(crate) const TAR: Spec = Spec {
    read: &[
        HELP,
        &[
            "-t|--list", "-f=|--file=", "-v|--verbose", "-z|--gzip|--gunzip|--ungzip", "-j|--bzip2",
            "-J|--xz", "--zstd", "--lzma", "--lzip", "--lzop", "-Z|--compress|--uncompress",
            "-a|--auto-compress", "--force-local", "-C=|--directory=", "--wildcards",
            "--no-wildcards", "--wildcards-match-slash", "--no-wildcards-match-slash", "--anchored",
            "--no-anchored", "--ignore-case", "--no-ignore-case", "--exclude=",
            "-X=|--exclude-from=", "-T=|--files-from=", "--null", "--no-null",
            "--verbatim-files-from", "--no-verbatim-files-from", "--no-recursion", "--recursion",
            "--numeric-owner", "--full-time", "--utc", "-b=|--blocking-factor=", "--record-size=",
            "-i|--ignore-zeros", "--occurrence[=]", "--quoting-style=", "--quote-chars=",
            "--no-quote-chars=", "--show-transformed-names", "--show-stored-names",
            "--transform=|--xform=", "--strip-components=", "-R|--block-number", "--totals[=]",
            "--warning=", "--checkpoint[=]", "-l|--check-links", "-n|--seek", "--no-seek",
            "--sparse-version=", "-S|--sparse", "--format=|-H=", "-o", "--exclude-vcs",
            "--exclude-vcs-ignores", "--exclude-backups", "--exclude-caches",
            "--exclude-caches-all", "--exclude-caches-under", "--exclude-tag=",
            "--exclude-tag-all=", "--exclude-tag-under=", "--one-file-system", "--no-acls",
            "--no-selinux", "--no-xattrs", "--acls", "--selinux", "--xattrs", "--xattrs-include=",
            "--xattrs-exclude=", "--same-order|--preserve-order|-s", "-?|--usage",
        ],
    ],
    danger: &[
        ("-x|--extract|--get", "extracts files"),
        ("-c|--create", "creates an archive"),
        ("-r|--append", "writes to the archive"),
        ("-u|--update", "writes to the archive"),
        ("-A|--catenate|--concatenate", "writes to the archive"),
        ("--delete", "writes to the archive"),
        (
            "-d|--diff|--compare",
            "compares the archive with files on disk",
        ),
        ("--to-command=", "runs a program for each file"),
        (
            "-I=|--use-compress-program=",
            "runs a compression program of the caller's choosing",
        ),
        (
            "--checkpoint-action=",
            "runs actions at checkpoints (`exec=` runs a command)",
        ),
        (
            "-F=|--info-script=|--new-volume-script=",
            "runs a script at the end of each volume",
        ),
        ("--rsh-command=", "runs a remote shell program"),
        ("--rmt-command=", "runs a remote tape program"),
        (
            "-g=|--listed-incremental=",
            "writes an incremental snapshot file",
        ),
        ("--index-file=", "writes its listing to a file"),
        ("--volno-file=", "writes the volume number to a file"),
        ("-M|--multi-volume", "asks for and runs volume changes"),
        ("--remove-files", "deletes files"),
        (
            "-w|--interactive|--confirmation",
            "asks questions on the terminal",
        ),
    ],
    numeric: false,
    complete: false,
};

/// Info-ZIP `unzip` in listing or printing modes (checked by the caller).
#[rustfmt::skip]
pub(crate) const UNZIP: Spec = Spec {
    read: &[
        &["-h", "-hh", "-v"],
        &[
            "-l", "-t", "-Z", "-z", "-p", "-c", "-q", "-qq", "-1", "-2", "-s", "-m", "-T", "-M",
            "-C", "-a", "-b", "-L",
        ],
    ],
    danger: &[
        ("-d=", "extracts files into a directory"),
        ("-o", "overwrites files"),
        ("-f", "extracts files"),
        ("-u", "extracts files"),
        ("-n", "extracts files"),
        ("-j", "extracts files"),
        ("-x", "extracts files"),
        ("-X", "extracts files"),
        ("-D", "extracts files"),
        ("-K", "extracts files"),
        ("-P=", "extracts files with a password"),
    ],
    numeric: false,
    complete: false,
};

/// `find`: global options and tests are single-dash words; actions that
/// write or run are dangerous. `-exec` and the like are also parsed as
/// commands of their own (`parse.rs`).
#[rustfmt::skip]
pub(crate) const FIND: Spec = Spec {
    read: &[
        &["--help", "--version", "-help", "-version"],
        // Global and positional options.
        &[
            "-H", "-L", "-P", "-D=", "-O", "-O1", "-O2", "-O3", "-daystart", "-depth|-d", "-follow",
            "-ignore_readdir_race", "-noignore_readdir_race", "-maxdepth=", "-mindepth=",
            "-mount|-xdev", "-noleaf", "-regextype=", "-warn", "-nowarn", "-files0-from=",
        ],
        // Tests.
        &[
            "-amin=", "-anewer=", "-atime=", "-cmin=", "-cnewer=", "-ctime=", "-empty",
            "-executable", "-false", "-fstype=", "-gid=", "-group=", "-ilname=", "-iname=",
            "-inum=", "-ipath=|-iwholename=", "-iregex=", "-links=", "-lname=", "-mmin=", "-mtime=",
            "-name=", "-newer=", "-newerBB=", "-newerBm=", "-newerBc=", "-newerBa=", "-newermm=",
            "-newermc=", "-newerma=", "-newermt=", "-newercm=", "-newercc=", "-newerca=",
            "-newerct=", "-newerac=", "-neweram=", "-neweraa=", "-newerat=", "-nogroup", "-nouser",
            "-path=|-wholename=", "-perm=", "-readable", "-regex=", "-samefile=", "-size=", "-true",
            "-type=", "-uid=", "-used=", "-user=", "-writable", "-xtype=", "-context=",
        ],
        // Operators and actions that only print.
        &[
            "-not", "-a|-and", "-o|-or", "-print", "-print0", "-printf=", "-ls", "-prune", "-quit",
        ],
    ],
    danger: &[
        ("-delete", "deletes files"),
        ("-exec=", "runs a command on each file"),
        ("-execdir=", "runs a command on each file"),
        ("-ok=", "runs a command on each file"),
        ("-okdir=", "runs a command on each file"),
        ("-fprint=", "writes to a file"),
        ("-fprint0=", "writes to a file"),
        ("-fprintf=", "writes to a file"),
        ("-fls=", "writes to a file"),
    ],
    numeric: false,
    complete: false,
};

/// Every table, for the invariant tests.
#[cfg(test)]
pub(crate) const ALL: &[(&str, &Spec)] = &[
    ("ls", &LS),
    ("cat", &CAT),
    ("head", &HEAD),
    ("tail", &TAIL),
    ("wc", &WC),
    ("grep", &GREP),
    ("cut", &CUT),
    ("tr", &TR),
    ("sort", &SORT),
    ("uniq", &UNIQ),
    ("comm", &COMM),
    ("join", &JOIN),
    ("paste", &PASTE),
    ("nl", &NL),
    ("fold", &FOLD),
    ("fmt", &FMT),
    ("expand", &EXPAND),
    ("tac", &TAC),
    ("rev", &REV),
    ("seq", &SEQ),
    ("basename", &BASENAME),
    ("dirname", &DIRNAME),
    ("realpath", &REALPATH),
    ("readlink", &READLINK),
    ("stat", &STAT),
    ("du", &DU),
    ("df", &DF),
    ("md5sum", &CHECKSUM),
    ("base64", &BASE64),
    ("od", &OD),
    ("whoami", &PLAIN),
    ("id", &ID),
    ("uname", &UNAME),
    ("nproc", &NPROC),
    ("tty", &TTY),
    ("numfmt", &NUMFMT),
    ("pr", &PR),
    ("date", &DATE),
    ("tee", &TEE),
    ("cmp", &CMP),
    ("diff", &DIFF),
    ("file", &FILE),
    ("which", &WHICH),
    ("whereis", &WHEREIS),
    ("pgrep", &PGREP),
    ("uptime", &UPTIME),
    ("free", &FREE),
    ("who", &WHO),
    ("last", &LAST),
    ("top", &TOP),
    ("lscpu", &LSCPU),
    ("lsblk", &LSBLK),
    ("lsof", &LSOF),
    ("getconf", &GETCONF),
    ("locale", &LOCALE),
    ("cal", &CAL),
    ("look", &LOOK),
    ("column", &COLUMN),
    ("hexdump", &HEXDUMP),
    ("strings", &STRINGS),
    ("nm", &NM),
    ("objdump", &OBJDUMP),
    ("readelf", &READELF),
    ("size", &SIZE),
    ("xxd", &XXD),
    ("jq", &JQ),
    ("tree", &TREE),
    ("rg", &RG),
    ("fd", &FD),
    ("hostname", &HOSTNAME),
    ("sed", &SED),
    ("awk", &AWK),
    ("tar", &TAR),
    ("unzip", &UNZIP),
    ("find", &FIND),
    ("zcat", &ZCAT),
];

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_shell::options::validate;

    /// Every table parses, and no option is listed twice (a danger entry
    /// shadowed by a read-only one would be a hole).
    #[test]
    fn every_table_is_valid() {
        for (name, spec) in ALL {
            assert_eq!(validate(spec), Ok(()), "{name}");
        }
    }
}
