//! Which files a read-only process may `execve`: the programs its command
//! line names, resolved the way the shell will resolve them, and what the
//! kernel loads to run them.
//!
//! # Rules
//!
//! 1. A name with a `/` is taken relative to the working directory; a bare
//!    name is looked up in `PATH`, first executable match wins, as the shell
//!    does. A name that resolves to nothing is left out (running it fails).
//! 2. Symlinks are resolved: Landlock checks the file finally executed.
//! 3. For each file, what the kernel opens to execute it is added too: the
//!    interpreter of a `#!` script (and, for `#!/usr/bin/env NAME`, `NAME`
//!    resolved in `PATH`), and the dynamic loader of an ELF file
//!    (`PT_INTERP`). Landlock checks `EXECUTE` on those as well. Shared
//!    libraries are mapped, not executed, and need no rule.
//! 4. Everything added is resolved by the same rules, to a fixed depth.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

const MAX_DEPTH: usize = 4;

/// The files `programs` may need to `execve`, with `path_var` as `PATH` and
/// `cwd` as the working directory.
pub(crate) fn executables(programs: &[String], path_var: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut queue: Vec<(PathBuf, usize)> = programs
        .iter()
        .filter_map(|p| find(p, path_var, cwd))
        .map(|p| (p, 0))
        .collect();
    while let Some((file, depth)) = queue.pop() {
        let Ok(real) = fs::canonicalize(&file) else {
            continue;
        };
        if out.contains(&real) {
            continue;
        }
        if depth < MAX_DEPTH {
            for next in loaded_by(&real, path_var, cwd) {
                queue.push((next, depth + 1));
            }
        }
        out.push(real);
    }
    out.sort();
    out
}

/// Resolves one program name as the shell would.
pub(crate) fn find(program: &str, path_var: &str, cwd: &Path) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let path = cwd.join(program);
        return is_executable(&path).then_some(path);
    }
    path_var
        .split(':')
        .map(|dir| {
            if dir.is_empty() {
                cwd.to_path_buf()
            } else {
                cwd.join(dir)
            }
        })
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What the kernel opens to execute `file`: a script's interpreter, an ELF
/// file's loader.
fn loaded_by(file: &Path, path_var: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut head = [0u8; 4096];
    let Ok(mut f) = fs::File::open(file) else {
        return Vec::new();
    };
    let n = f.read(&mut head).unwrap_or(0);
    let head = head.get(..n).unwrap_or_default();
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let Some(interpreter) = words.next() else {
            return Vec::new();
        };
        let mut out = vec![PathBuf::from(interpreter)];
        if Path::new(interpreter)
            .file_name()
            .is_some_and(|n| n == "env")
        {
            // `#!/usr/bin/env [-S] NAME`: NAME, looked up in PATH.
            if let Some(name) = words.find(|w| !w.starts_with('-'))
                && let Some(found) = find(name, path_var, cwd)
            {
                out.push(found);
            }
        }
        return out;
    }
    elf_interpreter(head, file).into_iter().collect()
}

/// The `PT_INTERP` of an ELF file, read from its program headers.
fn elf_interpreter(head: &[u8], file: &Path) -> Option<PathBuf> {
    const PT_INTERP: u32 = 3;
    if head.get(..4)? != b"\x7fELF" {
        return None;
    }
    let class64 = *head.get(4)? == 2;
    if *head.get(5)? != 1 {
        return None; // big-endian: not on the machines we run on
    }
    let u16_at = |at: usize| -> Option<u64> {
        Some(u64::from(u16::from_le_bytes(
            head.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let u32_at = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            head.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(head.get(at..at + 8)?.try_into().ok()?))
    };
    let (phoff, phentsize, phnum) = if class64 {
        (u64_at(0x20)?, u16_at(0x36)?, u16_at(0x38)?)
    } else {
        (u32_at(0x1c)?, u16_at(0x2a)?, u16_at(0x2c)?)
    };
    for i in 0..phnum {
        let at = usize::try_from(phoff + i * phentsize).ok()?;
        if u32_at(at)? != u64::from(PT_INTERP) {
            continue;
        }
        let (offset, size) = if class64 {
            (u64_at(at + 8)?, u64_at(at + 32)?)
        } else {
            (u32_at(at + 4)?, u32_at(at + 16)?)
        };
        let mut buf = vec![0u8; usize::try_from(size.min(4096)).ok()?];
        let mut f = fs::File::open(file).ok()?;
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut buf).ok()?;
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        let text = std::str::from_utf8(buf.get(..end)?).ok()?;
        return Some(PathBuf::from(text));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn resolves_programs_scripts_and_loaders() {
        let path = std::env::var("PATH").unwrap_or_default();
        let cwd = Path::new("/");
        let ls = fs::canonicalize(find("ls", &path, cwd).unwrap()).unwrap();
        let found = executables(&["ls".to_owned()], &path, cwd);
        assert!(found.contains(&ls), "{found:?}");
        // A dynamically linked `ls` brings its loader.
        let bytes = fs::read(&ls).unwrap();
        let loader = elf_interpreter(&bytes[..4096.min(bytes.len())], &ls);
        if let Some(loader) = loader {
            assert!(
                found.contains(&fs::canonicalize(loader).unwrap()),
                "{found:?}"
            );
        }

        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("tool");
        fs::write(&script, "#!/usr/bin/env sh\necho hi\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        let found = executables(&["./tool".to_owned()], &path, dir.path());
        let sh = fs::canonicalize(find("sh", &path, cwd).unwrap()).unwrap();
        let env = fs::canonicalize("/usr/bin/env").unwrap();
        for want in [fs::canonicalize(&script).unwrap(), sh, env] {
            assert!(found.contains(&want), "{want:?} in {found:?}");
        }
        assert!(executables(&["no-such-program-xyz".to_owned()], &path, cwd).is_empty());
    }
}
