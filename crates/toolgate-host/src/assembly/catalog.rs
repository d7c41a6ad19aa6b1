//! The group catalog: [`GROUPS`], every tool group listed once, and what
//! the host derives from it.
//!
//! - the `tools:` section of `toolgate.yaml` ([`ToolsSection`]): `timeout`,
//!   then one field per group with a section, of the group's type;
//! - the keys of those sections a workspace file may set before it is
//!   trusted ([`untrusted_tool_keys`], read by [`trust`](crate::config::trust));
//! - the names no dynamic tool may take ([`reserved_names`]);
//! - the routing categories ([`routed`]: every group but those that say no);
//! - assembly ([`Host::tool_groups`]): each group built, in this order,
//!   from its section and the host's parts ([`HostParts`]), kept when it
//!   offers a tool; the registry, `tools list` and the prompt's blocks
//!   follow from it.
//!
//! Adding a group is its file (a type implementing
//! [`Group`](toolgate_core::Group)) and one line in the list below; the
//! invariant tests at the end of this file check every entry.

use std::any::{Any, TypeId};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolgate_assistant::memory::persona::PersonaDir;
use toolgate_assistant::memory::{MemoryDir, MemoryNotes};
use toolgate_core::{
    DataHome, Group, GroupContext, GroupError, HostEnv, Parts, PlanBook, ToolGroup, Workspace,
};
use toolgate_dynamic::ReservedNames;
use toolgate_skills::{Activations, Skill};
use toolgate_store::{MemoryIndex, NoteStore, ScheduleStore, SessionHistory, TaskStore};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::plan::PlanDefaults;

use crate::assembly::host::Host;
use crate::error::HostError;

/// Writes [`GROUPS`] and [`ToolsSection`] from one list: each entry is a
/// group's type, followed by `=> key: SectionType` when it has a section
/// under `tools:`.
macro_rules! catalog {
    ($( $group:path $(=> $key:ident : $section:ty)? ),* $(,)?) => {
        /// Every tool group, once, in the order their prompt blocks and
        /// routing categories come.
        pub const GROUPS: &[&dyn Group] = &[ $( &$group ),* ];

        /// `tools:` — `timeout`, then the section of each group of
        /// [`GROUPS`] that has one, under the group's section key.
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct ToolsSection {
            /// Seconds a tool may run when it sets no timeout of its own.
            /// Default: 120.
            pub timeout: u64,
            $( $(
                #[doc = concat!("`tools.", stringify!($key), "`: see the group's type in [`GROUPS`].")]
                pub $key: $section,
            )? )*
        }

        impl Default for ToolsSection {
            fn default() -> Self {
                Self {
                    timeout: 120,
                    $( $( $key: <$section>::default(), )? )*
                }
            }
        }

        impl ToolsSection {
            /// The section under `key` (`&()` for `None` or a key no group
            /// has), for a group to read.
            pub(crate) fn section(&self, key: Option<&str>) -> &dyn Any {
                match key {
                    $( $( Some(stringify!($key)) => &self.$key, )? )*
                    _ => &(),
                }
            }
        }
    };
}

catalog! {
    toolgate_tools::files::FilesGroup,
    toolgate_tools::search::SearchGroup,
    toolgate_tools::time::DateTimeGroup => datetime: toolgate_tools::time::DateTimeSection,
    toolgate_tools::convert_time::ConvertTimeGroup => convert_time: toolgate_core::OptInSection,
    toolgate_tools::diag::DiagnosticsGroup => echo: toolgate_core::ToggleSection,
    toolgate_tools::command::CommandsGroup,
    toolgate_assistant::calc::CalculatorGroup => calculator: toolgate_assistant::calc::CalculatorConfig,
    toolgate_assistant::notes::NotesGroup => notes: toolgate_assistant::notes::NotesConfig,
    toolgate_assistant::tasks::TasksGroup => tasks: toolgate_assistant::tasks::TasksConfig,
    toolgate_tools::plan::PlanGroup => plan: toolgate_tools::plan::PlanSection,
    toolgate_assistant::weather::WeatherGroup => weather: toolgate_assistant::weather::WeatherConfig,
    toolgate_web::WebGroup => web: toolgate_web::WebConfig,
    toolgate_assistant::memory::MemoryGroup => memory: toolgate_assistant::memory::MemoryConfig,
    toolgate_assistant::memory::persona::PersonaGroup => persona: toolgate_assistant::memory::persona::PersonaConfig,
    toolgate_assistant::cron::CronGroup => cron: toolgate_assistant::cron::CronConfig,
    toolgate_assistant::phone::PhoneGroup => phone: toolgate_assistant::phone::PhoneConfig,
    crate::assembly::skills::SkillsGroup,
    toolgate_dynamic::DynamicGroup => dynamic: toolgate_dynamic::DynamicConfig,
    toolgate_assistant::inspect::SelfInspectGroup => self_inspect: toolgate_core::OptInSection,
    AgentLoopGroup,
}

/// The tools of the agent loop and of the gate that are no group's
/// (`delegate`, `collaborate`, `improve`, `mcp_add_server`): the run and
/// the gate register them where they apply; here for their names, which
/// no dynamic tool may take.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentLoopGroup;

impl Group for AgentLoopGroup {
    fn name(&self) -> &'static str {
        "agents"
    }

    fn tool_names(&self) -> &'static [&'static str] {
        const NAMES: &[&str] = &[
            toolgate_agent::delegate::COLLABORATE,
            toolgate_agent::delegate::DELEGATE,
            toolgate_agent::delegate::IMPROVE,
            <toolgate_mcp::AddServerTool as toolgate_core::TypedTool>::NAME,
        ];
        NAMES
    }

    fn routed(&self) -> bool {
        false
    }

    fn build(&self, _ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        Ok(ToolGroup::new(self.name(), "", Vec::new()))
    }
}

/// The keys under `tools:` a workspace file may set before it is trusted:
/// each group's [`Group::untrusted_keys`] under its section key
/// (`tools.datetime.timezone`; `tools.calculator` for a whole section).
pub fn untrusted_tool_keys() -> Vec<String> {
    GROUPS
        .iter()
        .filter_map(|group| group.section_key().map(|key| (group, key)))
        .flat_map(|(group, key)| {
            group.untrusted_keys().iter().map(move |sub| {
                if sub.is_empty() {
                    format!("tools.{key}")
                } else {
                    format!("tools.{key}.{sub}")
                }
            })
        })
        .collect()
}

/// Every tool name of every group: no dynamic tool may take one.
pub fn reserved_names() -> ReservedNames {
    ReservedNames::new(GROUPS.iter().flat_map(|g| g.tool_names().iter().copied()))
}

/// Whether routing offers the group `name` as a category (groups the
/// catalog does not know, MCP's, are).
pub(crate) fn routed(name: &str) -> bool {
    GROUPS
        .iter()
        .find(|g| g.name() == name)
        .is_none_or(|g| g.routed())
}

/// The parts a [`Host`] shares with the groups it builds, each made when a
/// group first asks for it: the workspace, the built-in tools' options,
/// the store (as each trait a group asks for), the directories of memory,
/// persona and data, the environment, the skills found and the run's
/// activations.
pub(crate) struct HostParts<'h> {
    host: &'h Host,
    activations: Activations,
}

impl<'h> HostParts<'h> {
    pub(crate) fn new(host: &'h Host, activations: Activations) -> Self {
        Self { host, activations }
    }
}

/// A host error as a group's, kept whole so that the host can give it
/// back as it was (with its hint).
fn failed(what: &'static str) -> impl Fn(HostError) -> GroupError {
    move |error| GroupError::failed(what, error)
}

impl Parts for HostParts<'_> {
    fn part(&self, type_id: TypeId) -> Result<Option<Box<dyn Any>>, GroupError> {
        let host = self.host;
        let store = || host.store().map_err(failed("the store"));
        macro_rules! offer {
            ($( $ty:ty => $make:expr ),* $(,)?) => {
                $(
                    if type_id == TypeId::of::<$ty>() {
                        let part: $ty = $make;
                        return Ok(Some(Box::new(part)));
                    }
                )*
            };
        }
        offer! {
            Workspace => host.workspace_view().map_err(failed("the workspace"))?,
            BuiltinOptions => host.builtin_options().map_err(failed("the sandbox"))?,
            Arc<dyn NoteStore> => store()?,
            Arc<dyn TaskStore> => store()?,
            Arc<dyn ScheduleStore> => store()?,
            Arc<dyn MemoryIndex> => store()?,
            Arc<dyn SessionHistory> => store()?,
            Arc<dyn PlanBook> => Arc::new(crate::StorePlans::new(store()?)),
            PlanDefaults => {
                let tasks = &host.config().tools.tasks;
                PlanDefaults {
                    enabled: tasks.enabled && tasks.plan,
                    max_steps: tasks.max_plan_steps,
                }
            },
            MemoryDir => MemoryDir(host.memory_dir().map_err(failed("the memory directory"))?),
            MemoryNotes => MemoryNotes(if host.config().tools.notes.enabled {
                Some(store()?)
            } else {
                None
            }),
            PersonaDir => PersonaDir(host.persona_dir().map_err(failed("the persona directory"))?),
            DataHome => DataHome(host.data_home().map_err(failed("the data directory"))?),
            HostEnv => {
                let env = host.env().to_vec();
                HostEnv(Arc::new(move |name: &str| {
                    env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
                }))
            },
            Activations => self.activations.clone(),
            Vec<Skill> => host.skills().skills.clone(),
        }
        Ok(None)
    }
}

impl Host {
    /// The tool groups the configuration enables, each with its tools and
    /// its system-prompt block: every group of [`GROUPS`], in order, built
    /// from its section, kept when it offers a tool.
    pub fn tool_groups(&self) -> Result<Vec<ToolGroup>, HostError> {
        self.tool_groups_with(self.skill_activations())
    }

    /// [`tool_groups`](Self::tool_groups) with the `skill` tool recording
    /// into `activations`.
    pub(crate) fn tool_groups_with(
        &self,
        activations: Activations,
    ) -> Result<Vec<ToolGroup>, HostError> {
        self.groups_where(activations, |_| true)
    }

    /// The one group of [`GROUPS`] that declares a tool named `name`,
    /// built, when it is enabled and offers that tool; `None` otherwise
    /// (no group declares it, as for MCP and dynamic tools, or its group
    /// leaves it out).
    pub(crate) fn group_of_tool(
        &self,
        name: &str,
        activations: Activations,
    ) -> Result<Option<ToolGroup>, HostError> {
        let groups = self.groups_where(activations, |g| g.tool_names().contains(&name))?;
        Ok(groups
            .into_iter()
            .find(|g| g.tools.iter().any(|t| t.name() == name)))
    }

    /// The groups of [`GROUPS`] that `wanted` keeps, built, in order; those
    /// that offer no tool are left out.
    fn groups_where(
        &self,
        activations: Activations,
        wanted: impl Fn(&dyn Group) -> bool,
    ) -> Result<Vec<ToolGroup>, HostError> {
        let parts = HostParts::new(self, activations);
        let tools = &self.config().tools;
        let mut groups = Vec::new();
        for group in GROUPS.iter().filter(|g| wanted(**g)) {
            let ctx = GroupContext::new(tools.section(group.section_key()), &parts);
            let built = group.build(&ctx).map_err(|e| group_error(*group, e))?;
            if !built.tools.is_empty() {
                groups.push(built);
            }
        }
        Ok(groups)
    }
}

/// A group's failure as the host's: a host error a part gave, as it was;
/// anything else, as `tools.<group>`'s.
fn group_error(group: &dyn Group, error: GroupError) -> HostError {
    let reason = match error {
        GroupError::Failed { source, .. } => match source.downcast::<HostError>() {
            Ok(host) => return *host,
            Err(source) => toolgate_core::error_chain(&*source),
        },
        GroupError::Config(source) => toolgate_core::error_chain(&*source),
        other => toolgate_core::error_chain(&other),
    };
    HostError::ToolGroup {
        group: group.name(),
        reason,
    }
}
