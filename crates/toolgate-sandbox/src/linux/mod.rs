//! The Linux implementation: the plan (parent side), the child that replays
//! it, and the kernel ABI they share.

pub(crate) mod child;
pub(crate) mod landlock;
pub(crate) mod netns;
pub(crate) mod plan;
