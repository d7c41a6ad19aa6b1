//! Disks and devices: overwriting a disk device (`dd of=/dev/sda`,
//! `> /dev/nvme0n1`, `tee /dev/sdb`, `shred /dev/sda`), formatting or
//! wiping one (`mkfs.*`, `mkntfs`, `wipefs`, `blkdiscard`, `sgdisk
//! --zap-all`, `hdparm --security-erase`, `nvme format`, `cryptsetup
//! luksFormat`, …), and the `SysRq` key, which reboots or halts the
//! machine.

use super::paths::normalise_path;
use toolgate_shell::model::SimpleCommand;
use toolgate_shell::words::Word;

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
        _ => wipes(name, args),
    }
}

/// Programs that format or wipe a disk whatever their arguments.
const WIPERS: &[&str] = &[
    "mke2fs",
    "mkntfs",
    "mkdosfs",
    "mkexfatfs",
    "mkreiserfs",
    "mkudffs",
    "mkhfs",
    "mkswap",
    "wipefs",
    "blkdiscard",
    "sg_format",
    "sg_sanitize",
    "pvremove",
    "vgremove",
    "lvremove",
];

/// A program that formats or wipes a disk whatever its arguments:
/// `mkfs.*`, `newfs*`, `mke2fs`, `mkntfs`, `mkswap`, `wipefs`,
/// `blkdiscard`, …
pub(super) fn wiper(name: &str) -> Option<String> {
    (name.starts_with("mkfs") || name.starts_with("newfs") || WIPERS.contains(&name))
        .then(|| format!("`{name}` formats or wipes a disk"))
}

/// A disk tool given the arguments that erase a disk, its partition table,
/// its encryption header or its firmware.
fn wipes(name: &str, args: &[Word]) -> Option<String> {
    let has = |spellings: &[&str]| {
        args.iter().map(Word::text).find(|t| {
            spellings.iter().any(|s| {
                t == s
                    || (s.starts_with("--")
                        && t.strip_prefix(s).is_some_and(|r| r.starts_with('=')))
            })
        })
    };
    let action = || {
        args.iter()
            .map(Word::text)
            .find(|t| !t.starts_with('-'))
            .unwrap_or_default()
    };
    let what = match name {
        "sgdisk" | "gdisk" => has(&["-Z", "--zap-all", "-z", "--zap", "-o", "--clear"])
            .map(|o| format!("`{name} {o}` destroys the partition table"))?,
        "sfdisk" => has(&["--delete", "--wipe", "-w"])
            .map(|o| format!("`sfdisk {o}` deletes partitions or wipes signatures"))?,
        "hdparm" => args
            .iter()
            .map(Word::text)
            .find(|t| {
                [
                    "--security-erase",
                    "--trim-sector-ranges",
                    "--write-sector",
                    "--make-bad-sector",
                    "--dco-restore",
                    "--security-set-pass",
                    "--fwdownload",
                ]
                .iter()
                .any(|o| t.starts_with(o))
            })
            .map(|o| format!("`hdparm {o}` erases, locks or damages a disk"))?,
        "nvme" => matches!(
            action(),
            "format" | "sanitize" | "delete-ns" | "fw-download"
        )
        .then(|| format!("`nvme {}` erases a disk or changes its firmware", action()))?,
        "cryptsetup" => matches!(action(), "luksFormat" | "luksErase" | "erase" | "reencrypt")
            .then(|| {
                format!(
                    "`cryptsetup {}` destroys the encrypted data's keys",
                    action()
                )
            })?,
        "badblocks" => args
            .iter()
            .map(Word::text)
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('w'))
            .then(|| "`badblocks -w` overwrites the whole disk".to_owned())?,
        "zpool" => matches!(action(), "destroy" | "labelclear")
            .then(|| format!("`zpool {}` destroys a storage pool", action()))?,
        "zfs" => (action() == "destroy")
            .then(|| "`zfs destroy` destroys datasets and their data".to_owned())?,
        "mdadm" => has(&["--zero-superblock"])
            .map(|_| "`mdadm --zero-superblock` erases a RAID member's metadata".to_owned())?,
        "diskutil" => matches!(
            action(),
            "eraseDisk"
                | "eraseVolume"
                | "zeroDisk"
                | "randomDisk"
                | "secureErase"
                | "partitionDisk"
                | "reformat"
        )
        .then(|| format!("`diskutil {}` erases a disk", action()))?,
        "flashrom" => has(&["-w", "--write", "-E", "--erase"])
            .map(|o| format!("`flashrom {o}` rewrites the firmware"))?,
        "efibootmgr" => has(&["-B", "--delete-bootnum"]).map(|_| {
            "`efibootmgr -B` deletes boot entries, so the machine may not start".to_owned()
        })?,
        "dcfldd" => args.iter().find_map(|a| {
            let target = normalise_path(a.text().strip_prefix("of=")?)?;
            (target.starts_with("/dev/") && !is_harmless_device(&target))
                .then(|| format!("`dcfldd of={target}` overwrites a device"))
        })?,
        "ddrescue" => args
            .iter()
            .filter(|a| !a.text().starts_with('-'))
            .nth(1)
            .filter(|a| is_disk_device(a.text()))
            .map(|a| format!("`ddrescue … {}` overwrites a disk device", a.text()))?,
        _ => return None,
    };
    Some(what)
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
