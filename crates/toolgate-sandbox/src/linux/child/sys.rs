//! The system calls the steps are made of, each a thin wrapper that reports
//! `(step, errno)` on failure: `mount_setattr`, writing an ID map file,
//! opening a path as an `O_PATH` descriptor without following symlinks
//! (beneath the workspace, or absolute), and cloning a tree onto a target.
//! The order in which the child uses them is in `child.rs`.

use std::mem::size_of;

use super::{Failed, check, check_fd, check_int, errno};
use crate::linux::landlock as ll;

/// `mount_setattr(2)`.
pub(super) unsafe fn set_attr(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_int,
    set: u64,
    clear: u64,
    step: u32,
) -> Result<(), Failed> {
    let attr = ll::MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` is a valid `struct mount_attr` on the stack, its size
    // is passed, and `path` is NUL-terminated.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags.cast_unsigned(),
            &raw const attr,
            size_of::<ll::MountAttr>(),
        )
    };
    check(step, ret).map(|_| ())
}

/// Writes `text` to `path` (the ID map files).
pub(super) unsafe fn write_file(
    path: &std::ffi::CStr,
    text: &std::ffi::CStr,
    step: u32,
) -> Result<(), Failed> {
    // SAFETY: `open`/`write`/`close` on NUL-terminated paths and a buffer of
    // the length given.
    unsafe {
        let fd = check_int(
            step,
            libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC),
        )?;
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let code = errno();
        libc::close(fd);
        if written < 0 || written.unsigned_abs() != bytes.len() {
            return Err(Failed(step, if written < 0 { code } else { libc::EIO }));
        }
    }
    Ok(())
}

/// Opens `path` as an `O_PATH` descriptor: beneath the workspace without
/// following any symlink, or as an absolute path without following a final
/// symlink. `Ok(None)` when it does not exist.
pub(super) unsafe fn open_target(
    path: &std::ffi::CStr,
    beneath: bool,
    workspace: libc::c_int,
    step: u32,
) -> Result<Option<libc::c_int>, Failed> {
    let fd = if beneath {
        let how = ll::OpenHow {
            flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: libc::RESOLVE_BENEATH
                | libc::RESOLVE_NO_SYMLINKS
                | libc::RESOLVE_NO_MAGICLINKS,
        };
        // SAFETY: `how` is a valid `struct open_how` whose size is passed.
        unsafe {
            libc::syscall(
                libc::SYS_openat2,
                workspace,
                path.as_ptr(),
                &raw const how,
                size_of::<ll::OpenHow>(),
            )
        }
    } else {
        // SAFETY: `open` on a NUL-terminated path.
        libc::c_long::from(unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        })
    };
    if fd < 0 {
        let code = errno();
        if code == libc::ENOENT || code == libc::ENOTDIR {
            return Ok(None);
        }
        return Err(Failed(step, code));
    }
    check_fd(step, fd).map(Some)
}

/// Clones the tree at `from` (a descriptor) and mounts the clone onto `to`
/// (a descriptor), with `attr_set` on the clone.
pub(super) unsafe fn bind_fd(
    from: libc::c_int,
    to: libc::c_int,
    attr_set: u64,
    step: u32,
) -> Result<(), Failed> {
    // SAFETY: system calls on descriptors we own and empty C strings.
    unsafe {
        let clone = check_fd(
            step,
            libc::syscall(
                libc::SYS_open_tree,
                from,
                c"".as_ptr(),
                libc::OPEN_TREE_CLONE
                    | libc::OPEN_TREE_CLOEXEC
                    | libc::AT_EMPTY_PATH.cast_unsigned(),
            ),
        )?;
        let result = (|| {
            if attr_set != 0 {
                set_attr(clone, c"", libc::AT_EMPTY_PATH, attr_set, 0, step)?;
            }
            check(
                step,
                libc::syscall(
                    libc::SYS_move_mount,
                    clone,
                    c"".as_ptr(),
                    to,
                    c"".as_ptr(),
                    libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH,
                ),
            )
            .map(|_| ())
        })();
        libc::close(clone);
        result
    }
}
