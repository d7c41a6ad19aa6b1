//! The table of wrappers: every program or builtin that runs another
//! command (`env`, `xargs`, `timeout`, `setsid`, `flock`, …), with the
//! options it takes and how its command is found.

use toolgate_core::CommandClass;

use crate::options::Spec;

/// What a wrapper is and how its command is found.
pub(super) struct Wrapper {
    pub(super) name: &'static str,
    pub(super) spec: Spec,
    /// Operands before the program: `timeout DURATION`, `flock FILE`,
    /// `taskset MASK`, `chrt PRIORITY`, `chroot DIR`.
    pub(super) fixed: usize,
    /// Options that make it do something else than run a program
    /// (`command -v`, `ionice -p PID`, `busybox --list`).
    pub(super) stop: &'static [&'static str],
    /// The floor it puts under the command's class, and why.
    pub(super) floor: Option<(CommandClass, &'static str)>,
    /// Whether it is a program (`env`) rather than a builtin (`command`,
    /// `exec`, `builtin`): a program runs the wrapped command through
    /// `execve` even when its name is a builtin's (`env echo`).
    pub(super) execs: bool,
}

#[rustfmt::skip]
const HELP: &[&str] = &["--help", "--version"];
#[rustfmt::skip]
const UTIL_HELP: &[&str] = &["-h|--help", "-V|--version"];

#[rustfmt::skip]
pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "env",
        spec: Spec::read(
            &[
                HELP,
                &[
                    "-i|--ignore-environment", "-0|--null", "-u=|--unset=", "-C=|--chdir=",
                    "-v|--debug", "--block-signal[=]", "--default-signal[=]", "--ignore-signal[=]",
                    "--list-signal-handling",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["--help", "--version"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "xargs",
        spec: Spec::read(
            &[
                HELP,
                &[
                    "-0|--null", "-a=|--arg-file=", "-d=|--delimiter=", "-E=", "-e[=]|--eof[=]",
                    "-I=", "-i[=]|--replace[=]", "-L=|--max-lines=", "-l[=]", "-n=|--max-args=",
                    "-o|--open-tty", "-P=|--max-procs=", "-p|--interactive", "--process-slot-var=",
                    "-r|--no-run-if-empty", "-s=|--max-chars=", "--show-limits", "-t|--verbose",
                    "-x|--exit",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["--help", "--version", "--show-limits"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "nice",
        spec: Spec {
            read: &[HELP, &["-n=|--adjustment="]],
            danger: &[],
            numeric: true,
            complete: false,
        },
        fixed: 0,
        stop: HELP,
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "timeout",
        spec: Spec::read(
            &[
                HELP,
                &[
                    "--preserve-status", "--foreground", "-k=|--kill-after=", "-s=|--signal=",
                    "-v|--verbose",
                ],
            ],
            false,
        ),
        fixed: 1,
        stop: HELP,
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "nohup",
        spec: Spec::read(&[HELP], false),
        fixed: 0,
        stop: HELP,
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "stdbuf",
        spec: Spec::read(
            &[HELP, &["-i=|--input=", "-o=|--output=", "-e=|--error="]],
            false,
        ),
        fixed: 0,
        stop: HELP,
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "time",
        spec: Spec {
            read: &[
                HELP,
                &[
                    "-p|--portability", "-v|--verbose", "-a|--append", "-q|--quiet",
                    "-f=|--format=",
                ],
            ],
            danger: &[("-o=|--output=", "writes its report to a file")],
            numeric: false,
            complete: false,
        },
        fixed: 0,
        stop: HELP,
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "setsid",
        spec: Spec::read(
            &[UTIL_HELP, &["-c|--ctty", "-f|--fork", "-w|--wait"]],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "ionice",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-c=|--class=", "-n=|--classdata=", "-t|--ignore", "-p|--pid", "-P|--pgid",
                    "-u|--uid",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V", "-p", "-P", "-u"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "chrt",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-b|--batch", "-d|--deadline", "-f|--fifo", "-i|--idle", "-o|--other",
                    "-r|--rr", "-R|--reset-on-fork", "-T=|--sched-runtime=", "-P=|--sched-period=",
                    "-D=|--sched-deadline=", "-a|--all-tasks", "-m|--max", "-p|--pid",
                    "-v|--verbose",
                ],
            ],
            false,
        ),
        fixed: 1,
        stop: &["-h", "-V", "-m", "-p"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "taskset",
        spec: Spec::read(
            &[UTIL_HELP, &["-a|--all-tasks", "-p|--pid", "-c|--cpu-list"]],
            false,
        ),
        fixed: 1,
        stop: &["-h", "-V", "-p"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "prlimit",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-p=|--pid=", "-o=|--output=", "--noheadings", "--raw", "--verbose",
                    "-c[=]|--core[=]", "-d[=]|--data[=]", "-e[=]|--nice[=]", "-f[=]|--fsize[=]",
                    "-i[=]|--sigpending[=]", "-l[=]|--memlock[=]", "-m[=]|--rss[=]",
                    "-n[=]|--nofile[=]", "-q[=]|--msgqueue[=]", "-r[=]|--rtprio[=]",
                    "-s[=]|--stack[=]", "-t[=]|--cpu[=]", "-u[=]|--nproc[=]", "-v[=]|--as[=]",
                    "-x[=]|--locks[=]", "-y[=]|--rttime[=]",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V", "-p"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "flock",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-s|--shared", "-x|-e|--exclusive", "-u|--unlock", "-n|--nb|--nonblock",
                    "-w=|--wait=|--timeout=", "-E=|--conflict-exit-code=", "-o|--close",
                    "-c=|--command=", "-F|--no-fork", "--verbose",
                ],
            ],
            false,
        ),
        fixed: 1,
        stop: &["-h", "-V"],
        floor: Some((CommandClass::Dev, "`flock` creates and locks its lock file")),
        execs: true,
    },
    Wrapper {
        name: "unbuffer",
        spec: Spec::read(&[&["-p"]], false),
        fixed: 0,
        stop: &[],
        floor: Some((
            CommandClass::Dev,
            "`unbuffer` runs the command under `expect`",
        )),
        execs: true,
    },
    Wrapper {
        name: "busybox",
        spec: Spec::read(&[&["--help", "--list", "--list-full", "--install"]], false),
        fixed: 0,
        stop: &["--help", "--list", "--list-full", "--install"],
        floor: Some((
            CommandClass::Dev,
            "`busybox` applets are not the programs toolgate knows",
        )),
        execs: true,
    },
    Wrapper {
        name: "toybox",
        spec: Spec::read(&[&["--help", "--list", "--list-full", "--install"]], false),
        fixed: 0,
        stop: &["--help", "--list", "--list-full", "--install"],
        floor: Some((
            CommandClass::Dev,
            "`toybox` commands are not the programs toolgate knows",
        )),
        execs: true,
    },
    Wrapper {
        name: "watch",
        spec: Spec::read(
            &[
                &["-h|--help", "-v|--version"],
                &[
                    "-b|--beep", "-c|--color", "-C|--no-color", "-d[=]|--differences[=]",
                    "-e|--errexit", "-g|--chgexit", "-q=|--equexit=", "-n=|--interval=",
                    "-p|--precise", "-t|--no-title", "-w|--no-wrap", "-r|--no-rerun", "-x|--exec",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-v"],
        floor: Some((
            CommandClass::Dev,
            "`watch` runs the command again and again until stopped",
        )),
        execs: true,
    },
    Wrapper {
        name: "script",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-I=|--log-in=", "-O=|--log-out=", "-B=|--log-io=", "-T=|--log-timing=",
                    "-t[=]|--timing[=]", "-m=|--logging-format=", "-a|--append", "-c=|--command=",
                    "-e|--return", "-f|--flush", "--force", "-E=|--echo=", "-o=|--output-limit=",
                    "-q|--quiet",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V"],
        floor: None,
        execs: true,
    },
    Wrapper {
        name: "strace",
        spec: Spec {
            read: &[
                &["-h|--help", "-V"],
                &[
                    "-f", "-ff", "-c", "-C", "-t", "-tt", "-ttt", "-T", "-y", "-yy", "-v", "-x",
                    "-xx", "-q", "-qq", "-Z", "-z", "-e=", "-s=", "-a=", "-X=", "-P=", "-E=", "-u=",
                    "-b=", "-I=", "-p=", "--trace=", "--signal=", "--status=",
                ],
            ],
            danger: &[("-o=|--output=", "writes its trace to a file")],
            numeric: false,
            complete: false,
        },
        fixed: 0,
        stop: &["-h", "-V", "-p"],
        floor: Some((
            CommandClass::Dev,
            "`strace` traces every system call of the command",
        )),
        execs: true,
    },
    Wrapper {
        name: "ltrace",
        spec: Spec {
            read: &[
                &["-h|--help", "-V|--version"],
                &[
                    "-f", "-c", "-C", "-t", "-tt", "-ttt", "-T", "-S", "-e=", "-s=", "-p=", "-n=",
                ],
            ],
            danger: &[("-o=|--output=", "writes its trace to a file")],
            numeric: false,
            complete: false,
        },
        fixed: 0,
        stop: &["-h", "-V", "-p"],
        floor: Some((
            CommandClass::Dev,
            "`ltrace` traces the library calls of the command",
        )),
        execs: true,
    },
    Wrapper {
        name: "systemd-run",
        spec: Spec::read(
            &[
                &["-h|--help", "--version"],
                &[
                    "--user", "--system", "--scope", "-u=|--unit=", "-p=|--property=",
                    "-d|--same-dir", "--description=", "--slice=", "-r|--remain-after-exit",
                    "--service-type=", "--uid=", "--gid=", "--nice=", "--working-directory=",
                    "-E=|--setenv=", "-t|--pty", "-P|--pipe", "-q|--quiet", "-G|--collect",
                    "--wait", "-S|--shell", "--no-block", "--no-ask-password", "-H=|--host=",
                    "-M=|--machine=", "--on-active=", "--on-boot=", "--on-calendar=",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "--version"],
        floor: Some((
            CommandClass::Dangerous,
            "`systemd-run` runs the command as a system unit, outside toolgate's control",
        )),
        execs: true,
    },
    Wrapper {
        name: "chroot",
        spec: Spec::read(
            &[HELP, &["--userspec=", "--groups=", "--skip-chdir"]],
            false,
        ),
        fixed: 1,
        stop: HELP,
        floor: Some((
            CommandClass::Dangerous,
            "`chroot` runs the command in another root directory",
        )),
        execs: true,
    },
    Wrapper {
        name: "unshare",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-m[=]|--mount[=]", "-u[=]|--uts[=]", "-i[=]|--ipc[=]", "-n[=]|--net[=]",
                    "-p[=]|--pid[=]", "-U[=]|--user[=]", "-C[=]|--cgroup[=]", "-T[=]|--time[=]",
                    "-f|--fork", "--kill-child[=]", "--mount-proc[=]", "-r|--map-root-user",
                    "-c|--map-current-user", "--propagation=", "--setgroups=", "-R=|--root=",
                    "-w=|--wd=", "-S=|--setuid=", "-G=|--setgid=",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V"],
        floor: Some((
            CommandClass::Dangerous,
            "`unshare` runs the command in new namespaces, possibly as root",
        )),
        execs: true,
    },
    Wrapper {
        name: "nsenter",
        spec: Spec::read(
            &[
                UTIL_HELP,
                &[
                    "-t=|--target=", "-a|--all", "-m[=]|--mount[=]", "-u[=]|--uts[=]",
                    "-i[=]|--ipc[=]", "-n[=]|--net[=]", "-p[=]|--pid[=]", "-U[=]|--user[=]",
                    "-C[=]|--cgroup[=]", "-T[=]|--time[=]", "-S=|--setuid=", "-G=|--setgid=",
                    "-r[=]|--root[=]", "-w[=]|--wd[=]", "-F|--no-fork", "--preserve-credentials",
                ],
            ],
            false,
        ),
        fixed: 0,
        stop: &["-h", "-V"],
        floor: Some((
            CommandClass::Dangerous,
            "`nsenter` runs the command in another process's namespaces",
        )),
        execs: true,
    },
    Wrapper {
        name: "command",
        spec: Spec::read(&[&["-p", "-v", "-V"]], false),
        fixed: 0,
        stop: &["-v", "-V"],
        floor: None,
        execs: false,
    },
    Wrapper {
        name: "exec",
        spec: Spec::read(&[&["-c", "-l", "-a="]], false),
        fixed: 0,
        stop: &[],
        floor: None,
        execs: false,
    },
    Wrapper {
        name: "builtin",
        spec: Spec::read(&[], false),
        fixed: 0,
        stop: &[],
        floor: None,
        execs: false,
    },
];

pub(super) fn wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.name == name)
}
