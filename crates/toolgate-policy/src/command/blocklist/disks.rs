//! Disks and devices: overwriting a disk device (`dd of=/dev/sda`,
//! `> /dev/nvme0n1`, `tee /dev/sdb`), and the `SysRq` key, which reboots or
//! halts the machine.

use super::super::model::SimpleCommand;
use super::super::words::Word;
use super::paths::normalise_path;

/// A redirection of `cmd` writing to a disk device or to `SysRq`.
pub(super) fn redirections(cmd: &SimpleCommand) -> Option<String> {
    for redirection in cmd.redirections() {
        if !redirection.writes_file() {
            continue;
        }
        let target = redirection.target().text();
        if is_disk_device(target) {
            return Some(format!(
                "`{}{}` overwrites a disk device",
                redirection.kind().operator(),
                target
            ));
        }
        if is_sysrq(target) {
            return Some(format!(
                "`{}{}` can reboot or halt the machine through SysRq",
                redirection.kind().operator(),
                target
            ));
        }
    }
    None
}

/// A program writing to a disk device or to `SysRq`.
pub(super) fn program(name: &str, args: &[Word]) -> Option<String> {
    match name {
        "dd" => args.iter().find_map(|a| {
            let target = a.text().strip_prefix("of=")?;
            if is_sysrq(target) {
                return Some(format!(
                    "`dd of={target}` can reboot or halt the machine through SysRq"
                ));
            }
            let target = normalise_path(target)?;
            (target.starts_with("/dev/") && !is_harmless_device(&target))
                .then(|| format!("`dd of={target}` overwrites a device"))
        }),
        "tee" | "cp" | "shred" | "mv" | "install" | "truncate" => args.iter().find_map(|a| {
            if is_disk_device(a.text()) {
                Some(format!("`{name} {}` overwrites a disk device", a.text()))
            } else if is_sysrq(a.text()) {
                Some(format!(
                    "`{name} {}` can reboot or halt the machine through SysRq",
                    a.text()
                ))
            } else {
                None
            }
        }),
        "sysctl" => args.iter().any(|a| a.text().contains("sysrq")).then(|| {
            "`sysctl kernel.sysrq` controls the SysRq key, which can reboot or halt the machine"
                .to_owned()
        }),
        _ => None,
    }
}

pub(super) fn is_disk_device(path: &str) -> bool {
    const DISKS: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "disk/", "mapper/", "loop", "sr",
        "rdisk", "disk", "nbd", "zd", "block/",
    ];
    normalise_path(path).is_some_and(|p| {
        p.strip_prefix("/dev/")
            .is_some_and(|dev| DISKS.iter().any(|d| dev.starts_with(d)))
    })
}

/// `/proc/sysrq-trigger` and `/proc/sys/kernel/sysrq`, however spelt.
pub(super) fn is_sysrq(path: &str) -> bool {
    normalise_path(path)
        .is_some_and(|p| matches!(p.as_str(), "/proc/sysrq-trigger" | "/proc/sys/kernel/sysrq"))
}

fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || path.starts_with("/dev/fd/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices() {
        assert!(is_disk_device("/dev//sda1"));
        assert!(!is_disk_device("dev/sda"));
        assert!(is_sysrq("/proc//sysrq-trigger"));
    }
}
