//! Stopping the machine: `systemctl poweroff`, `loginctl reboot`,
//! `kexec -e`, `init 0`, the login manager's D-Bus calls.

use toolgate_shell::words::Word;

/// A program call that stops, reboots or suspends the machine.
pub(super) fn program(name: &str, args: &[Word]) -> Option<String> {
    match name {
        "systemctl" => systemctl(args),
        "loginctl" => args
            .iter()
            .find(|a| POWER_VERBS.contains(&a.text()))
            .map(|a| format!("`loginctl {}` stops or suspends the machine", a.text())),
        "kexec" => args
            .iter()
            .any(|a| matches!(a.text(), "-e" | "--exec" | "-f" | "--force"))
            .then(|| "`kexec -e` reboots into another kernel".to_owned()),
        "busctl" | "dbus-send" | "gdbus" => {
            let login = args.iter().any(|a| a.text().contains("login1"));
            let power = args.iter().find(|a| {
                [
                    "PowerOff",
                    "Reboot",
                    "Halt",
                    "Suspend",
                    "Hibernate",
                    "KExec",
                ]
                .iter()
                .any(|m| a.text().contains(m))
            });
            power
                .filter(|_| login)
                .map(|a| format!("`{name} … {}` stops or suspends the machine", a.text()))
        }
        "init" | "telinit" => args
            .iter()
            .find(|a| matches!(a.text(), "0" | "1" | "6" | "s" | "S"))
            .map(|a| format!("`{name} {}` halts or reboots the machine", a.text())),
        _ => None,
    }
}

/// `systemctl` verbs that stop, reboot or suspend the machine.
const POWER_VERBS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "emergency",
    "rescue",
    "default",
    "isolate",
    "switch-root",
];

/// Targets whose start stops, reboots or suspends the machine.
const POWER_TARGETS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "soft-reboot",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "sleep",
    "rescue",
    "emergency",
    "shutdown",
    "ctrl-alt-del",
    "runlevel0",
    "runlevel1",
    "runlevel6",
    "exit",
    "final",
];

fn systemctl(args: &[Word]) -> Option<String> {
    if let Some(verb) = args.iter().find(|a| POWER_VERBS.contains(&a.text())) {
        return Some(format!(
            "`systemctl {}` stops, reboots or suspends the machine",
            verb.text()
        ));
    }
    let starts = args.iter().any(|a| {
        matches!(
            a.text(),
            "start" | "restart" | "try-restart" | "reload-or-restart" | "try-reload-or-restart"
        )
    });
    let target = args.iter().find(|a| {
        let unit = a.text().strip_suffix(".target").unwrap_or(a.text());
        POWER_TARGETS.contains(&unit) && a.text().ends_with(".target")
    });
    match target {
        Some(t) if starts => Some(format!(
            "`systemctl start {}` stops, reboots or suspends the machine",
            t.text()
        )),
        _ => None,
    }
}
