//! Why user namespaces are refused here, and what to do about it.
//!
//! The full sandbox gives each command a user namespace of its own, which
//! is what lets an unprivileged toolgate make mount, PID and network
//! namespaces. Several systems refuse them, each for its own reason and
//! with its own way out:
//!
//! 1. `user.max_user_namespaces = 0` (a sysctl, per user namespace: also
//!    what a container runtime may set);
//! 2. Debian's older `kernel.unprivileged_userns_clone = 0`;
//! 3. AppArmor's restriction of unprivileged user namespaces
//!    (`kernel.apparmor_restrict_unprivileged_userns = 1`, the default
//!    since Ubuntu 23.10 and 24.04): the namespace is made, but without
//!    capabilities, so nothing can be mounted in it; a profile with the
//!    `userns` rule for the toolgate binary lifts it for toolgate alone;
//! 4. a container's seccomp filter refusing `unshare(CLONE_NEWUSER)`.
//!
//! Where toolgate itself holds `CAP_SYS_ADMIN` in its user namespace (root,
//! or the root of a container), it needs no user namespace: the sandbox
//! makes the other namespaces directly ([`has_sys_admin`]). Otherwise the
//! sandbox falls back to Landlock only and says which case applies and
//! the one command that fixes it ([`refused_because`], [`remedy`]).

use std::path::Path;

/// `CAP_SYS_ADMIN` (`capability.h`).
const CAP_SYS_ADMIN: u32 = 21;

/// Whether this process holds `CAP_SYS_ADMIN` in its own user namespace
/// (its effective set, `/proc/self/status`).
pub(crate) fn has_sys_admin() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
    })
}

/// The cases of the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    MaxZero,
    DebianSysctl,
    AppArmor,
    Other,
}

fn sysctl(name: &str) -> Option<String> {
    std::fs::read_to_string(Path::new("/proc/sys").join(name))
        .ok()
        .map(|v| v.trim().to_owned())
}

fn case() -> Case {
    if sysctl("user/max_user_namespaces").as_deref() == Some("0") {
        Case::MaxZero
    } else if sysctl("kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        Case::DebianSysctl
    } else if sysctl("kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        Case::AppArmor
    } else {
        Case::Other
    }
}

/// Why user namespaces are refused, given the error the probe met.
pub(crate) fn refused_because(error: &str) -> String {
    match case() {
        Case::MaxZero => "user.max_user_namespaces is 0".to_owned(),
        Case::DebianSysctl => "kernel.unprivileged_userns_clone is 0".to_owned(),
        Case::AppArmor => "AppArmor restricts unprivileged user namespaces \
            (kernel.apparmor_restrict_unprivileged_userns is 1, as on Ubuntu 24.04)"
            .to_owned(),
        Case::Other => format!(
            "the kernel refused them: {error}; a container's seccomp filter refuses \
             unshare(CLONE_NEWUSER) this way"
        ),
    }
}

/// The one command (or setting) that gives toolgate its full sandbox back.
pub(crate) fn remedy() -> String {
    match case() {
        Case::MaxZero => "allow them with `sudo sysctl -w user.max_user_namespaces=15000` \
            (and in /etc/sysctl.d to keep it), or run toolgate as root"
            .to_owned(),
        Case::DebianSysctl => {
            "allow them with `sudo sysctl -w kernel.unprivileged_userns_clone=1` \
            (and in /etc/sysctl.d to keep it)"
                .to_owned()
        }
        Case::AppArmor => "install toolgate's AppArmor profile, which allows user namespaces to \
            this binary only: `toolgate doctor --apparmor-profile | sudo tee \
            /etc/apparmor.d/toolgate >/dev/null && sudo apparmor_parser -r \
            /etc/apparmor.d/toolgate`"
            .to_owned(),
        Case::Other => "in a container, allow user namespaces (Docker: a seccomp profile that \
            permits unshare and clone with CLONE_NEWUSER), or run toolgate as the container's \
            root with CAP_SYS_ADMIN"
            .to_owned(),
    }
}

/// An AppArmor profile that allows user namespaces to the program at `exe`
/// and nothing else changes (the profile is otherwise unconfined), for
/// systems that restrict them (case 3 of the module docs).
pub fn apparmor_profile(exe: &Path) -> String {
    format!(
        "# toolgate's AppArmor profile: lets {exe} create the user namespaces its\n\
         # sandbox is built in, where kernel.apparmor_restrict_unprivileged_userns = 1.\n\
         # Install: sudo tee /etc/apparmor.d/toolgate < this file, then\n\
         #          sudo apparmor_parser -r /etc/apparmor.d/toolgate\n\
         abi <abi/4.0>,\n\
         include <tunables/global>\n\
         \n\
         profile toolgate {exe} flags=(unconfined) {{\n\
         \x20 userns,\n\
         \n\
         \x20 include if exists <local/toolgate>\n\
         }}\n",
        exe = exe.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_names_the_binary_and_allows_user_namespaces() {
        let profile = apparmor_profile(Path::new("/usr/local/bin/toolgate"));
        assert!(profile.contains("profile toolgate /usr/local/bin/toolgate flags=(unconfined) {"));
        assert!(profile.contains("\n  userns,\n"));
        assert!(profile.trim_end().ends_with('}'));
    }

    #[test]
    fn every_case_has_a_reason_and_a_remedy() {
        // Whatever this machine is, the words are not empty.
        assert!(!refused_because("EPERM").is_empty());
        assert!(remedy().contains('`') || remedy().contains("container"));
    }
}
