//! Keeping every request inside the model's context window.
//!
//! # Rules
//!
//! 1. Sizes are estimated from bytes, at 3.5 bytes a token
//!    ([`BYTES_PER_TOKEN_X2`] / 2): fewer than byte-pair tokenizers average
//!    on English, code and JSON schemas (Qwen2.5's tokenizer: 3.8 on
//!    toolgate's tool schemas, about 4 on prose), so the estimate errs on the
//!    large side. What a request weighs is the JSON of its messages plus its
//!    tool schemas plus [`ENVELOPE_BYTES`] for the rest of the body.
//! 2. A run reserves part of the window for the answer (the request's
//!    `max_tokens`): the configured `max_tokens`, at most a quarter of the
//!    window. The rest is the input budget.
//! 3. The tool schemas and the first messages (system prompt and task) must
//!    fit in the budget with room to work ([`ContextBudget::check_start`]);
//!    otherwise the run fails before its first call, saying so.
//! 4. Tool outputs are cut (head and tail) to a quarter of the budget.
//! 5. Past three quarters of the budget the loop compresses (the model
//!    summarises old steps; old tool outputs are elided); before every
//!    request, [`fit`] makes sure it fits whatever happened.
//! 6. Then, before it is sent, every request is weighed as the server will
//!    see it, conservatively: the JSON of its messages and tool schemas, at
//!    [`WIRE_BYTES_PER_TOKEN`] bytes a token (escaped code and JSON
//!    tokenise densely), against the window less the answer's tokens
//!    ([`ContextBudget::wire_bytes`]); [`fit_wire`] trims it until it
//!    fits. A request over the window is never sent.
//! 7. When the server still answers that the request exceeds its context
//!    (llama.cpp's `exceed_context_size_error`, OpenAI's
//!    `context_length_exceeded`, see [`exceeds_context`]), the run's
//!    budget becomes the size of the refused request shrunk by what the
//!    server said (its window against its token count, less a tenth, or by
//!    a quarter), the request is trimmed to it and sent once more.

use crate::llm::{Message, Role};

/// Twice the bytes per token assumed when estimating (rule 1): 3.5 bytes a
/// token.
pub const BYTES_PER_TOKEN_X2: usize = 7;

/// Bytes of a request body beside its messages and tool schemas (model,
/// stream, `max_tokens`, the keys), kept out of the input budget.
pub const ENVELOPE_BYTES: usize = 256;

/// Bytes a token, counting a request as sent (rule 6).
pub const WIRE_BYTES_PER_TOKEN: usize = 3;

/// The window assumed when neither the server nor the configuration says.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 32_768;

/// The context window of a run and what it leaves for input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextBudget {
    window: u32,
    output: u32,
}

impl ContextBudget {
    /// A window of `window` tokens, answers of up to `max_output` tokens
    /// (at most a quarter of the window: rule 2).
    pub fn new(window: u32, max_output: u32) -> Self {
        let window = window.max(256);
        Self {
            window,
            output: max_output.clamp(16, window / 4),
        }
    }

    /// The window, in tokens.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Tokens an answer may take (the request's `max_tokens`).
    pub fn output_tokens(&self) -> u32 {
        self.output
    }

    /// Bytes of messages and tool schemas a request may carry.
    pub fn input_bytes(&self) -> usize {
        ((self.window - self.output) as usize * BYTES_PER_TOKEN_X2 / 2)
            .saturating_sub(ENVELOPE_BYTES)
    }

    /// Bytes of JSON a request may carry, envelope and tool schemas
    /// included, counted as rule 6 counts; `squeeze` (at most 1) shrinks
    /// it after the server refused a request as too large (rule 7).
    pub fn wire_bytes(&self, squeeze: f64) -> usize {
        let full = (self.window - self.output) as usize * WIRE_BYTES_PER_TOKEN;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a byte count well inside f64's exact range, and the factor is in (0, 1]"
        )]
        let squeezed = (full as f64 * squeeze.clamp(0.05, 1.0)) as usize;
        squeezed
    }

    /// Estimated tokens of `bytes` bytes of a request (rounded up).
    pub fn tokens(bytes: usize) -> usize {
        (bytes * 2).div_ceil(BYTES_PER_TOKEN_X2)
    }

    /// Rule 3: `fixed` bytes (tool schemas and the run's first messages)
    /// must leave at least a quarter of the input budget for the work.
    pub fn check_start(&self, fixed: usize) -> Result<(), String> {
        let budget = self.input_bytes();
        if fixed + budget / 4 <= budget {
            return Ok(());
        }
        Err(format!(
            "the model's context window ({} tokens) is too small for this agent: its system \
             prompt, task and tool schemas take about {} tokens, and {} tokens are kept for \
             the answer; use a model with a larger window, give the agent fewer tools \
             (`agents.NAME.allowed_tools`), or set `llm.context_window` if the server's is \
             larger than it says",
            self.window,
            Self::tokens(fixed),
            self.output
        ))
    }
}

/// Bytes a message weighs in a request (its JSON, roughly: content, tool
/// calls' names and arguments, and a little for the envelope).
pub fn message_bytes(m: &Message) -> usize {
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 48)
        .sum();
    // JSON escaping can grow text (quotes, newlines, control bytes);
    // a tenth covers common code and prose.
    m.content.len() + m.content.len() / 10 + calls + 64
}

/// Bytes all of `messages` weigh.
pub fn messages_bytes(messages: &[Message]) -> usize {
    messages.iter().map(message_bytes).sum()
}

/// Makes `messages` fit in `budget` bytes, changing as little as it can:
///
/// 1. tool outputs before the last four are cut to 200 characters;
/// 2. then the longest message (never the first two: the system prompt and
///    the task) is cut to half, head and tail, down to 200 characters, again
///    and again;
/// 3. then whole old steps after the task are dropped, oldest first, and a
///    note says how many;
/// 4. last, the system prompt and the task are cut too.
///
/// A step is never split: an assistant message and the tool results that
/// answer it go together. Returns the index of the first message it
/// changed, `None` when everything already fitted.
pub fn fit(messages: &mut Vec<Message>, budget: usize) -> Option<usize> {
    if messages_bytes(messages) <= budget {
        return None;
    }
    let mut first = usize::MAX;
    // 1. Old tool outputs.
    let tools: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Tool)
        .map(|(i, _)| i)
        .collect();
    for &i in tools.iter().rev().skip(4) {
        if cut(&mut messages[i], 200) {
            first = first.min(i);
        }
        if messages_bytes(messages) <= budget {
            return Some(first);
        }
    }
    // 2. Halve the longest message after the first two.
    loop {
        let longest = messages
            .iter()
            .enumerate()
            .skip(2)
            .max_by_key(|(_, m)| m.content.len())
            .map(|(i, m)| (i, m.content.chars().count()));
        match longest {
            Some((i, chars)) if chars > 400 => {
                cut(&mut messages[i], chars / 2);
                first = first.min(i);
                if messages_bytes(messages) <= budget {
                    return Some(first);
                }
            }
            _ => break,
        }
    }
    // 3. Drop the oldest steps after the task; one note says how many.
    let mut dropped = 0;
    while messages_bytes(messages) > budget {
        // After the system prompt, the task and (once placed) the note.
        let start = (2 + usize::from(dropped > 0)).min(messages.len());
        let Some(step) = messages
            .iter()
            .skip(start)
            .position(|m| m.role == Role::Assistant)
            .map(|p| p + start)
        else {
            break;
        };
        let end = messages
            .iter()
            .skip(step + 1)
            .position(|m| m.role != Role::Tool)
            .map_or(messages.len(), |p| p + step + 1);
        // Keep the latest step: without it the model does not know where
        // it is.
        if end >= messages.len() {
            break;
        }
        messages.drain(step..end);
        dropped += 1;
        let note = Message::text(
            Role::User,
            format!("[{dropped} earlier steps were dropped to fit the model's context window]"),
        );
        if dropped == 1 {
            messages.insert(start.min(messages.len()), note);
        } else {
            messages[2] = note;
        }
        first = first.min(2);
    }
    // 4. The system prompt and the task.
    for i in 0..messages.len() {
        if messages_bytes(messages) <= budget {
            break;
        }
        let over = messages_bytes(messages) - budget;
        let chars = messages[i].content.chars().count();
        let keep = chars.saturating_sub(over).max(200);
        if keep < chars && cut(&mut messages[i], keep) {
            first = first.min(i);
        }
    }
    Some(first.min(messages.len()))
}

/// Bytes `messages` weigh as a request carries them: their JSON, and a
/// little more for each tool call's wire form (rule 6).
pub fn wire_messages_bytes(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |t| t.len()) + 40 * m.tool_calls.len() + 8)
        .sum()
}

/// Trims `messages` (as [`fit`] does) until, with `fixed` bytes of tool
/// schemas and envelope, their JSON fits in `limit` bytes (rule 6).
/// Returns the index of the first message it changed, `None` when they
/// already fitted; `Err` with the bytes still needed when even the
/// smallest conversation [`fit`] leaves is too large.
pub fn fit_wire(
    messages: &mut Vec<Message>,
    fixed: usize,
    limit: usize,
) -> Result<Option<usize>, usize> {
    let mut first: Option<usize> = None;
    for _ in 0..8 {
        let wire = wire_messages_bytes(messages) + fixed;
        if wire <= limit {
            return Ok(first);
        }
        // Scale fit's own estimate by how far the JSON is over, and a
        // little more so that the loop ends.
        let estimate = messages_bytes(messages);
        let room = limit.saturating_sub(fixed);
        let budget = (estimate.saturating_mul(room) / wire.max(1)).saturating_mul(9) / 10;
        match fit(messages, budget) {
            Some(i) => first = Some(first.map_or(i, |f| f.min(i))),
            None => break,
        }
    }
    let wire = wire_messages_bytes(messages) + fixed;
    if wire <= limit { Ok(first) } else { Err(wire) }
}

/// Whether `error` is the server saying the request exceeds its context
/// window (rule 7): the factor to shrink the budget by, from the server's
/// own counts when it gives them (llama.cpp's `n_prompt_tokens` and
/// `n_ctx`), else 0.75.
pub fn exceeds_context(error: &crate::llm::LlmError) -> Option<f64> {
    let crate::llm::LlmError::Http { status, body } = error else {
        return None;
    };
    let says = [
        "exceed_context_size_error",
        "exceeds the available context size",
        "context_length_exceeded",
        "maximum context length",
    ]
    .iter()
    .any(|s| body.contains(s));
    if !(says && (*status == 400 || *status == 413)) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let e = v.get("error").unwrap_or(&v);
    let factor = match (e["n_prompt_tokens"].as_f64(), e["n_ctx"].as_f64()) {
        (Some(prompt), Some(ctx)) if prompt > ctx && ctx > 0.0 => ctx / prompt * 0.9,
        _ => 0.75,
    };
    Some(factor)
}

/// Keeps the head and tail of `m`'s text, `max` characters in all; whether
/// it cut anything.
fn cut(m: &mut Message, max: usize) -> bool {
    if m.content.chars().count() > max {
        m.content = crate::runner::truncate_head_tail(&m.content, max);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ModelToolCall;

    fn step(n: usize, output: usize) -> Vec<Message> {
        vec![
            Message {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![ModelToolCall {
                    id: format!("c{n}"),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                }],
                tool_call_id: None,
            },
            Message::tool_result(format!("c{n}"), "x".repeat(output)),
        ]
    }

    fn conversation(steps: usize, output: usize) -> Vec<Message> {
        let mut m = vec![
            Message::text(Role::System, "You are careful."),
            Message::text(Role::User, "Do the task."),
        ];
        for n in 0..steps {
            m.extend(step(n, output));
        }
        m
    }

    /// Every result's call is in the conversation before it.
    fn consistent(m: &[Message]) -> bool {
        m.iter().enumerate().all(|(i, msg)| {
            msg.tool_call_id.as_ref().is_none_or(|id| {
                m[..i]
                    .iter()
                    .any(|a| a.tool_calls.iter().any(|c| &c.id == id))
            })
        })
    }

    #[test]
    fn fits_every_budget_without_splitting_a_step() {
        for (steps, output, budget) in [
            (3, 100, 100_000),
            (10, 5_000, 20_000),
            (30, 20_000, 12_000),
            (30, 20_000, 2_000),
            (1, 100_000, 3_000),
        ] {
            let mut m = conversation(steps, output);
            let before = messages_bytes(&m);
            let changed = fit(&mut m, budget);
            assert_eq!(
                changed.is_some(),
                before > budget,
                "{steps} steps, {budget}"
            );
            assert!(
                messages_bytes(&m) <= budget || m.len() <= 4,
                "{steps} steps of {output} in {budget}: {}",
                messages_bytes(&m)
            );
            assert!(consistent(&m), "{steps} steps in {budget}");
            assert_eq!(m[1].content, "Do the task.", "the task stays");
            assert_eq!(m.last().unwrap().role, Role::Tool, "the latest step stays");
        }
    }

    #[test]
    fn budgets() {
        let b = ContextBudget::new(4096, 4096);
        assert_eq!(b.output_tokens(), 1024);
        assert_eq!(b.input_bytes(), 3072 * 7 / 2 - 256);
        assert!(b.check_start(1000).is_ok());
        let err = b.check_start(8000).unwrap_err();
        assert!(
            err.contains("4096 tokens") && err.contains("allowed_tools"),
            "{err}"
        );
    }
}
