//! The tool registry.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde_json::Value;

use crate::schema::{ArgsProblems, ArgsValidator, SchemaFormat, ToolSpec};
use crate::{Error, Tool, check_tool_name};

/// A tool as registered: the tool, its spec and its argument schema,
/// compiled on the first call's check (a command that only lists tools, or
/// calls one, compiles none or one).
pub struct RegisteredTool {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
    validator: OnceLock<Result<ArgsValidator, String>>,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// The tool itself.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Name, description, schema and annotations, computed at registration.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Checks arguments against the tool's schema.
    ///
    /// The schema is compiled on the first check; a schema that does not
    /// compile refuses every call, saying why.
    pub fn validate(&self, args: &Value) -> Result<(), ArgsProblems> {
        match self
            .validator
            .get_or_init(|| ArgsValidator::new(&self.spec.parameters))
        {
            Ok(validator) => validator.validate(args),
            Err(reason) => Err(ArgsProblems(vec![format!(
                "the tool `{}` cannot be called: {reason}; its argument schema must be fixed",
                self.spec.name
            )])),
        }
    }
}

/// The set of tools available to a run, by name.
///
/// Every method takes `&self`: tools can be added while calls are in flight
/// (an MCP server connected at run time, say). Each tool's schema is compiled
/// once, on its first call.
#[derive(Debug, Default)]
pub struct Registry {
    tools: RwLock<BTreeMap<String, Arc<RegisteredTool>>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. Fails if the name breaks the name rules, the schema is not
    /// an object schema, or a tool of that name exists.
    pub fn register(&self, tool: impl Tool) -> Result<(), Error> {
        self.insert(Arc::new(tool), false)
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register_or_replace(&self, tool: Arc<dyn Tool>) -> Result<(), Error> {
        self.insert(tool, true)
    }

    /// Adds an already shared tool; fails on a duplicate name.
    pub fn register_arc(&self, tool: Arc<dyn Tool>) -> Result<(), Error> {
        self.insert(tool, false)
    }

    fn insert(&self, tool: Arc<dyn Tool>, replace: bool) -> Result<(), Error> {
        let name = tool.name().to_owned();
        check_tool_name(&name).map_err(|reason| Error::InvalidName {
            name: name.clone(),
            reason,
        })?;
        let parameters = tool.args_schema();
        ArgsValidator::check_shape(&parameters).map_err(|reason| Error::InvalidSchema {
            name: name.clone(),
            reason,
        })?;
        let spec = ToolSpec {
            name: name.clone(),
            description: tool.description().to_owned(),
            parameters,
            annotations: tool.annotations(),
        };
        let entry = Arc::new(RegisteredTool {
            tool,
            spec,
            validator: OnceLock::new(),
        });
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if !replace && tools.contains_key(&name) {
            return Err(Error::Duplicate { name });
        }
        tools.insert(name, entry);
        Ok(())
    }

    /// The tool called `name`. An unknown name is an error that lists the
    /// closest registered names.
    pub fn get(&self, name: &str) -> Result<Arc<RegisteredTool>, Error> {
        let tools = self.tools.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = tools.get(name) {
            return Ok(Arc::clone(entry));
        }
        Err(Error::NotFound {
            name: name.to_owned(),
            suggestions: close_names(name, tools.keys().map(String::as_str)),
        })
    }

    /// Whether a tool called `name` is registered.
    pub fn has(&self, name: &str) -> bool {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(name)
    }

    /// How many tools are registered.
    pub fn count(&self) -> usize {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Removes every tool.
    pub fn clear(&self) {
        self.tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Every tool, sorted by name.
    pub fn list(&self) -> Vec<Arc<RegisteredTool>> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// The named tools that exist, sorted by name; unknown names are skipped.
    pub fn filter_by_names<S: AsRef<str>>(&self, names: &[S]) -> Vec<Arc<RegisteredTool>> {
        let tools = self.tools.read().unwrap_or_else(PoisonError::into_inner);
        let mut found: Vec<_> = names
            .iter()
            .filter_map(|n| tools.get(n.as_ref()).cloned())
            .collect();
        found.sort_by(|a, b| a.name().cmp(b.name()));
        found.dedup_by(|a, b| a.name() == b.name());
        found
    }

    /// The schemas to send to a model, sorted by name.
    ///
    /// With `allowed: None`, every tool. Otherwise only the named tools; a
    /// name that is not registered is skipped with a `tracing` warning (an
    /// agent's list may name tools that are disabled in this configuration).
    pub fn schemas<S: AsRef<str>>(
        &self,
        allowed: Option<&[S]>,
        format: SchemaFormat,
    ) -> Vec<Value> {
        let entries = match allowed {
            None => self.list(),
            Some(names) => {
                for name in names {
                    if !self.has(name.as_ref()) {
                        tracing::warn!(
                            tool = name.as_ref(),
                            "allowed tool is not registered; skipping it"
                        );
                    }
                }
                self.filter_by_names(names)
            }
        };
        entries
            .iter()
            .map(|entry| entry.spec().export(format))
            .collect()
    }
}

/// Up to three registered names close to `wanted`, best first.
fn close_names<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let mut score = strsim::jaro_winkler(&wanted_lower, &lower);
            if lower.contains(&wanted_lower) || wanted_lower.contains(&lower) {
                score = score.max(0.9);
            }
            (score >= 0.75).then_some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, name)| name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sensitivity, ToolContext, ToolResult};
    use async_trait::async_trait;
    use serde_json::json;

    struct Raw {
        name: &'static str,
        schema: Value,
    }

    #[async_trait]
    impl Tool for Raw {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &'static str {
            "raw"
        }
        fn args_schema(&self) -> Value {
            self.schema.clone()
        }
        fn sensitivity(&self, _: &Value) -> Sensitivity {
            Sensitivity::Sensitive
        }
        async fn execute(&self, _: Value, _: &ToolContext) -> ToolResult {
            ToolResult::success("")
        }
    }

    fn raw(name: &'static str) -> Raw {
        Raw {
            name,
            schema: json!({"type": "object"}),
        }
    }

    #[test]
    fn duplicate_is_refused_unless_replacing() {
        let registry = Registry::new();
        registry.register(raw("read_file")).unwrap();
        let err = registry.register(raw("read_file")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a tool named `read_file` is already registered"
        );
        registry
            .register_or_replace(Arc::new(raw("read_file")))
            .unwrap();
        assert_eq!(registry.count(), 1);
    }

    #[test]
    fn bad_names_and_schemas_are_refused_at_registration() {
        let registry = Registry::new();
        assert!(matches!(
            registry.register(raw("bad name")),
            Err(Error::InvalidName { .. })
        ));
        let broken = Raw {
            name: "broken",
            schema: json!({"type": "array"}),
        };
        assert!(matches!(
            registry.register(broken),
            Err(Error::InvalidSchema { .. })
        ));
        assert_eq!(registry.count(), 0);
    }

    #[test]
    fn a_schema_that_does_not_compile_refuses_every_call() {
        let registry = Registry::new();
        let broken = Raw {
            name: "broken",
            schema: json!({"type": "object", "properties": {"a": {"type": 12}}}),
        };
        registry.register(broken).unwrap();
        let entry = registry.get("broken").unwrap();
        let problems = entry.validate(&json!({"a": 1})).unwrap_err();
        assert!(
            problems.0[0].contains("`broken` cannot be called: invalid argument schema"),
            "{problems:?}"
        );
    }

    #[test]
    fn unknown_names_suggest_close_ones() {
        let registry = Registry::new();
        for name in ["read_file", "write_file", "list_files", "grep"] {
            registry.register(raw(name)).unwrap();
        }
        let Err(Error::NotFound { suggestions, .. }) = registry.get("readfile") else {
            panic!("expected not found");
        };
        assert_eq!(suggestions.first().map(String::as_str), Some("read_file"));
        let Err(Error::NotFound { suggestions, .. }) = registry.get("zzzzzz") else {
            panic!("expected not found");
        };
        assert!(suggestions.is_empty());
        let message = registry.get("read").unwrap_err().to_string();
        assert!(message.contains("did you mean `read_file`"), "{message}");
    }

    #[test]
    fn list_is_sorted_and_schemas_skip_unknown_names() {
        let registry = Registry::new();
        for name in ["b", "c", "a"] {
            registry.register(raw(name)).unwrap();
        }
        let names: Vec<_> = registry
            .list()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        let schemas = registry.schemas(Some(&["c", "nope", "a", "a"]), SchemaFormat::Anthropic);
        let names: Vec<_> = schemas
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(
            registry.schemas::<&str>(None, SchemaFormat::OpenAi).len(),
            3
        );
        assert!(registry.has("b"));
        registry.clear();
        assert!(!registry.has("b"));
        assert_eq!(registry.count(), 0);
    }
}
