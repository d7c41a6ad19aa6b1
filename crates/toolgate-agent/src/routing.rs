//! Intent routing (seed 003's `classify_intent`, `select_tools`,
//! `MAX_TOOLS_PER_CALL` and sticky categories): one cheap model call sorts
//! the user's message into tool categories, and only a few tools of those
//! categories are offered to the model for the turn.
//!
//! Small models pay for every byte of every tool schema in every request,
//! and choose worse among many tools. A [`Router`] is built once per agent
//! from the tool groups (`files`, `search`, `commands`, `datetime`, …) and
//! the `routing:` configuration ([`RoutingConfig`]);
//! [`Router::classify`] makes the call and returns a [`Routed`]: the
//! categories, the tools to offer, and the rule that chose them.
//! [`parse_intent`] and [`select_tools`] are the pure halves, usable on
//! their own.
//!
//! ```no_run
//! # async fn f(llm: &dyn toolgate_agent::LlmClient) -> Result<(), toolgate_agent::RoutingError> {
//! use toolgate_agent::{Router, RoutingConfig};
//! let groups = [
//!     ("files", vec!["read_file".to_owned(), "write_file".to_owned()]),
//!     ("weather", vec!["get_weather".to_owned()]),
//! ];
//! let router = Router::builder(groups).config(&RoutingConfig::default()).build()?;
//! let routed = router.classify(llm, "Will it rain in Lyon?", &[]).await;
//! println!("{:?} offered because {}", routed.tools, routed.reason);
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::llm::{LlmClient, LlmError, LlmRequest, Message, Role};

/// The most tools offered per request by default (seed 003's
/// `MAX_TOOLS_PER_CALL`).
pub const DEFAULT_MAX_TOOLS: usize = 8;

/// The `max_tokens` of the classification call: room for a dozen category
/// names, and a cap on what a chatty model can cost.
pub const CLASSIFY_MAX_TOKENS: u32 = 64;

/// The most of the user's message the classification call carries, in
/// bytes: its first and last halves, so that a long paste followed by the
/// question is still classified by the question.
pub const CLASSIFY_MESSAGE_CAP: usize = 4000;

/// The most tool names listed per category in the classification prompt.
const LISTED_TOOLS: usize = 8;

/// `routing:` — which tools a turn offers, chosen by a cheap model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// Whether each user message is classified and only the tools of its
    /// categories are offered. Default: false (every allowed tool is
    /// offered).
    pub enabled: bool,
    /// The most tools offered per request, the always-offered ones
    /// included. Default: 8.
    pub max_tools: usize,
    /// Categories as `name: [tool names]`, added to the tool groups (a
    /// group of the same name is replaced; an empty list removes it).
    /// Default: none, so the categories are the tool groups (`files`,
    /// `search`, `commands`, `datetime`, `calculator`, `notes`, `tasks`,
    /// `weather`, `web`, `memory`, `cron`, `phone`, as enabled).
    pub categories: BTreeMap<String, Vec<String>>,
    /// The categories used when the classification fails or names none.
    /// Default: `[files, search, commands]` (when none of these exists,
    /// every category).
    pub default_categories: Vec<String>,
    /// A cheaper model, on the same server, for the classification call.
    /// Default: none (the run's model).
    pub model: Option<String>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_tools: DEFAULT_MAX_TOOLS,
            categories: BTreeMap::new(),
            default_categories: ["files", "search", "commands"].map(str::to_owned).to_vec(),
            model: None,
        }
    }
}

/// Errors building a [`Router`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RoutingError {
    /// `routing.max_tools` is zero.
    #[error("`routing.max_tools` must be at least 1")]
    NoTools,
    /// The always-offered tools fill the whole limit.
    #[error(
        "`routing.max_tools` ({max_tools}) leaves no room beside the {pinned} always-offered tools"
    )]
    NoRoom {
        /// The limit.
        max_tools: usize,
        /// How many tools are always offered.
        pinned: usize,
    },
    /// A category name the classifier could not answer with.
    #[error(
        "`{name}` is not a valid category name: use lower-case letters, digits, `_` and `-` (and not `none`)"
    )]
    CategoryName {
        /// The name as given.
        name: String,
    },
    /// No category holds a tool the agent may use.
    #[error("no routing category holds a tool this agent may use")]
    NoCategories,
}

/// What the classifier's answer says, read tolerantly (see [`parse_intent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntentAnswer {
    /// Known categories, in the order the answer gives them.
    Categories(Vec<String>),
    /// `none`: the message needs no tool.
    None,
    /// Nothing usable: empty, or only unknown names.
    Unrecognised,
}

/// Reads a classifier's answer against the `known` category names.
///
/// # Rules
///
/// 1. A reasoning model's thinking is dropped: only the text after the last
///    `</think>` counts, and an unclosed `<think>` leaves only what comes
///    before it.
/// 2. The text is cut into words at every character that cannot be part of
///    a name (anything but letters, digits, `_` and `-`): commas, spaces,
///    newlines, quotes, brackets, colons, full stops, markdown bullets.
///    Leading and trailing `-` and `_` are trimmed from each word.
/// 3. Words are compared case-insensitively. A word names a category when
///    it equals the name, or differs from it by a trailing `s` (`file` for
///    `files`, `notes` for `note`).
/// 4. Unknown words are ignored; a category named twice is kept once, at
///    its first place.
/// 5. Any known category wins over `none`; `none` alone means no tool.
///    Otherwise the answer is [`IntentAnswer::Unrecognised`].
pub fn parse_intent(answer: &str, known: &[&str]) -> IntentAnswer {
    let text = match (answer.rfind("</think>"), answer.find("<think>")) {
        (Some(end), _) => &answer[end + "</think>".len()..],
        (None, Some(start)) => &answer[..start],
        (None, None) => answer,
    };
    let mut found: Vec<String> = Vec::new();
    let mut none = false;
    let words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches(['-', '_']).to_lowercase())
        .filter(|w| !w.is_empty());
    for word in words {
        if let Some(name) = known.iter().find(|k| names(k, &word)) {
            if !found.iter().any(|f| f == name) {
                found.push((*name).to_owned());
            }
        } else if word == "none" {
            none = true;
        }
    }
    if !found.is_empty() {
        IntentAnswer::Categories(found)
    } else if none {
        IntentAnswer::None
    } else {
        IntentAnswer::Unrecognised
    }
}

/// Whether `word` (lower case) names the category `name` (rule 3 of
/// [`parse_intent`]).
fn names(name: &str, word: &str) -> bool {
    let name = name.to_lowercase();
    word == name
        || word.strip_suffix('s') == Some(name.as_str())
        || name.strip_suffix('s') == Some(word)
}

/// The tools to offer for `categories`, at most `max_tools` of them.
///
/// # Rules
///
/// 1. Only tools in `available` are chosen, and each at most once.
/// 2. The `pinned` tools (always offered: a `skill` tool, `delegate`) come
///    first, in their order, and count towards the limit.
/// 3. Then the categories take turns in their order (their priority): each
///    turn, every category adds its next tool not chosen yet, until
///    `max_tools` tools are chosen or every category is spent. So three
///    tools over two categories are the first two of the first category
///    and the first of the second — no category crowds the others out.
pub fn select_tools(
    categories: &[&[&str]],
    pinned: &[&str],
    available: &[&str],
    max_tools: usize,
) -> Vec<String> {
    let available: HashSet<&str> = available.iter().copied().collect();
    let mut chosen: Vec<String> = Vec::new();
    let take = |tool: &str, chosen: &mut Vec<String>| {
        if chosen.len() < max_tools && available.contains(tool) && !chosen.iter().any(|c| c == tool)
        {
            chosen.push(tool.to_owned());
            true
        } else {
            false
        }
    };
    for tool in pinned {
        take(tool, &mut chosen);
    }
    let mut cursors = vec![0usize; categories.len()];
    loop {
        let mut progressed = false;
        for (tools, cursor) in categories.iter().zip(cursors.iter_mut()) {
            while *cursor < tools.len() {
                let tool = tools[*cursor];
                *cursor += 1;
                if take(tool, &mut chosen) {
                    progressed = true;
                    break;
                }
            }
        }
        if !progressed || chosen.len() >= max_tools {
            return chosen;
        }
    }
}

/// Why a turn offers the tools it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RouteReason {
    /// The model named the categories.
    Classified,
    /// The model answered `none`: the previous turn's categories are kept
    /// (sticky categories).
    Sticky,
    /// The model answered `none` and no turn came before: plain chat, no
    /// tools.
    Chat,
    /// The answer named no known category: the default categories.
    Unrecognised {
        /// The start of the answer.
        answer: String,
    },
    /// The classification call failed: the default categories.
    Failed {
        /// The error, with its causes.
        error: String,
    },
}

impl fmt::Display for RouteReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Classified => f.write_str("the model named the categories"),
            Self::Sticky => f.write_str("the model answered none: the previous turn's categories"),
            Self::Chat => f.write_str("the model answered none: plain chat without tools"),
            Self::Unrecognised { answer } => write!(
                f,
                "the answer {answer:?} names no category: the default categories"
            ),
            Self::Failed { error } => write!(
                f,
                "the classification call failed ({error}): the default categories"
            ),
        }
    }
}

/// The outcome of routing one user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routed {
    /// The categories, in priority order; keep them for the next turn's
    /// `previous`.
    pub categories: Vec<String>,
    /// The tools to offer, at most `max_tools`; empty for plain chat.
    pub tools: Vec<String>,
    /// The rule that applied.
    pub reason: RouteReason,
}

/// Sorts user messages into tool categories and picks the tools to offer.
///
/// # Rules
///
/// 1. The categories are the tool groups the caller passes (name → tool
///    names, in priority order), then `routing.categories`: a category of a
///    group's name replaces the group, an empty one removes it, a new one
///    is added after the groups (in name order).
/// 2. Only tools the agent may use count ([`RouterBuilder::available`]);
///    a category left without tools is dropped, and is never offered to
///    the classifier.
/// 3. [`Router::classify`] makes one model call without tools, with at most
///    [`CLASSIFY_MAX_TOKENS`] tokens of answer and a short fixed prompt
///    listing the categories and their tools; the user's message is cut to
///    [`CLASSIFY_MESSAGE_CAP`] bytes (its first and last halves). Nothing of
///    the answer is streamed anywhere.
/// 4. The answer is read by [`parse_intent`]. Known categories → those
///    categories ([`RouteReason::Classified`]).
/// 5. `none` → the previous turn's categories that still exist
///    ([`RouteReason::Sticky`]); with none, plain chat: no categories and
///    no tools, not even the pinned ones ([`RouteReason::Chat`]).
/// 6. An answer without a known category, an empty one, or a failed call →
///    `routing.default_categories` that exist; when none exists, every
///    category ([`RouteReason::Unrecognised`], [`RouteReason::Failed`]).
///    Routing never fails a turn.
/// 7. The tools are [`select_tools`] over the chosen categories, with the
///    pinned tools first, at most `routing.max_tools`.
#[derive(Debug, Clone)]
pub struct Router {
    categories: Vec<(String, Vec<String>)>,
    defaults: Vec<String>,
    pinned: Vec<String>,
    max_tools: usize,
    prompt: String,
}

/// Builds a [`Router`].
#[derive(Debug, Clone)]
pub struct RouterBuilder {
    groups: Vec<(String, Vec<String>)>,
    config: RoutingConfig,
    pinned: Vec<String>,
    available: Option<Vec<String>>,
}

impl Router {
    /// A builder whose categories start as `groups`: each a tool group's
    /// name and the names of its tools, in priority order.
    pub fn builder<I, N>(groups: I) -> RouterBuilder
    where
        I: IntoIterator<Item = (N, Vec<String>)>,
        N: Into<String>,
    {
        RouterBuilder {
            groups: groups
                .into_iter()
                .map(|(name, tools)| (name.into(), tools))
                .collect(),
            config: RoutingConfig::default(),
            pinned: Vec::new(),
            available: None,
        }
    }

    /// Classifies `message` with one call to `llm` and chooses the tools to
    /// offer (see the type's rules). `previous` is the previous turn's
    /// [`Routed::categories`]; empty on the first turn.
    pub async fn classify(
        &self,
        llm: &dyn LlmClient,
        message: &str,
        previous: &[String],
    ) -> Routed {
        let answer = llm.complete(&self.request(message), &|_| {}).await;
        self.route(answer.as_ref().map(|a| a.content.as_str()), previous)
    }

    /// The classification request for `message` (rule 3).
    pub fn request(&self, message: &str) -> LlmRequest {
        LlmRequest {
            messages: vec![
                Message::text(Role::System, self.prompt.clone()),
                Message::text(Role::User, head_and_tail(message, CLASSIFY_MESSAGE_CAP)),
            ],
            tools: Vec::new(),
            max_tokens: Some(CLASSIFY_MAX_TOKENS),
            must_call: false,
            barred: Vec::new(),
            penalize_repeats: false,
        }
    }

    /// The routing of a classifier's `answer` (or the call's error), with
    /// the previous turn's categories (rules 4 to 7).
    pub fn route(&self, answer: Result<&str, &LlmError>, previous: &[String]) -> Routed {
        let known: Vec<&str> = self.categories.iter().map(|(n, _)| n.as_str()).collect();
        let (categories, reason) = match answer {
            Err(error) => (
                self.defaults.clone(),
                RouteReason::Failed {
                    error: toolgate_core::error_chain(error),
                },
            ),
            Ok(text) => match parse_intent(text, &known) {
                IntentAnswer::Categories(found) => (found, RouteReason::Classified),
                IntentAnswer::None => {
                    let mut sticky: Vec<String> = Vec::new();
                    for p in previous {
                        if known.contains(&p.as_str()) && !sticky.contains(p) {
                            sticky.push(p.clone());
                        }
                    }
                    if sticky.is_empty() {
                        return Routed {
                            categories: Vec::new(),
                            tools: Vec::new(),
                            reason: RouteReason::Chat,
                        };
                    }
                    (sticky, RouteReason::Sticky)
                }
                IntentAnswer::Unrecognised => (
                    self.defaults.clone(),
                    RouteReason::Unrecognised {
                        answer: text.trim().chars().take(200).collect(),
                    },
                ),
            },
        };
        let tools = self.tools_for(&categories);
        Routed {
            categories,
            tools,
            reason,
        }
    }

    /// The tools offered for `categories` (rule 7); unknown names are
    /// ignored.
    pub fn tools_for(&self, categories: &[String]) -> Vec<String> {
        let lists: Vec<Vec<&str>> = categories
            .iter()
            .filter_map(|c| self.categories.iter().find(|(n, _)| n == c))
            .map(|(_, tools)| tools.iter().map(String::as_str).collect())
            .collect();
        let lists: Vec<&[&str]> = lists.iter().map(Vec::as_slice).collect();
        let pinned: Vec<&str> = self.pinned.iter().map(String::as_str).collect();
        let available: Vec<&str> = pinned
            .iter()
            .copied()
            .chain(lists.iter().flat_map(|l| l.iter().copied()))
            .collect();
        select_tools(&lists, &pinned, &available, self.max_tools)
    }

    /// The categories with their available tools, in priority order.
    pub fn categories(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.categories
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_slice()))
    }

    /// The categories used when classification gives nothing (rule 6).
    pub fn default_categories(&self) -> &[String] {
        &self.defaults
    }

    /// The system prompt of the classification call.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }
}

impl RouterBuilder {
    /// The `routing:` configuration: its `max_tools`, `categories` and
    /// `default_categories` (`enabled` and `model` are the caller's to
    /// act on). By default, [`RoutingConfig::default`].
    #[must_use]
    pub fn config(mut self, config: &RoutingConfig) -> Self {
        self.config = config.clone();
        self
    }

    /// Tools offered on every turn that offers tools (a `skill` tool,
    /// `delegate`); they count towards `max_tools`. By default, none.
    #[must_use]
    pub fn pinned<I, T>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.pinned = tools.into_iter().map(Into::into).collect();
        self
    }

    /// The tools the agent may use (its allowed tools); others are never
    /// offered. By default, every tool a category or the pinned list names.
    #[must_use]
    pub fn available<I, T>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.available = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// The router, or why the configuration cannot route.
    pub fn build(self) -> Result<Router, RoutingError> {
        let max_tools = self.config.max_tools;
        if max_tools == 0 {
            return Err(RoutingError::NoTools);
        }
        let mut categories = self.groups;
        for (name, tools) in &self.config.categories {
            match categories.iter_mut().find(|(n, _)| n == name) {
                Some((_, group)) => group.clone_from(tools),
                None => categories.push((name.clone(), tools.clone())),
            }
        }
        if let Some((name, _)) = categories.iter().find(|(n, _)| !valid_name(n)) {
            return Err(RoutingError::CategoryName { name: name.clone() });
        }
        let available: Option<HashSet<&str>> = self
            .available
            .as_ref()
            .map(|a| a.iter().map(String::as_str).collect());
        let usable = |tool: &str| available.as_ref().is_none_or(|a| a.contains(tool));
        let categories: Vec<(String, Vec<String>)> = categories
            .into_iter()
            .map(|(name, tools)| {
                let mut kept: Vec<String> = Vec::new();
                for tool in tools {
                    if usable(&tool) && !kept.contains(&tool) {
                        kept.push(tool);
                    }
                }
                (name, kept)
            })
            .filter(|(_, tools)| !tools.is_empty())
            .collect();
        if categories.is_empty() {
            return Err(RoutingError::NoCategories);
        }
        let mut pinned: Vec<String> = Vec::new();
        for tool in self.pinned {
            if usable(&tool) && !pinned.contains(&tool) {
                pinned.push(tool);
            }
        }
        if pinned.len() >= max_tools {
            return Err(RoutingError::NoRoom {
                max_tools,
                pinned: pinned.len(),
            });
        }
        let mut defaults: Vec<String> = Vec::new();
        for name in &self.config.default_categories {
            if categories.iter().any(|(n, _)| n == name) && !defaults.contains(name) {
                defaults.push(name.clone());
            }
        }
        if defaults.is_empty() {
            defaults = categories.iter().map(|(n, _)| n.clone()).collect();
        }
        let prompt = classify_prompt(&categories);
        Ok(Router {
            categories,
            defaults,
            pinned,
            max_tools,
            prompt,
        })
    }
}

/// Whether the classifier can answer with `name` (rule 2 of
/// [`parse_intent`] would cut it otherwise, and `none` is an answer).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "none"
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.starts_with(['-', '_'])
        && !name.ends_with(['-', '_'])
}

/// The fixed prompt of the classification call.
fn classify_prompt(categories: &[(String, Vec<String>)]) -> String {
    let mut prompt = String::from(
        "Which tool categories does the user's message need? The categories and their tools:\n",
    );
    for (name, tools) in categories {
        prompt.push_str("- ");
        prompt.push_str(name);
        prompt.push_str(": ");
        let listed: Vec<&str> = tools
            .iter()
            .take(LISTED_TOOLS)
            .map(String::as_str)
            .collect();
        prompt.push_str(&listed.join(", "));
        if tools.len() > LISTED_TOOLS {
            prompt.push_str(", …");
        }
        prompt.push('\n');
    }
    prompt.push_str(
        "Answer with category names only, most relevant first, separated by commas. \
         Answer none if the message needs no tool.",
    );
    prompt
}

/// `text` whole when it fits in `cap` bytes, else its first and last
/// halves around a marker, cut on character boundaries.
fn head_and_tail(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_owned();
    }
    let mut head = cap / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - cap / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}\n[…]\n{}", &text[..head], &text[tail..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_keeps_both_ends_on_char_boundaries() {
        let text = format!("{}middle{}", "é".repeat(3000), "日".repeat(2000));
        let cut = head_and_tail(&text, CLASSIFY_MESSAGE_CAP);
        assert!(cut.starts_with('é') && cut.ends_with('日'), "{cut}");
        assert!(cut.contains("\n[…]\n"));
        assert!(!cut.contains("middle"));
        assert!(cut.len() <= CLASSIFY_MESSAGE_CAP + "\n[…]\n".len());
        assert_eq!(head_and_tail("short", 10), "short");
    }

    #[test]
    fn category_names_the_classifier_can_answer_with() {
        let cases: &[(&str, bool)] = &[
            ("files", true),
            ("smart-home", true),
            ("mcp_github", true),
            ("web2", true),
            ("", false),
            ("none", false),
            ("Files", false),
            ("smart home", false),
            ("-files", false),
            ("files_", false),
            ("météo", false),
        ];
        for (name, valid) in cases {
            assert_eq!(valid_name(name), *valid, "{name:?}");
        }
    }
}
