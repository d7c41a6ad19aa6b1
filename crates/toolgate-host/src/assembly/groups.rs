//! The directories the assistant groups keep their files in.

use std::path::PathBuf;

use crate::assembly::host::Host;
use crate::error::HostError;

impl Host {
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
