//! The assistant tool groups of seeds 002 and 003, as the configuration
//! enables them, and the directories they keep their files in.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_assistant::{calc, cron, memory, notes, phone, tasks, weather};
use toolgate_core::ToolGroup;
use toolgate_store::{ScheduleStore, SessionHistory};
use toolgate_tools::plan;
use toolgate_web as web;

use crate::error::HostError;
use crate::host::Host;

impl Host {
    /// The assistant groups `tools.<group>.enabled` turns on (the
    /// calculator is on by default, the others off): calculator, notes,
    /// tasks, weather, web, memory, persona, cron, phone.
    pub(crate) fn assistant_groups(&self) -> Result<Vec<ToolGroup>, HostError> {
        let tools = &self.config().tools;
        let mut groups = vec![ToolGroup::new(
            "calculator",
            calc::INSTRUCTIONS,
            calc::tools(&tools.calculator),
        )];
        if tools.notes.enabled {
            groups.push(ToolGroup::new(
                "notes",
                notes::INSTRUCTIONS,
                notes::tools(&tools.notes, self.store()?),
            ));
        }
        if tools.tasks.enabled {
            let store = self.store()?;
            let mut found = tasks::tools(&tools.tasks, Arc::clone(&store));
            let mut instructions = std::borrow::Cow::Borrowed(tasks::INSTRUCTIONS);
            if tools.tasks.plan {
                let plans = Arc::new(crate::StorePlans::new(store));
                found.push(Arc::new(
                    plan::UpdatePlan::new(Some(plans)).max_steps(tools.tasks.max_plan_steps),
                ));
                instructions = format!("{}\n{}", tasks::INSTRUCTIONS, plan::INSTRUCTIONS).into();
            }
            groups.push(ToolGroup::new("tasks", instructions, found));
        }
        if tools.weather.enabled {
            let found = weather::tools(&tools.weather).map_err(|e| HostError::ToolGroup {
                group: "weather",
                reason: toolgate_core::error_chain(&e),
            })?;
            groups.push(ToolGroup::new("weather", weather::INSTRUCTIONS, found));
        }
        if tools.web.enabled {
            let found = web::tools(&tools.web).map_err(|e| HostError::ToolGroup {
                group: "web",
                reason: toolgate_core::error_chain(&e),
            })?;
            groups.push(ToolGroup::new("web", web::INSTRUCTIONS, found));
        }
        if tools.memory.enabled {
            let store = self.store()?;
            let sessions = tools
                .memory
                .search_sessions
                .then(|| Arc::clone(&store) as Arc<dyn SessionHistory>);
            groups.push(ToolGroup::new(
                "memory",
                memory::INSTRUCTIONS,
                memory::tools_with_notes(
                    &tools.memory,
                    self.memory_dir()?,
                    Arc::clone(&store) as Arc<dyn toolgate_store::MemoryIndex>,
                    sessions,
                    tools
                        .notes
                        .enabled
                        .then_some(store as Arc<dyn toolgate_store::NoteStore>),
                ),
            ));
        }
        if tools.persona.enabled {
            groups.push(ToolGroup::new(
                "persona",
                memory::persona::INSTRUCTIONS,
                memory::persona::tools(&tools.persona, self.persona_dir()?),
            ));
        }
        if tools.cron.enabled {
            tools.cron.validate().map_err(|e| HostError::ToolGroup {
                group: "cron",
                reason: toolgate_core::error_chain(&e),
            })?;
            let store: Arc<dyn ScheduleStore> = self.store()?;
            groups.push(ToolGroup::new(
                "cron",
                cron::INSTRUCTIONS,
                cron::tools(&tools.cron, store),
            ));
        }
        if tools.phone.enabled {
            let token = tools
                .phone
                .auth_token_from(|name| self.env_var(name).map(str::to_owned));
            groups.push(ToolGroup::new(
                "phone",
                phone::INSTRUCTIONS,
                phone::tools(&tools.phone, &self.data_home()?, token),
            ));
        }
        Ok(groups)
    }

    /// The directory of this workspace's data outside the workspace: the
    /// store's directory (`DATA_DIR/workspaces/NAME-HASH/`, or the
    /// directory of `store.path`). Persona files and the phone's contact
    /// book live here.
    pub fn data_home(&self) -> Result<PathBuf, HostError> {
        let store = self.store_path()?;
        Ok(store
            .parent()
            .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf))
    }

    /// Where `save_memory` writes its daily logs: `tools.memory.dir`
    /// (relative to the workspace), else `memory/` in [`data_home`](Self::data_home).
    pub fn memory_dir(&self) -> Result<PathBuf, HostError> {
        match &self.config().tools.memory.dir {
            Some(dir) => Ok(self.workspace().join(dir)),
            None => Ok(self.data_home()?.join("memory")),
        }
    }

    /// Where the persona files (`SOUL.md`, `IDENTITY.md`, `GOALS.md`) live:
    /// [`data_home`](Self::data_home), the parent of the default memory
    /// directory, so that `memory_search` does not index them.
    pub fn persona_dir(&self) -> Result<PathBuf, HostError> {
        self.data_home()
    }
}
