//! A dynamic tool's definition, checked the same way when an agent creates
//! it, when a person approves it and when a process loads it.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_store::{DynamicToolKind, DynamicToolRecord};

use super::DynamicConfig;
use super::names::check_name;
use super::params::{allow_dash, fit_template, parameters};
use super::template::Template;

/// The interpreter of a `script` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Interpreter {
    /// `python3`.
    Python3,
    /// `node`.
    Node,
    /// `sh` (POSIX shell).
    Sh,
}

impl Interpreter {
    /// The program's name, looked up in the sandbox's `PATH`; also the
    /// name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Python3 => "python3",
            Self::Node => "node",
            Self::Sh => "sh",
        }
    }

    /// The interpreter called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "python3" => Some(Self::Python3),
            "node" => Some(Self::Node),
            "sh" => Some(Self::Sh),
            _ => None,
        }
    }

    /// The interpreter a `#!` first line names (`#!/usr/bin/env python3`,
    /// `#!/bin/sh`): `None` without one, an error when it names another
    /// program.
    pub fn from_shebang(source: &str) -> Option<Result<Self, String>> {
        let line = source.lines().next()?.strip_prefix("#!")?;
        let mut words = line.split_whitespace();
        let mut program = words.next()?;
        if program.rsplit('/').next() == Some("env") {
            program = words.find(|w| !w.starts_with('-'))?;
        }
        let base = program.rsplit('/').next().unwrap_or(program);
        Some(Self::from_name(base).ok_or_else(|| {
            format!("the `#!` line names `{base}`; a script runs with python3, node or sh")
        }))
    }

    /// The script file's extension.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Self::Python3 => "py",
            Self::Node => "js",
            Self::Sh => "sh",
        }
    }
}

/// What a checked tool runs.
#[derive(Debug, Clone)]
pub(crate) enum Program {
    /// An argument-vector template, with the parameters that may begin a
    /// word with `-`.
    Command {
        template: Template,
        allow_dash: BTreeSet<String>,
    },
    /// A script and its interpreter.
    Script {
        interpreter: Interpreter,
        source: String,
    },
}

/// A definition that passed [`check`].
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub(crate) description: String,
    pub(crate) interpreter: Option<Interpreter>,
    pub(crate) parameters: Value,
    pub(crate) program: Program,
}

/// A definition as written: by a `create_tool` call, or as stored.
pub(crate) struct Draft<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) kind: DynamicToolKind,
    pub(crate) interpreter: Option<&'a str>,
    pub(crate) source: &'a str,
    pub(crate) parameters: Option<&'a Value>,
}

impl<'a> Draft<'a> {
    /// A stored record as a draft.
    pub(crate) fn of(record: &'a DynamicToolRecord) -> Self {
        Self {
            name: &record.name,
            description: &record.description,
            kind: record.kind,
            interpreter: record.interpreter.as_deref(),
            source: &record.source,
            parameters: Some(&record.parameters),
        }
    }
}

/// Checks a definition and completes its schema.
///
/// # Rules
///
/// 1. The name follows [`check_name`].
/// 2. The description is not blank, has at most `max_description_chars`
///    characters, and no control characters but newlines and tabs (it is
///    shown to models and reviewers as it is). Leading and trailing
///    whitespace is dropped.
/// 3. The source is not blank, has at most `max_source_bytes` bytes and no
///    NUL byte.
/// 4. A `command` is a [`Template`] and has no interpreter; its schema
///    must fit it ([`fit_template`]).
/// 5. A `script` runs with the interpreter given, else the one its `#!`
///    line names; it is python3, node or sh, and must be known.
/// 6. The schema follows [`parameters`].
pub(crate) fn check(config: &DynamicConfig, draft: &Draft<'_>) -> Result<Checked, String> {
    check_name(draft.name, &config.reserved)?;
    let description = draft.description.trim();
    if description.is_empty() {
        return Err("the description is empty; say in a sentence what the tool does".to_owned());
    }
    let chars = description.chars().count();
    if chars > config.max_description_chars {
        return Err(format!(
            "the description has {chars} characters; at most {} are allowed",
            config.max_description_chars
        ));
    }
    if description
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err("the description holds control characters; write plain text".to_owned());
    }
    if draft.source.trim().is_empty() {
        return Err("the source is empty".to_owned());
    }
    if draft.source.len() > config.max_source_bytes {
        return Err(format!(
            "the source is {} bytes; at most {} are allowed",
            draft.source.len(),
            config.max_source_bytes
        ));
    }
    if draft.source.contains('\0') {
        return Err("the source holds a NUL byte".to_owned());
    }
    let mut schema = parameters(draft.parameters, config.max_schema_bytes)?;
    let (interpreter, program) = match draft.kind {
        DynamicToolKind::Command => {
            if let Some(interpreter) = draft.interpreter {
                return Err(format!(
                    "a command runs no interpreter (`{interpreter}` given); use type `script` for code"
                ));
            }
            let template = Template::parse(draft.source).map_err(|e| e.to_string())?;
            fit_template(&mut schema, &template)?;
            let allow_dash = allow_dash(&schema);
            (
                None,
                Program::Command {
                    template,
                    allow_dash,
                },
            )
        }
        DynamicToolKind::Script => {
            let interpreter = match (draft.interpreter, Interpreter::from_shebang(draft.source)) {
                (Some(name), _) => Interpreter::from_name(name).ok_or_else(|| {
                    format!("unknown interpreter `{name}`; use python3, node or sh")
                })?,
                (None, Some(found)) => found?,
                (None, None) => {
                    return Err(
                        "a script needs an interpreter: set `interpreter` to python3, node or sh"
                            .to_owned(),
                    );
                }
            };
            (
                Some(interpreter),
                Program::Script {
                    interpreter,
                    source: draft.source.to_owned(),
                },
            )
        }
    };
    Ok(Checked {
        description: description.to_owned(),
        interpreter,
        parameters: schema,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shebangs_name_the_interpreter() {
        let cases: &[(&str, Option<Result<Interpreter, &str>>)] = &[
            (
                "#!/usr/bin/env python3\nprint(1)",
                Some(Ok(Interpreter::Python3)),
            ),
            ("#!/usr/bin/env -S node\n", Some(Ok(Interpreter::Node))),
            ("#!/bin/sh -e\n", Some(Ok(Interpreter::Sh))),
            (
                "#! /usr/local/bin/python3\n",
                Some(Ok(Interpreter::Python3)),
            ),
            ("#!/bin/bash\n", Some(Err("the `#!` line names `bash`"))),
            (
                "#!/usr/bin/env ruby\n",
                Some(Err("the `#!` line names `ruby`")),
            ),
            ("print(1)\n#!/bin/sh\n", None),
            ("", None),
            ("#!\n", None),
        ];
        for (source, expected) in cases {
            let got = Interpreter::from_shebang(source);
            match (&got, expected) {
                (None, None) => {}
                (Some(Ok(a)), Some(Ok(b))) => assert_eq!(a, b, "{source:?}"),
                (Some(Err(message)), Some(Err(start))) => {
                    assert!(message.starts_with(start), "{source:?}: {message}");
                }
                _ => panic!("{source:?}: got {got:?}, want {expected:?}"),
            }
        }
    }

    type Case<'a> = (
        DynamicToolKind,
        Option<&'a str>,
        &'a str,
        &'a str,
        &'a Value,
        Result<Option<Interpreter>, &'a str>,
    );

    #[test]
    fn definitions_are_checked() {
        use DynamicToolKind::{Command, Script};
        let config = DynamicConfig::default();
        let long = "x".repeat(config.max_description_chars + 1);
        let big = "x".repeat(config.max_source_bytes + 1);
        let count = json!({"properties": {"count": {"type": "integer"}}});
        let none = json!({});
        // (kind, interpreter, description, source, parameters, Ok(interpreter) or Err)
        let cases: &[Case<'_>] = &[
            (
                Command,
                None,
                "Recent commits.",
                "git log -n {{count}}",
                &count,
                Ok(None),
            ),
            (
                Script,
                Some("node"),
                "Counts.",
                "console.log(1)",
                &none,
                Ok(Some(Interpreter::Node)),
            ),
            (
                Script,
                None,
                "Counts.",
                "#!/usr/bin/env python3\nprint(1)",
                &none,
                Ok(Some(Interpreter::Python3)),
            ),
            // The field wins over the `#!` line.
            (
                Script,
                Some("sh"),
                "Counts.",
                "#!/usr/bin/env python3\necho 1",
                &none,
                Ok(Some(Interpreter::Sh)),
            ),
            (
                Script,
                None,
                "Counts.",
                "print(1)",
                &none,
                Err("a script needs an interpreter"),
            ),
            (
                Script,
                Some("bash"),
                "Counts.",
                "echo",
                &none,
                Err("unknown interpreter `bash`"),
            ),
            (
                Command,
                Some("sh"),
                "Counts.",
                "wc -l",
                &none,
                Err("a command runs no interpreter"),
            ),
            (
                Command,
                None,
                "  ",
                "wc -l",
                &none,
                Err("the description is empty"),
            ),
            (
                Command,
                None,
                &long,
                "wc -l",
                &none,
                Err("the description has 301 characters"),
            ),
            (
                Command,
                None,
                "Looks fine.\u{1b}[2K",
                "wc -l",
                &none,
                Err("the description holds control characters"),
            ),
            (
                Command,
                None,
                "Counts.",
                " \n ",
                &none,
                Err("the source is empty"),
            ),
            (
                Script,
                Some("sh"),
                "Counts.",
                &big,
                &none,
                Err("the source is 32769 bytes"),
            ),
            (
                Script,
                Some("sh"),
                "Counts.",
                "echo \0",
                &none,
                Err("the source holds a NUL"),
            ),
            (
                Command,
                None,
                "Counts.",
                "wc -l {{path}}",
                &none,
                Err("the command uses {{path}}"),
            ),
            (
                Command,
                None,
                "Counts.",
                "{{p}}",
                &none,
                Err("the program `{{p}}`"),
            ),
        ];
        for (kind, interpreter, description, source, params, expected) in cases {
            let draft = Draft {
                name: "my_tool",
                description,
                kind: *kind,
                interpreter: *interpreter,
                source,
                parameters: Some(params),
            };
            match (check(&config, &draft), expected) {
                (Ok(checked), Ok(want)) => assert_eq!(checked.interpreter, *want, "{source:?}"),
                (Err(message), Err(start)) => {
                    assert!(message.starts_with(start), "{source:?}: {message}");
                }
                (Ok(_), Err(start)) => panic!("{source:?}: accepted, want {start}"),
                (Err(message), Ok(_)) => panic!("{source:?}: refused: {message}"),
            }
        }
    }
}
