//! The sandbox's network namespace for a domain policy: made once, by a
//! short-lived helper process, holding nothing but a loopback interface and
//! the proxy's two listening sockets.
//!
//! # How it is made
//!
//! A process may only create a user namespace while it has one thread, and
//! toolgate runs tokio; so the parent forks a helper, which (async-signal-
//! safe system calls only, as in [`super::child`]):
//!
//! 1. `unshare(CLONE_NEWUSER | CLONE_NEWNET)`, then writes `deny` to
//!    `setgroups` and maps its own user and group ID, which gives it every
//!    capability inside the new user namespace — and through it over the
//!    new network namespace, which that user namespace owns;
//! 2. brings `lo` up (`ioctl(SIOCSIFFLAGS)`): a new network namespace has
//!    a loopback interface, down, and nothing else;
//! 3. creates two TCP sockets listening on `127.0.0.1:0` (the kernel picks
//!    the ports): the HTTP proxy and the SOCKS5 proxy;
//! 4. sends both listening sockets and descriptors of its
//!    `/proc/self/ns/user` and `/proc/self/ns/net` to the parent over a
//!    socketpair (`SCM_RIGHTS`, `unix(7)`), and exits.
//!
//! The namespaces outlive the helper because descriptors refer to them: the
//! two namespace files and the listening sockets, which stay in the
//! namespace they were created in wherever their descriptor travels
//! (`socket(7)`, `network_namespaces(7)`). The parent serves the listeners
//! with tokio in its own (host) network namespace: it *accepts* connections
//! made inside the sandbox's namespace, and *connects* out from the host's.
//!
//! # How a process joins it
//!
//! In `pre_exec`, before anything else of the plan, the child calls
//! `setns(user, CLONE_NEWUSER)` and then `setns(net, CLONE_NEWNET)`, and only
//! then `unshare`s its own user, mount, PID and IPC namespaces (no network
//! namespace: it keeps the one it joined).
//!
//! Joining the network namespace alone would be enough as root, but not for
//! anyone else: the kernel's `netns_install` asks for `CAP_SYS_ADMIN` both in
//! the user namespace that owns the target *and in the caller's own*, and an
//! unprivileged process has no capability in the initial user namespace
//! (verified: `nsenter --net` fails with `EPERM` for an ordinary user, while
//! `--user --net` succeeds). Joining the helper's user namespace first
//! satisfies both checks: its creator's user ID owns it, and a process with
//! that effective user ID in the parent namespace has every capability in it
//! (`user_namespaces(7)`, "the owner of a user namespace"); `setns` into a
//! user namespace grants the full set there.
//!
//! # Why this is safe
//!
//! - The namespace has no route anywhere: `lo` is its only interface. A
//!   command's own `connect` to any address but `127.0.0.1` fails with
//!   `ENETUNREACH`; UDP (DNS included) reaches nothing. The proxy is the
//!   only way out, and it judges every connection.
//! - The user namespace joined on the way is the helper's: it maps exactly
//!   our own user and group ID, as the sandbox's own namespace does, and
//!   `setgroups` is denied there. It owns nothing but the network namespace
//!   (and the mount, PID and IPC namespaces the child then creates beneath
//!   it). Its capabilities last only until the child unshares its own user
//!   namespace a line later, and the plan drops every capability before
//!   `exec` as it always does; a capability in a child user namespace
//!   grants nothing over its parent's resources, so the command cannot
//!   reconfigure the network namespace (add a route, an interface, a TUN
//!   device), even with the capabilities of its own user namespace.
//! - Nothing of the host's network is visible: no interfaces, no host
//!   loopback services, no abstract Unix sockets (they belong to a network
//!   namespace), no `/proc/net` of the host.
//! - Processes of the same sandbox share the namespace (their loopback,
//!   the proxy): as they share the workspace, and as they shared the host's
//!   loopback with the network on.
#![expect(
    unsafe_code,
    reason = "the helper runs raw system calls between fork and _exit, and the descriptors come over SCM_RIGHTS"
)]

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{FromRawFd as _, OwnedFd};

use crate::SandboxError;

/// What the helper made.
#[derive(Debug)]
pub(crate) struct NetNs {
    /// `/proc/self/ns/user` of the helper.
    pub(crate) user: OwnedFd,
    /// `/proc/self/ns/net` of the helper.
    pub(crate) net: OwnedFd,
    /// Listening on `127.0.0.1` inside the namespace: the HTTP proxy.
    pub(crate) http: std::net::TcpListener,
    /// Listening on `127.0.0.1` inside the namespace: the SOCKS5 proxy.
    pub(crate) socks: std::net::TcpListener,
}

/// Steps of the helper, as reported back.
mod step {
    pub(super) const UNSHARE: u32 = 1;
    pub(super) const ID_MAP: u32 = 2;
    pub(super) const LOOPBACK: u32 = 3;
    pub(super) const LISTEN: u32 = 4;
    pub(super) const NS_FILES: u32 = 5;
    pub(super) const SEND: u32 = 6;
}

fn describe(step: u32) -> &'static str {
    match step {
        step::UNSHARE => "creating the network namespace (unshare)",
        step::ID_MAP => "mapping the user and group IDs of the network namespace",
        step::LOOPBACK => "bringing the loopback interface up",
        step::LISTEN => "creating the proxy's listening sockets",
        step::NS_FILES => "opening the namespace files",
        step::SEND => "handing the namespace over",
        _ => "making the network namespace",
    }
}

/// How many descriptors the helper sends: http, socks, user, net.
const FDS: usize = 4;

/// A control-message buffer aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuf([u8; 64]);

/// Makes the namespace (see the module docs).
/// With `new_user` false (user namespaces refused here, toolgate holding
/// `CAP_SYS_ADMIN` in its own), the helper makes only the network
/// namespace, and processes join it without a user namespace first.
pub(crate) fn create(uid: u32, gid: u32, new_user: bool) -> Result<NetNs, SandboxError> {
    let setup = |step: u32, source: io::Error| SandboxError::Setup {
        step: describe(step).to_owned(),
        source,
    };
    let uid_map = CString::new(format!("{uid} {uid} 1"))
        .map_err(|e| setup(step::ID_MAP, io::Error::other(e)))?;
    let gid_map = CString::new(format!("{gid} {gid} 1"))
        .map_err(|e| setup(step::ID_MAP, io::Error::other(e)))?;
    let mut pair = [0 as libc::c_int; 2];
    // SAFETY: `socketpair` fills the two-element array.
    let ret = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    };
    if ret < 0 {
        return Err(setup(step::SEND, io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    let theirs_raw = std::os::fd::AsRawFd::as_raw_fd(&theirs);
    // SAFETY: the child only makes async-signal-safe system calls over data
    // prepared before the fork, and ends with `_exit` (see `helper`).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(setup(step::UNSHARE, io::Error::last_os_error()));
    }
    if pid == 0 {
        helper(theirs_raw, &uid_map, &gid_map, new_user);
    }
    drop(theirs);
    let received = receive(&ours);
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe {
        while libc::waitpid(pid, &raw mut status, 0) < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
    let (fds, step, code) = received.map_err(|e| setup(step::SEND, e))?;
    if step != 0 {
        return Err(setup(step, io::Error::from_raw_os_error(code)));
    }
    let [http, socks, user, net] = fds.ok_or_else(|| {
        setup(
            step::SEND,
            io::Error::other("the helper sent no descriptors"),
        )
    })?;
    let http = std::net::TcpListener::from(http);
    let socks = std::net::TcpListener::from(socks);
    for listener in [&http, &socks] {
        listener
            .set_nonblocking(true)
            .map_err(|e| setup(step::LISTEN, e))?;
    }
    Ok(NetNs {
        user,
        net,
        http,
        socks,
    })
}

/// Receives the helper's report: the descriptors (when it succeeded), and
/// `(step, errno)` (step 0: success).
fn receive(sock: &OwnedFd) -> io::Result<(Option<[OwnedFd; FDS]>, u32, i32)> {
    let mut payload = [0u8; 8];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut control = ControlBuf([0; 64]);
    // SAFETY: a zeroed `msghdr` is valid; its pointers are set below to
    // buffers that outlive the call.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control.0.len();
    let fd = std::os::fd::AsRawFd::as_raw_fd(sock);
    let n = loop {
        // SAFETY: `msg` describes valid buffers.
        let n = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        break n;
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // Take ownership of every descriptor that arrived, whatever else is
    // wrong, so none leaks.
    let mut fds: Vec<OwnedFd> = Vec::new();
    // SAFETY: the CMSG_* helpers walk the control buffer the kernel filled,
    // bounded by `msg_controllen`; each SCM_RIGHTS payload is an array of
    // descriptors now owned by this process.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let len = (*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize;
                let count = len / size_of::<libc::c_int>();
                for i in 0..count {
                    let raw = std::ptr::read_unaligned(
                        data.add(i * size_of::<libc::c_int>()).cast::<libc::c_int>(),
                    );
                    fds.push(OwnedFd::from_raw_fd(raw));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&raw const msg, cmsg);
        }
    }
    if n == 0 {
        return Err(io::Error::other("the helper exited without a report"));
    }
    let step = u32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]);
    let code = i32::from_ne_bytes([payload[4], payload[5], payload[6], payload[7]]);
    let fds: Option<[OwnedFd; FDS]> = fds.try_into().ok();
    Ok((fds, step, code))
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The helper: never returns.
fn helper(sock: libc::c_int, uid_map: &CString, gid_map: &CString, new_user: bool) -> ! {
    let (fds, step, code) = match make(uid_map, gid_map, new_user) {
        Ok(fds) => (Some(fds), 0, 0),
        Err((step, code)) => (None, step, code),
    };
    let mut payload = [0u8; 8];
    payload[..4].copy_from_slice(&step.to_ne_bytes());
    payload[4..].copy_from_slice(&code.to_ne_bytes());
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut control = ControlBuf([0; 64]);
    // SAFETY: stack buffers only; `sendmsg` and `_exit` are
    // async-signal-safe.
    unsafe {
        let mut msg: libc::msghdr = zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        if let Some(fds) = fds {
            let bytes = libc::c_uint::try_from(size_of::<[libc::c_int; FDS]>()).unwrap_or(0);
            msg.msg_control = control.0.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                bytes as usize,
            );
        }
        let sent = libc::sendmsg(sock, &raw const msg, 0);
        libc::_exit(i32::from(sent < 0 || step != 0));
    }
}

/// Steps 1–3 of the module docs; the descriptors to send, or `(step,
/// errno)`.
fn make(
    uid_map: &CString,
    gid_map: &CString,
    new_user: bool,
) -> Result<[libc::c_int; FDS], (u32, i32)> {
    let check = |step: u32, ret: libc::c_int| {
        if ret < 0 {
            Err((step, errno()))
        } else {
            Ok(ret)
        }
    };
    // SAFETY: system calls on C strings and stack structures; nothing
    // allocates (we are the child of a fork in a multi-threaded process).
    unsafe {
        let flags = if new_user {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET
        } else {
            libc::CLONE_NEWNET
        };
        check(step::UNSHARE, libc::unshare(flags))?;
        if new_user {
            write_file(c"/proc/self/setgroups", c"deny").map_err(|e| (step::ID_MAP, e))?;
            write_file(c"/proc/self/uid_map", uid_map).map_err(|e| (step::ID_MAP, e))?;
            write_file(c"/proc/self/gid_map", gid_map).map_err(|e| (step::ID_MAP, e))?;
        }

        let sock = check(
            step::LOOPBACK,
            libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0),
        )?;
        let mut ifr: libc::ifreq = zeroed();
        for (dst, src) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = src.cast_signed();
        }
        check(
            step::LOOPBACK,
            libc::ioctl(sock, libc::SIOCGIFFLAGS, &raw mut ifr),
        )?;
        ifr.ifr_ifru.ifru_flags |=
            libc::c_short::try_from(libc::IFF_UP | libc::IFF_RUNNING).unwrap_or(1);
        check(
            step::LOOPBACK,
            libc::ioctl(sock, libc::SIOCSIFFLAGS, &raw mut ifr),
        )?;
        libc::close(sock);

        let http = listen()?;
        let socks = listen()?;
        let user = check(
            step::NS_FILES,
            libc::open(
                c"/proc/self/ns/user".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            ),
        )?;
        let net = check(
            step::NS_FILES,
            libc::open(
                c"/proc/self/ns/net".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            ),
        )?;
        Ok([http, socks, user, net])
    }
}

/// A TCP socket listening on `127.0.0.1` at a port the kernel picks.
unsafe fn listen() -> Result<libc::c_int, (u32, i32)> {
    // SAFETY: system calls on a stack `sockaddr_in` whose size is passed.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err((step::LISTEN, errno()));
        }
        let mut addr: libc::sockaddr_in = zeroed();
        addr.sin_family = libc::sa_family_t::try_from(libc::AF_INET).unwrap_or(2);
        addr.sin_port = 0;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        if libc::bind(
            fd,
            (&raw const addr).cast(),
            libc::socklen_t::try_from(size_of::<libc::sockaddr_in>()).unwrap_or(0),
        ) < 0
            || libc::listen(fd, 128) < 0
        {
            return Err((step::LISTEN, errno()));
        }
        Ok(fd)
    }
}

/// Writes `text` to `path` (the ID map files).
unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> Result<(), i32> {
    // SAFETY: `open`/`write`/`close` on NUL-terminated strings and a buffer
    // of the length given.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(errno());
        }
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let code = errno();
        libc::close(fd);
        if written < 0 {
            return Err(code);
        }
        if written.unsigned_abs() != bytes.len() {
            return Err(libc::EIO);
        }
    }
    Ok(())
}
