//! The assistant tool groups of toolgate (seeds 002 and 003): the tools a
//! personal assistant offers beside the coding tools of `toolgate-tools`.
//!
//! | module | group | tools |
//! |---|---|---|
//! | [`calc`] | `calculator` | `calculator`, a safe arithmetic evaluator |
//! | [`notes`] | `notes` | `create_note`, `list_notes`, `get_note`, `update_note`, `delete_note`, `search_notes` |
//! | [`tasks`] | `tasks` | projects, their tasks and their activity log |
//! | [`weather`] | `weather` | `get_weather` on Open-Meteo |
//! | [`memory`] | `memory` | `save_memory`, `memory_search`, `memory_get` over daily logs and an index |
//! | [`memory::persona`] | `persona` | `update_soul`, `update_identity`, `manage_goals` over the persona files |
//! | [`cron`] (crate `toolgate-cron`, re-exported) | `cron` | `cron`: jobs on a schedule, and the scheduler that runs them |
//! | [`phone`] | `phone` | `phone_call` through Twilio, and its contact book |
//! | [`inspect`] | `self_inspect` | `self_inspect` (seed 003's selfcode): the configuration with secrets redacted, the tools, the health of the sandbox and MCP servers — built by the host's gate, which holds what it reads |
//!
//! Each module has the group's `INSTRUCTIONS` (its block of the system
//! prompt), its configuration section (`tools.<group>` of
//! `toolgate.yaml`), a `tools` function that builds the group's tools from
//! that section and the stores it needs, and the group's type for the
//! host's catalog ([`calc::CalculatorGroup`], [`notes::NotesGroup`],
//! [`tasks::TasksGroup`], [`weather::WeatherGroup`],
//! [`memory::MemoryGroup`], [`memory::persona::PersonaGroup`],
//! [`cron::CronGroup`], [`phone::PhoneGroup`]: see
//! [`Group`](toolgate_core::Group)). Groups that keep state use toolgate's own store
//! (`toolgate-store`), never the user's workspace, unless the
//! configuration says otherwise.
//!
//! # Example
//!
//! ```
//! use toolgate_assistant::calc::{self, CalculatorConfig};
//! use toolgate_core::Registry;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::new();
//! for tool in calc::tools(&CalculatorConfig::default()) {
//!     registry.register_arc(tool)?;
//! }
//! assert!(registry.has("calculator"));
//! # Ok(())
//! # }
//! ```

pub mod calc;
pub mod inspect;
/// The `cron` group and its scheduler: the `toolgate-cron` crate.
pub use toolgate_cron as cron;
pub mod memory;
pub mod notes;
pub mod phone;
pub mod tasks;
pub mod weather;
