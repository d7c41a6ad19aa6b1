//! The Linux implementation: the plan (parent side), the child that replays
//! it, and the kernel ABI they share; the cgroups and resource limits that
//! bound a command tree.

pub(crate) mod bounds;
pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod landlock;
pub(crate) mod netns;
pub(crate) mod plan;
