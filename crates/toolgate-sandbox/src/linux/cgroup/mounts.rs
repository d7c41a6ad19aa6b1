//! Where the cgroup hierarchies are: the mounts of `/proc/self/mountinfo`
//! and the membership of `/proc/self/cgroup`, read into the directory of
//! toolgate's own cgroup for a controller.

use std::path::PathBuf;

use super::{Place, Version};

/// A cgroup mount: (what it holds: `cgroup2` or v1 controllers, its root
/// in the hierarchy, where it is mounted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mount {
    version: Version,
    controllers: Vec<String>,
    root: String,
    pub(super) point: PathBuf,
}

/// The cgroup mounts of `/proc/self/mountinfo`.
pub(super) fn parse_mounts(text: &str) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in text.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = before.split(' ').collect();
        let rest: Vec<&str> = after.split(' ').collect();
        let (Some(root), Some(point), Some(fstype), Some(options)) =
            (fields.get(3), fields.get(4), rest.first(), rest.get(2))
        else {
            continue;
        };
        let version = match *fstype {
            "cgroup" => Version::V1,
            "cgroup2" => Version::V2,
            _ => continue,
        };
        mounts.push(Mount {
            version,
            controllers: options.split(',').map(str::to_owned).collect(),
            root: unescape(root),
            point: PathBuf::from(unescape(point)),
        });
    }
    mounts
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = bytes
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `/proc/self/cgroup`: (controllers, path) per hierarchy; v2's has no
/// controllers.
pub(super) fn parse_membership(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            Some((
                controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect(),
                path.to_owned(),
            ))
        })
        .collect()
}

/// Where `path` (a cgroup path) is under `mount`.
fn dir_of(mount: &Mount, path: &str) -> Option<PathBuf> {
    let rest = if mount.root == "/" {
        path
    } else {
        path.strip_prefix(mount.root.as_str())
            .filter(|r| r.is_empty() || r.starts_with('/'))?
    };
    Some(mount.point.join(rest.trim_start_matches('/')))
}

/// The directory of toolgate's own cgroup for `controller`: its v1
/// hierarchy, else the v2 hierarchy when `controllers` (the v2 cgroup's
/// `cgroup.controllers`, read by the caller) lists it.
pub(super) fn locate(
    mounts: &[Mount],
    membership: &[(Vec<String>, String)],
    controller: &str,
) -> Place {
    if let Some(mount) = mounts
        .iter()
        .find(|m| m.version == Version::V1 && m.controllers.iter().any(|c| c == controller))
    {
        let path = membership
            .iter()
            .find(|(cs, _)| cs.iter().any(|c| c == controller))
            .map(|(_, p)| p.as_str())
            .ok_or_else(|| format!("toolgate is in no {controller} cgroup"))?;
        let dir = dir_of(mount, path).ok_or_else(|| {
            format!(
                "toolgate's {controller} cgroup {path} is outside what is mounted at {}",
                mount.point.display()
            )
        })?;
        return Ok((Version::V1, dir));
    }
    let Some(mount) = mounts.iter().find(|m| m.version == Version::V2) else {
        return Err(format!(
            "no cgroup hierarchy has the {controller} controller"
        ));
    };
    let path = membership
        .iter()
        .find(|(cs, _)| cs.is_empty())
        .map(|(_, p)| p.as_str())
        .ok_or_else(|| "toolgate is in no cgroup v2 cgroup".to_owned())?;
    let dir = dir_of(mount, path).ok_or_else(|| {
        format!(
            "toolgate's cgroup {path} is outside what is mounted at {}",
            mount.point.display()
        )
    })?;
    Ok((Version::V2, dir))
}
