//! `manage_goals` and the `GOALS.md` format (seed 002 `goals.ts`).

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};

use super::persona::{GOALS_FILE, Persona, PersonaConfig, refuse_credentials};

/// The longest goal text, in characters.
const MAX_GOAL_CHARS: usize = 200;
/// The longest status, notes or outcome, in characters.
const MAX_FIELD_CHARS: usize = 500;

/// What `manage_goals` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GoalAction {
    /// Show the open goals and the recently completed ones.
    List,
    /// Add an open goal.
    Add,
    /// Change an open goal's status, priority or notes.
    Update,
    /// Mark an open goal completed, with its outcome.
    Complete,
}

/// How much a goal matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Low.
    Low,
    /// Medium (the default).
    Medium,
    /// High.
    High,
}

impl Priority {
    fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Arguments of `manage_goals`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManageGoalsArgs {
    /// list, add, update or complete.
    pub action: GoalAction,
    /// add: the goal, e.g. "Learn to play the piano". update/complete: part of an open goal's text.
    #[serde(default)]
    pub goal: Option<String>,
    /// add/update: where it stands, e.g. "in progress" or "blocked".
    #[serde(default)]
    pub status: Option<String>,
    /// add/update: low, medium (default) or high.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// add/update: notes; replaces earlier notes.
    #[serde(default)]
    pub notes: Option<String>,
    /// complete: how it went.
    #[serde(default)]
    pub outcome: Option<String>,
}

/// One goal: a checkbox line and its `  - Key: value` fields.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Goal {
    text: String,
    done: bool,
    /// `(Key, value)`, in file order.
    fields: Vec<(String, String)>,
    /// Other indented lines under the goal, kept as they are.
    extra: Vec<String>,
}

impl Goal {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    fn set(&mut self, key: &str, value: &str) {
        match self
            .fields
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        {
            Some(field) => value.clone_into(&mut field.1),
            None => self.fields.push((key.to_owned(), value.to_owned())),
        }
    }

    fn remove(&mut self, key: &str) {
        self.fields.retain(|(k, _)| !k.eq_ignore_ascii_case(key));
    }

    fn render(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "- [{}] {}",
            if self.done { "x" } else { " " },
            self.text
        );
        for (key, value) in &self.fields {
            let _ = writeln!(out, "  - {key}: {value}");
        }
        for line in &self.extra {
            let _ = writeln!(out, "  {line}");
        }
    }

    /// One line for a listing.
    fn summary(&self) -> String {
        let mut out = self.text.clone();
        let details: Vec<String> = ["Status", "Notes", "Outcome"]
            .iter()
            .filter_map(|k| self.get(k).map(|v| format!("{}: {v}", k.to_lowercase())))
            .collect();
        if !details.is_empty() {
            let _ = write!(out, " — {}", details.join("; "));
        }
        out
    }
}

/// The goals of a `GOALS.md`.
///
/// # Format
///
/// ```text
/// # Goals
///
/// ## Active
/// - [ ] Learn to play the piano
///   - Priority: high
///   - Status: in progress
///   - Notes: lessons on Tuesdays
///   - Added: 2025-01-15
///
/// ## Completed
/// - [x] Run a half marathon
///   - Priority: medium
///   - Added: 2024-09-01
///   - Completed: 2025-01-12
///   - Outcome: finished in 1:58
/// ```
///
/// A goal is a checkbox line at the start of a line (`- [ ]` open,
/// `- [x]` done, whichever section it is in); indented `- Key: value`
/// lines under it are its fields, other indented lines are kept with it.
/// Top-level lines that are neither goals nor the section headings are
/// kept, above the sections. Completed goals are listed newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Goals {
    preamble: Vec<String>,
    active: Vec<Goal>,
    completed: Vec<Goal>,
}

impl Goals {
    pub(crate) fn parse(text: &str) -> Self {
        let mut goals = Self::default();
        let mut current: Option<Goal> = None;
        for line in text.lines() {
            if let Some((done, goal)) = checkbox(line) {
                goals.push(current.take());
                current = Some(Goal {
                    text: goal.to_owned(),
                    done,
                    fields: Vec::new(),
                    extra: Vec::new(),
                });
                continue;
            }
            let indented = line.starts_with([' ', '\t']);
            if let (Some(goal), true) = (current.as_mut(), indented && !line.trim().is_empty()) {
                let inner = line.trim();
                match inner
                    .strip_prefix("- ")
                    .and_then(|f| f.split_once(": "))
                    .filter(|(k, _)| !k.is_empty() && k.chars().all(char::is_alphabetic))
                {
                    Some((key, value)) => goal.fields.push((key.to_owned(), value.to_owned())),
                    None => goal.extra.push(inner.to_owned()),
                }
                continue;
            }
            goals.push(current.take());
            let trimmed = line.trim();
            let section = trimmed.starts_with('#')
                && matches!(
                    trimmed
                        .trim_start_matches('#')
                        .trim()
                        .to_lowercase()
                        .as_str(),
                    "goals" | "active" | "completed"
                );
            if !trimmed.is_empty() && !section {
                goals.preamble.push(line.to_owned());
            }
        }
        goals.push(current);
        goals
    }

    fn push(&mut self, goal: Option<Goal>) {
        if let Some(goal) = goal {
            if goal.done {
                self.completed.push(goal);
            } else {
                self.active.push(goal);
            }
        }
    }

    pub(crate) fn render(&self) -> String {
        let mut out = String::from("# Goals\n\n");
        if !self.preamble.is_empty() {
            for line in &self.preamble {
                let _ = writeln!(out, "{line}");
            }
            out.push('\n');
        }
        out.push_str("## Active\n");
        for goal in &self.active {
            goal.render(&mut out);
        }
        out.push_str("\n## Completed\n");
        for goal in &self.completed {
            goal.render(&mut out);
        }
        out
    }

    /// The open goals, one line each, for the system prompt.
    pub(crate) fn open_summary(&self) -> String {
        let mut out = String::new();
        for goal in &self.active {
            let priority = goal.get("Priority").unwrap_or("medium");
            let _ = writeln!(out, "- [{priority}] {}", goal.summary());
        }
        out
    }

    /// The open goal `query` names (rules 3 and 4 of [`ManageGoals`]).
    fn find(&self, query: &str) -> Result<usize, String> {
        let wanted = one_line(query).to_lowercase();
        let lower: Vec<String> = self.active.iter().map(|g| g.text.to_lowercase()).collect();
        if let Some(at) = lower.iter().position(|t| *t == wanted) {
            return Ok(at);
        }
        let matches: Vec<usize> = (0..lower.len())
            .filter(|i| lower[*i].contains(&wanted))
            .collect();
        match matches.as_slice() {
            [one] => Ok(*one),
            [] if self.active.is_empty() => Err(format!(
                "no open goal matches \"{query}\": there are no open goals"
            )),
            [] => Err(format!(
                "no open goal matches \"{query}\". Open goals: {}",
                quoted(self.active.iter())
            )),
            many => Err(format!(
                "\"{query}\" matches {} open goals: {}. Use more of the goal's text",
                many.len(),
                quoted(many.iter().map(|i| &self.active[*i]))
            )),
        }
    }
}

fn quoted<'a>(goals: impl Iterator<Item = &'a Goal>) -> String {
    goals
        .map(|g| format!("\"{}\"", g.text))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A checkbox line's state and text.
fn checkbox(line: &str) -> Option<(bool, &str)> {
    let rest = line
        .strip_prefix("- [")
        .or_else(|| line.strip_prefix("* ["))?;
    let (mark, text) = rest.split_at_checked(1)?;
    let text = text.strip_prefix("] ")?.trim();
    match mark {
        " " => Some((false, text)),
        "x" | "X" => Some((true, text)),
        _ => None,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A checked, one-line value of a field.
fn field(name: &str, value: &str, max: usize) -> Result<String, String> {
    let value = one_line(value);
    if value.is_empty() {
        return Err(format!("the {name} is empty"));
    }
    if value.chars().count() > max {
        return Err(format!("the {name} is too long (at most {max} characters)"));
    }
    refuse_credentials(name, &value)?;
    Ok(value)
}

/// What an action leaves: the new file (none for `list`) and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    content: Option<String>,
    message: String,
}

/// Runs an action on the text of `GOALS.md` (see the rules on
/// [`ManageGoals`]); `today` is `YYYY-MM-DD`.
fn act(
    text: &str,
    args: &ManageGoalsArgs,
    today: &str,
    config: &PersonaConfig,
) -> Result<Outcome, String> {
    let mut goals = Goals::parse(text);
    let needs_goal = || {
        args.goal
            .as_deref()
            .filter(|g| !g.trim().is_empty())
            .ok_or_else(|| "give `goal`: the goal's text, or part of it".to_owned())
    };
    let message = match args.action {
        GoalAction::List => {
            return Ok(Outcome {
                content: None,
                message: listing(&goals),
            });
        }
        GoalAction::Add => {
            let text = field("goal", needs_goal()?, MAX_GOAL_CHARS)?;
            if goals
                .active
                .iter()
                .any(|g| g.text.eq_ignore_ascii_case(&text))
            {
                return Err(format!(
                    "\"{text}\" is already an open goal; update it instead"
                ));
            }
            if goals.active.len() >= config.max_active_goals {
                return Err(format!(
                    "there are already {} open goals (the most kept); complete or update one first",
                    goals.active.len()
                ));
            }
            let mut goal = Goal {
                text: text.clone(),
                done: false,
                fields: Vec::new(),
                extra: Vec::new(),
            };
            goal.set(
                "Priority",
                args.priority.unwrap_or(Priority::Medium).as_str(),
            );
            let status = args.status.as_deref().unwrap_or("not started");
            goal.set("Status", &field("status", status, MAX_FIELD_CHARS)?);
            if let Some(notes) = &args.notes {
                goal.set("Notes", &field("notes", notes, MAX_FIELD_CHARS)?);
            }
            goal.set("Added", today);
            goals.active.push(goal);
            format!("Added goal \"{text}\".")
        }
        GoalAction::Update => {
            let at = goals.find(needs_goal()?)?;
            let goal = &mut goals.active[at];
            if args.status.is_none() && args.priority.is_none() && args.notes.is_none() {
                return Err("give what to change: status, priority or notes".to_owned());
            }
            if let Some(status) = &args.status {
                goal.set("Status", &field("status", status, MAX_FIELD_CHARS)?);
            }
            if let Some(priority) = args.priority {
                goal.set("Priority", priority.as_str());
            }
            if let Some(notes) = &args.notes {
                goal.set("Notes", &field("notes", notes, MAX_FIELD_CHARS)?);
            }
            format!("Updated goal \"{}\".", goal.text)
        }
        GoalAction::Complete => {
            let at = goals.find(needs_goal()?)?;
            let mut goal = goals.active.remove(at);
            goal.done = true;
            goal.remove("Status");
            goal.set("Completed", today);
            if let Some(outcome) = &args.outcome {
                goal.set("Outcome", &field("outcome", outcome, MAX_FIELD_CHARS)?);
            }
            let message = format!("Completed goal \"{}\".", goal.text);
            goals.completed.insert(0, goal);
            goals.completed.truncate(config.completed_goals_kept);
            message
        }
    };
    Ok(Outcome {
        content: Some(goals.render()),
        message,
    })
}

fn listing(goals: &Goals) -> String {
    if goals.active.is_empty() && goals.completed.is_empty() {
        return "No goals yet. Add one with {\"action\": \"add\", \"goal\": \"…\"}.".to_owned();
    }
    let mut out = format!("Open goals ({}):\n", goals.active.len());
    for (i, goal) in goals.active.iter().enumerate() {
        let priority = goal.get("Priority").unwrap_or("medium");
        let _ = writeln!(out, "{}. [{priority}] {}", i + 1, goal.summary());
    }
    if !goals.completed.is_empty() {
        let _ = writeln!(out, "Recently completed ({}):", goals.completed.len());
        for goal in &goals.completed {
            let when = goal.get("Completed").unwrap_or("?");
            let _ = writeln!(out, "- {} ({when})", goal.summary());
        }
    }
    out.trim_end().to_owned()
}

/// `manage_goals`: the goals in `GOALS.md`.
///
/// # Rules
///
/// 1. `list` reads only; `add`, `update` and `complete` rewrite the file
///    atomically, in the format documented on `Goals` (checkboxes, open
///    goals then completed ones).
/// 2. `add` needs `goal` (at most 200 characters); priority defaults to
///    medium, status to "not started"; an open goal with the same text
///    (ignoring case) is refused, and so is a goal beyond
///    `max_active_goals`.
/// 3. `update` and `complete` name an open goal by its text or part of it,
///    ignoring case: a goal whose whole text matches wins; otherwise
///    exactly one goal must contain the words given.
/// 4. No match is an error listing the open goals; several matches are an
///    error listing the candidates, so the model can say more.
/// 5. `complete` moves the goal to the completed ones, newest first, with
///    its completion date and `outcome`; only the last
///    `completed_goals_kept` (10) completed goals are kept.
/// 6. Values are one line each (status, notes, outcome at most 500
///    characters) and may not hold a credential.
#[derive(Debug, Clone)]
pub struct ManageGoals {
    persona: Arc<Persona>,
}

impl ManageGoals {
    pub(crate) fn new(persona: Arc<Persona>) -> Self {
        Self { persona }
    }

    fn outcome(&self, args: &ManageGoalsArgs) -> Result<Outcome, String> {
        let text = self.persona.read(GOALS_FILE)?.unwrap_or_default();
        let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
        act(&text, args, &today, &self.persona.config)
    }
}

#[async_trait]
impl TypedTool for ManageGoals {
    type Args = ManageGoalsArgs;
    const NAME: &'static str = "manage_goals";
    const DESCRIPTION: &'static str = "Track your goals in GOALS.md. action: \"list\" shows them; \
        \"add\" needs goal (and optional priority low|medium|high, status, notes); \
        \"update\" needs goal (part of its text) and status, priority or notes; \
        \"complete\" needs goal and an optional outcome. \
        Example: {\"action\": \"update\", \"goal\": \"piano\", \"status\": \"in progress\"}.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    /// `list` only reads.
    fn sensitivity(&self, args: &Value) -> Sensitivity {
        if args.get("action").and_then(Value::as_str) == Some("list") {
            Sensitivity::ReadOnly
        } else {
            Sensitivity::Sensitive
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            destructive_hint: Some(false),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// `list`: a read of `GOALS.md`; the others: a write of it with its new
    /// text (its absolute path).
    fn effects(&self, args: &ManageGoalsArgs) -> Result<Effects, EffectsError> {
        if args.action == GoalAction::List {
            return Ok(Effects::known([Effect::read(
                self.persona.dir.effect_path(GOALS_FILE),
            )]));
        }
        let outcome = self.outcome(args)?;
        Ok(self
            .persona
            .write_effect(GOALS_FILE, outcome.content.unwrap_or_default()))
    }

    async fn run(&self, args: ManageGoalsArgs, _ctx: &ToolContext) -> ToolResult {
        let tool = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let outcome = tool.outcome(&args)?;
            if let Some(content) = &outcome.content {
                tool.persona.write(GOALS_FILE, content)?;
            }
            Ok::<_, String>(outcome.message)
        })
        .await;
        match done {
            Ok(Ok(message)) => ToolResult::success(message).with_metadata("path", GOALS_FILE),
            Ok(Err(message)) => ToolResult::failure(message),
            Err(error) => ToolResult::failure(format!(
                "internal error: the goals were not changed ({error})"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(action: GoalAction) -> ManageGoalsArgs {
        ManageGoalsArgs {
            action,
            goal: None,
            status: None,
            priority: None,
            notes: None,
            outcome: None,
        }
    }

    fn with_goal(action: GoalAction, goal: &str) -> ManageGoalsArgs {
        ManageGoalsArgs {
            goal: Some(goal.to_owned()),
            ..args(action)
        }
    }

    const FILE: &str = "# Goals\n\nKeep these short.\n\n## Active\n\
- [ ] Learn to play the piano\n  - Priority: high\n  - Status: not started\n  - Added: 2025-01-01\n\
- [ ] Learn Rust\n  - Priority: medium\n  - Status: in progress\n  see the book\n\
- [ ] Learn Rust macros\n  - Priority: low\n\n## Completed\n\
- [x] Run a half marathon\n  - Completed: 2024-12-01\n";

    #[test]
    fn the_format_round_trips() {
        assert_eq!(Goals::parse(FILE).render(), FILE);
        let parsed = Goals::parse(FILE);
        assert_eq!(parsed.active.len(), 3);
        assert_eq!(parsed.completed.len(), 1);
        assert_eq!(parsed.active[1].extra, ["see the book"]);
        assert_eq!(parsed.preamble, ["Keep these short."]);
    }

    #[test]
    fn goals_are_matched_by_case_insensitive_substring() {
        let goals = Goals::parse(FILE);
        let cases: &[(&str, Result<usize, &str>)] = &[
            ("PIANO", Ok(0)),
            ("play the", Ok(0)),
            // The whole text wins over a longer goal that contains it.
            ("learn rust", Ok(1)),
            ("macros", Ok(2)),
            (
                "learn",
                Err(
                    "\"learn\" matches 3 open goals: \"Learn to play the piano\", \"Learn Rust\", \"Learn Rust macros\". Use more of the goal's text",
                ),
            ),
            ("rust m", Ok(2)),
            (
                "violin",
                Err(
                    "no open goal matches \"violin\". Open goals: \"Learn to play the piano\", \"Learn Rust\", \"Learn Rust macros\"",
                ),
            ),
            // Completed goals are not open.
            (
                "marathon",
                Err(
                    "no open goal matches \"marathon\". Open goals: \"Learn to play the piano\", \"Learn Rust\", \"Learn Rust macros\"",
                ),
            ),
        ];
        for (query, expected) in cases {
            let found = goals.find(query);
            assert_eq!(found, expected.map_err(str::to_owned), "{query:?}");
        }
        assert_eq!(
            Goals::default().find("x"),
            Err("no open goal matches \"x\": there are no open goals".to_owned())
        );
    }

    #[test]
    fn actions_change_the_file() {
        let config = PersonaConfig::default();
        let today = "2025-02-03";
        let added = act(
            "",
            &ManageGoalsArgs {
                priority: Some(Priority::High),
                notes: Some("two   lines\nof notes".into()),
                ..with_goal(GoalAction::Add, "  Read 12 books ")
            },
            today,
            &config,
        )
        .unwrap();
        assert_eq!(
            added.content.as_deref(),
            Some(
                "# Goals\n\n## Active\n- [ ] Read 12 books\n  - Priority: high\n  - Status: not started\n  - Notes: two lines of notes\n  - Added: 2025-02-03\n\n## Completed\n"
            )
        );
        let text = added.content.unwrap();
        let again = act(
            &text,
            &with_goal(GoalAction::Add, "read 12 BOOKS"),
            today,
            &config,
        );
        assert!(again.unwrap_err().contains("already an open goal"));

        let updated = act(
            &text,
            &ManageGoalsArgs {
                status: Some("3 read".into()),
                ..with_goal(GoalAction::Update, "books")
            },
            today,
            &config,
        )
        .unwrap();
        let text = updated.content.unwrap();
        assert!(text.contains("  - Status: 3 read\n"), "{text}");
        let nothing = act(
            &text,
            &with_goal(GoalAction::Update, "books"),
            today,
            &config,
        );
        assert!(nothing.unwrap_err().contains("status, priority or notes"));

        let completed = act(
            &text,
            &ManageGoalsArgs {
                outcome: Some("read 14".into()),
                ..with_goal(GoalAction::Complete, "books")
            },
            today,
            &config,
        )
        .unwrap();
        let text = completed.content.unwrap();
        assert_eq!(
            text,
            "# Goals\n\n## Active\n\n## Completed\n- [x] Read 12 books\n  - Priority: high\n  - Notes: two lines of notes\n  - Added: 2025-02-03\n  - Completed: 2025-02-03\n  - Outcome: read 14\n"
        );
        let listed = act(&text, &args(GoalAction::List), today, &config).unwrap();
        assert_eq!(listed.content, None);
        assert_eq!(
            listed.message,
            "Open goals (0):\nRecently completed (1):\n- Read 12 books — notes: two lines of notes; outcome: read 14 (2025-02-03)"
        );
    }

    #[test]
    fn only_the_last_ten_completed_goals_are_kept() {
        let config = PersonaConfig::default();
        let mut text = String::new();
        for i in 0..12 {
            text = act(
                &text,
                &with_goal(GoalAction::Add, &format!("goal number {i}")),
                "d",
                &config,
            )
            .unwrap()
            .content
            .unwrap();
            text = act(
                &text,
                &with_goal(GoalAction::Complete, &format!("goal number {i}")),
                "d",
                &config,
            )
            .unwrap()
            .content
            .unwrap();
        }
        let goals = Goals::parse(&text);
        let kept: Vec<&str> = goals.completed.iter().map(|g| g.text.as_str()).collect();
        assert_eq!(kept.len(), 10);
        assert_eq!(kept[0], "goal number 11");
        assert_eq!(kept[9], "goal number 2");
    }

    #[test]
    fn refused_values() {
        let config = PersonaConfig {
            max_active_goals: 1,
            ..PersonaConfig::default()
        };
        let cases: &[(ManageGoalsArgs, &str)] = &[
            (args(GoalAction::Add), "give `goal`"),
            (with_goal(GoalAction::Add, "   "), "give `goal`"),
            (with_goal(GoalAction::Add, &"x".repeat(201)), "too long"),
            (
                with_goal(
                    GoalAction::Add,
                    "rotate token ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU",
                ),
                "credential",
            ),
            (
                with_goal(GoalAction::Update, "nothing here"),
                "no open goals",
            ),
        ];
        for (args, expected) in cases {
            let error = act("", args, "d", &config).unwrap_err();
            assert!(error.contains(expected), "{args:?}: {error}");
        }
        let one = act("", &with_goal(GoalAction::Add, "a"), "d", &config)
            .unwrap()
            .content
            .unwrap();
        let full = act(&one, &with_goal(GoalAction::Add, "b"), "d", &config).unwrap_err();
        assert!(full.contains("already 1 open goals"), "{full}");
    }
}
