//! The kernel ABI the child speaks: Landlock's and the new mount API's
//! structures and constants, and the rights each profile grants.
//!
//! Landlock (<https://docs.kernel.org/userspace-api/landlock.html>) is an
//! allow-list: every right the ruleset *handles* is denied except beneath the
//! paths a rule names. Rights the running kernel does not know (an older ABI)
//! are left out of the handled set, so they stay unrestricted; the status
//! says which ABI is in force.

use std::ffi::CString;

// Filesystem rights (`LANDLOCK_ACCESS_FS_*`).
pub(crate) const EXECUTE: u64 = 1 << 0;
pub(crate) const WRITE_FILE: u64 = 1 << 1;
pub(crate) const READ_FILE: u64 = 1 << 2;
pub(crate) const READ_DIR: u64 = 1 << 3;
const REFER: u64 = 1 << 13; // ABI 2
pub(crate) const TRUNCATE: u64 = 1 << 14; // ABI 3
pub(crate) const IOCTL_DEV: u64 = 1 << 15; // ABI 5

/// The rights that make sense on a file (the others are about directories).
pub(crate) const FILE_ACCESS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;

/// Network rights (`LANDLOCK_ACCESS_NET_*`, ABI 4): TCP bind and connect.
const NET_TCP: u64 = 0b11;
/// Scopes (`LANDLOCK_SCOPE_*`, ABI 6): abstract Unix sockets and signals.
const SCOPES: u64 = 0b11;

pub(crate) const RULE_PATH_BENEATH: libc::c_int = 1;

pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;

pub(crate) const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// `struct landlock_ruleset_attr` (ABI 6 layout; older kernels accept it
/// when the fields they do not know are zero).
#[repr(C)]
pub(crate) struct RulesetAttr {
    pub(crate) handled_access_fs: u64,
    pub(crate) handled_access_net: u64,
    pub(crate) scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's headers).
#[repr(C, packed)]
pub(crate) struct PathBeneath {
    pub(crate) allowed_access: u64,
    pub(crate) parent_fd: i32,
}

/// `struct mount_attr`.
#[repr(C)]
pub(crate) struct MountAttr {
    pub(crate) attr_set: u64,
    pub(crate) attr_clr: u64,
    pub(crate) propagation: u64,
    pub(crate) userns_fd: u64,
}

/// `struct open_how`.
#[repr(C)]
pub(crate) struct OpenHow {
    pub(crate) flags: u64,
    pub(crate) mode: u64,
    pub(crate) resolve: u64,
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
pub(crate) struct CapHeader {
    pub(crate) version: u32,
    pub(crate) pid: i32,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// One Landlock rule: `access` beneath `path` (a directory, or one file).
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) path: CString,
    pub(crate) access: u64,
}

/// A ruleset, prepared in the parent and applied by the child.
#[derive(Debug)]
pub(crate) struct LandlockPlan {
    pub(crate) handled_fs: u64,
    pub(crate) handled_net: u64,
    pub(crate) scoped: u64,
    pub(crate) attr_size: usize,
    pub(crate) rules: Vec<Rule>,
}

/// Every filesystem right the ABI knows.
pub(crate) fn fs_rights(abi: i32) -> u64 {
    let mut rights = (1 << 13) - 1; // ABI 1: EXECUTE … MAKE_SYM
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    if abi >= 5 {
        rights |= IOCTL_DEV;
    }
    rights
}

impl LandlockPlan {
    /// An empty ruleset for `abi`: every filesystem right handled, TCP
    /// handled when `deny_tcp` (ABI 4), both scopes (ABI 6).
    pub(crate) fn new(abi: i32, deny_tcp: bool) -> Self {
        let handled_net = if deny_tcp && abi >= 4 { NET_TCP } else { 0 };
        let scoped = if abi >= 6 { SCOPES } else { 0 };
        let attr_size = if abi >= 6 {
            24
        } else if abi >= 4 {
            16
        } else {
            8
        };
        Self {
            handled_fs: fs_rights(abi),
            handled_net,
            scoped,
            attr_size,
            rules: Vec::new(),
        }
    }

    /// Allows `access` beneath `path`.
    pub(crate) fn allow(&mut self, path: CString, access: u64) {
        self.rules.push(Rule { path, access });
    }
}

/// The kernel's Landlock ABI version; 0 or less when there is none.
#[expect(
    unsafe_code,
    reason = "the Landlock version query is a raw system call"
)]
pub(crate) fn abi_version() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: `landlock_create_ruleset(NULL, 0, VERSION)` reads no memory and
    // creates no descriptor; it returns the ABI version or -1.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(-1)
}
