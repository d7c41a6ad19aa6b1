//! The keeper: with a CPU limit, the process that forks the sandboxed one,
//! waits for it and exits as it did, so a CPU limit reached can be named.

use super::{Failed, check_int, close_range, errno, phase};

/// Forks; the parent becomes the keeper and never returns.
pub(super) fn keeper_fork(cpu_hard: u64) -> Result<(), Failed> {
    let mut pipe = [0 as libc::c_int; 2];
    // SAFETY: `pipe2` fills the two-element array.
    unsafe {
        check_int(phase::FORK, libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
    }
    let [alive_read, alive_write] = pipe;
    // SAFETY: `fork` in a single-threaded process (we are already the child
    // of a fork); both sides only make system calls afterwards.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Failed(phase::FORK, errno()));
    }
    if pid > 0 {
        keep(pid, alive_write, cpu_hard);
    }
    // SAFETY: plain system calls on our own descriptors.
    unsafe {
        libc::close(alive_write);
        // Die with the keeper. If it is already gone, its end of the pipe is
        // closed and `poll` sees the hang-up: give up rather than run
        // unsupervised.
        check_int(
            phase::DEATHSIG,
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0),
        )?;
        let mut poll = libc::pollfd {
            fd: alive_read,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&raw mut poll, 1, 0) != 0 {
            libc::_exit(1);
        }
        libc::close(alive_read);
    }
    Ok(())
}

/// The keeper: waits for the sandboxed process and exits as it did.
///
/// The sandboxed process is PID 1 of its namespace, and the kernel does
/// not let a signal it does not handle kill a namespace's first process:
/// at the soft CPU limit its `SIGXCPU` is ignored, and it dies of `SIGKILL`
/// at the hard limit (`cpu_hard` seconds, one above the soft one; 0 for
/// none). Killed by `SIGKILL` after more CPU time than the soft limit, it
/// ran out of it: the keeper dies of `SIGXCPU`, so the parent can name the
/// limit.
fn keep(pid: libc::pid_t, alive_write: libc::c_int, cpu_hard: u64) -> ! {
    // SAFETY: system calls only; `_exit` never returns.
    unsafe {
        // Hold nothing the parent waits on (std's exec-error pipe, our
        // report pipe) except the pipe that tells the child we are alive.
        if alive_write > 3 {
            close_range(3, (alive_write - 1).cast_unsigned(), 0);
        }
        close_range((alive_write + 1).cast_unsigned(), libc::c_uint::MAX, 0);
        let mut status: libc::c_int = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        loop {
            let r = libc::wait4(pid, &raw mut status, 0, &raw mut usage);
            if r == pid {
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                libc::_exit(1);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let mut signal = libc::WTERMSIG(status);
            let micros =
                |t: libc::timeval| t.tv_sec.saturating_mul(1_000_000).saturating_add(t.tv_usec);
            let used = micros(usage.ru_utime).saturating_add(micros(usage.ru_stime));
            // Past the soft limit (one second below the hard one): CPU
            // accounting is coarser than a second's edge.
            let soft = cpu_hard.saturating_sub(1).saturating_mul(1_000_000);
            if signal == libc::SIGKILL
                && cpu_hard > 0
                && u64::try_from(used).is_ok_and(|used| used >= soft)
            {
                signal = libc::SIGXCPU;
            }
            // Die of the same signal, so the parent sees what happened;
            // without a core dump, which would hold a copy of toolgate's
            // memory (the keeper is a fork of it).
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut set);
            libc::sigaddset(&raw mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(1)
    }
}
