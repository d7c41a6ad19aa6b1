//! The group catalog: every tool group described once, by one type.
//!
//! A [`Group`] says everything toolgate needs to know about a group of
//! tools: its name (the `tools list` heading and the routing category),
//! the key of its section under `tools:` in `toolgate.yaml`, the keys of
//! that section a workspace file may set before the user trusts it, the
//! names of every tool it can build (reserved: a model-written tool can
//! never take one), and how it builds its tools from a [`GroupContext`].
//! The host lists the groups once (its `GROUPS` constant) and derives the
//! rest from that list: the configuration section, the trust keys, the
//! reserved names, routing categories and assembly.
//!
//! A group reads its own section from the context
//! ([`GroupContext::section`]) and asks the host for the parts it shares
//! with others by type ([`GroupContext::part`]): the workspace, the
//! sandbox, a store as a trait object. The host makes a part when a group
//! first asks for it, so a command that builds no group that needs the
//! store never opens it.

use std::any::{Any, TypeId, type_name};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ToolGroup;

/// Why a group could not build its tools.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GroupError {
    /// The group needs a part the host does not offer.
    #[error("the group needs `{part}`, which this host does not offer")]
    MissingPart {
        /// The part's type.
        part: &'static str,
    },
    /// The host handed the group a section of another type.
    #[error("the group's section is not a `{expected}`")]
    WrongSection {
        /// The type the group reads.
        expected: &'static str,
    },
    /// The group's section cannot be used as written.
    #[error("the configuration cannot be used")]
    Config(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A part could not be made.
    #[error("{what} is not available")]
    Failed {
        /// The part, in a few words (`the store`, `the sandbox`).
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl GroupError {
    /// `what` could not be made, because of `source`.
    pub fn failed(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Failed {
            what: what.into(),
            source: source.into(),
        }
    }
}

/// The parts a host shares with the groups it builds, found by type.
///
/// An implementation answers for the types it knows (the workspace, the
/// sandbox, stores as trait objects, directories wrapped in a type of
/// their own) and `Ok(None)` for the rest.
pub trait Parts {
    /// The part of type `type_id`, boxed as that type; `Ok(None)` when this
    /// host has no such part.
    fn part(&self, type_id: TypeId) -> Result<Option<Box<dyn Any>>, GroupError>;
}

/// A host without parts: enough for groups that need nothing but their
/// section (tests, library users).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoParts;

impl Parts for NoParts {
    fn part(&self, _: TypeId) -> Result<Option<Box<dyn Any>>, GroupError> {
        Ok(None)
    }
}

/// What a group builds its tools from: its configuration section and the
/// host's [`Parts`].
#[derive(Clone, Copy)]
pub struct GroupContext<'a> {
    section: &'a dyn Any,
    parts: &'a dyn Parts,
}

impl std::fmt::Debug for GroupContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupContext").finish_non_exhaustive()
    }
}

impl<'a> GroupContext<'a> {
    /// A context handing `section` (the group's section under `tools:`,
    /// `&()` for a group without one) and `parts`.
    pub fn new(section: &'a dyn Any, parts: &'a dyn Parts) -> Self {
        Self { section, parts }
    }

    /// The group's configuration section.
    pub fn section<S: Any>(&self) -> Result<&'a S, GroupError> {
        self.section
            .downcast_ref::<S>()
            .ok_or(GroupError::WrongSection {
                expected: type_name::<S>(),
            })
    }

    /// The host's part of type `T`.
    pub fn part<T: Any>(&self) -> Result<T, GroupError> {
        let missing = GroupError::MissingPart {
            part: type_name::<T>(),
        };
        let part = self.parts.part(TypeId::of::<T>())?.ok_or(missing)?;
        part.downcast::<T>()
            .map(|part| *part)
            .map_err(|_| GroupError::MissingPart {
                part: type_name::<T>(),
            })
    }
}

/// A group of tools, described once: its name, its configuration section, the
/// keys an untrusted workspace may set, and the tools it builds.
///
/// Implementations are unit structs listed in the host's `GROUPS`; every
/// method but [`build`](Self::build) is a fact about the group, the same
/// in every configuration.
pub trait Group: Send + Sync {
    /// The group's name: its heading in `tools list` and its routing
    /// category (`files`, `calculator`).
    fn name(&self) -> &'static str;

    /// The key of its section under `tools:` (`datetime` for
    /// `tools.datetime`), or `None` when it is configured elsewhere or not
    /// at all. The host's configuration has one field per key.
    fn section_key(&self) -> Option<&'static str> {
        None
    }

    /// The keys of its section (relative to it: `enabled`,
    /// `search.max_results`; `""` for the whole section) that a workspace's
    /// `toolgate.yaml` may set before the user trusts it: harmless tools
    /// and limits. By default, none.
    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// The name of every tool the group can build, whichever the
    /// configuration offers: a model-written tool can never take one.
    fn tool_names(&self) -> &'static [&'static str];

    /// Whether intent routing offers the group as a category. By default,
    /// yes.
    fn routed(&self) -> bool {
        true
    }

    /// The group's tools and prompt block as the context's section says:
    /// no tools when the section switches the group off.
    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError>;
}

impl std::fmt::Debug for dyn Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("name", &self.name())
            .field("section_key", &self.section_key())
            .finish_non_exhaustive()
    }
}

/// A group's section that only switches it: `enabled`, on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToggleSection {
    /// Whether the tools are registered. Default: true.
    pub enabled: bool,
}

impl Default for ToggleSection {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// A group's section that only switches it: `enabled`, off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptInSection {
    /// Whether the tool is registered. Default: false.
    pub enabled: bool,
}

/// A part: the directory of this workspace's data outside the workspace
/// (where the store lives), for groups that keep files of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataHome(pub PathBuf);

/// Looks a variable up in the host's environment.
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// A part: the environment the host reads (its own, or the one a test
/// gave it), for groups that take a secret from a variable.
#[derive(Clone)]
pub struct HostEnv(pub Arc<EnvLookup>);

impl std::fmt::Debug for HostEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostEnv").finish_non_exhaustive()
    }
}
