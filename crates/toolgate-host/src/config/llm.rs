//! `llm:` — the model `toolgate run` talks to.

use serde::{Deserialize, Serialize};

/// Which wire format the model server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmProvider {
    /// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM,
    /// LM Studio, `OpenRouter`).
    #[default]
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// `llm:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmSection {
    /// The wire format. Default: openai.
    pub provider: LlmProvider,
    /// The model name. Required by `toolgate run`.
    pub model: Option<String>,
    /// The server's base URL. Default: `https://api.openai.com/v1`
    /// (`https://api.anthropic.com/v1` for anthropic).
    pub base_url: Option<String>,
    /// The environment variable that holds the API key (never the key
    /// itself). Default: none (local servers need no key).
    pub api_key_env: Option<String>,
    /// Seconds the model server may stay silent: before the first byte of
    /// an answer, and between two reads of a streamed one. Default: 120.
    pub timeout: u64,
    /// Retries on 429, 5xx and connection errors. Default: 3.
    pub max_retries: u32,
    /// Stream answers. Default: true.
    pub stream: bool,
    /// `max_tokens` per answer. Default: 4096 (at most a quarter of the
    /// context window is kept for an answer).
    pub max_tokens: u32,
    /// Sampling temperature (0 to 2) for every request. Default (omitted
    /// or `null`): 0.2, low so that tool calls come out exact (see
    /// [`toolgate_agent::DEFAULT_TEMPERATURE`]); `server`: none is sent,
    /// the server's own default applies.
    pub temperature: Temperature,
    /// The model's context window in tokens, when the server does not say
    /// (llama.cpp `/props`, Ollama `/api/show` and vLLM's model list do;
    /// what they say wins). Default: 32768. Every request is kept inside
    /// it: compression, tool-output cuts and the answer's `max_tokens`
    /// scale with it.
    pub context_window: Option<u32>,
    /// USD per million input tokens, for cost reports. Default: none.
    pub input_price_per_mtok: Option<f64>,
    /// USD per million output tokens. Default: none.
    pub output_price_per_mtok: Option<f64>,
    /// Cost budget of one run in USD; needs the prices. Default: none.
    pub budget_usd: Option<f64>,
    /// `auto` (default): tool calls a model writes as text (bare JSON,
    /// `<tool_call>` tags, …) are recovered and run through the gate; `off`:
    /// such text is the model's answer.
    pub text_tool_calls: TextToolCalls,
    /// `auto` (default): when the server is one that constrains replies to
    /// a JSON schema (llama.cpp, vLLM, Ollama, as the probe before a run
    /// recognises it), each reply that may call tools is held to one
    /// well-formed call of an offered tool or a final answer; `off`:
    /// tools are offered as `tools` and text recovery catches calls
    /// written as text.
    pub constrain: Constrain,
    /// Providers tried in order when the model fails after its retries, or
    /// takes no tools and the step needs them (seed 002's
    /// `LLMClientWithFallback`). Default: none.
    pub fallback: Vec<toolgate_agent::FallbackEntry>,
}

/// `llm.constrain`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Constrain {
    /// Where the server supports it.
    #[default]
    Auto,
    /// Never.
    Off,
}

/// `llm.text_tool_calls`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextToolCalls {
    /// Recover them.
    #[default]
    Auto,
    /// Leave them as text.
    Off,
}

impl LlmSection {
    /// Points the section at a known provider (`--provider`): its wire
    /// format, URL and key variable, and its model where none is
    /// configured.
    pub(crate) fn use_provider(&mut self, kind: crate::ProviderKind) {
        self.provider = kind.wire();
        if let Some(url) = kind.base_url() {
            self.base_url = Some(url.to_owned());
        }
        self.api_key_env = kind.api_key_env().map(str::to_owned);
        if self.model.is_none() {
            self.model = kind.model().map(str::to_owned);
        }
    }
}

impl Default for LlmSection {
    fn default() -> Self {
        Self {
            provider: LlmProvider::Openai,
            model: None,
            base_url: None,
            api_key_env: None,
            timeout: 120,
            max_retries: 3,
            stream: true,
            max_tokens: 4096,
            temperature: Temperature::default(),
            context_window: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            budget_usd: None,
            text_tool_calls: TextToolCalls::Auto,
            constrain: Constrain::Auto,
            fallback: Vec::new(),
        }
    }
}

/// `llm.temperature`: a number from 0 to 2 (`null`: toolgate's default),
/// or `server` (none sent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Temperature {
    /// This temperature is sent.
    Value(f32),
    /// None is sent: the server's own default applies.
    Server,
}

impl Default for Temperature {
    fn default() -> Self {
        Self::Value(toolgate_agent::DEFAULT_TEMPERATURE)
    }
}

impl Temperature {
    /// The temperature requests carry, if any.
    pub fn sent(self) -> Option<f32> {
        match self {
            Self::Value(t) => Some(t),
            Self::Server => None,
        }
    }
}

impl Serialize for Temperature {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // As written (0.2, not 0.2000000029…): the shortest decimal
            // that reads back as the same f32.
            Self::Value(t) => s.serialize_f64(t.to_string().parse().unwrap_or(f64::from(*t))),
            Self::Server => s.serialize_str("server"),
        }
    }
}

impl<'de> Deserialize<'de> for Temperature {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f32),
            Word(String),
        }
        match Option::<Raw>::deserialize(d)? {
            None => Ok(Self::default()),
            Some(Raw::Number(t)) if (0.0..=2.0).contains(&t) => Ok(Self::Value(t)),
            Some(Raw::Number(t)) => Err(serde::de::Error::custom(format!(
                "temperature {t} is out of range: use a number from 0 to 2 (0 to 0.2 suits small local models), or `server` to send none"
            ))),
            Some(Raw::Word(w)) if w == "server" => Ok(Self::Server),
            Some(Raw::Word(w)) => Err(serde::de::Error::custom(format!(
                "temperature `{w}` is not a number: use a number from 0 to 2, null for toolgate's default (0.2), or `server` to send none"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProviderKind;

    /// The kind, the configured model; then the wire format, URL, key
    /// variable and model after it.
    type Case = (
        ProviderKind,
        Option<&'static str>,
        LlmProvider,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
    );

    #[test]
    fn temperature_case_table() {
        // (llm section, the temperature sent, or the error's words)
        let cases: &[(&str, Result<Option<f32>, &str>)] = &[
            ("{}", Ok(Some(0.2))),
            ("temperature: null", Ok(Some(0.2))),
            ("temperature: 0", Ok(Some(0.0))),
            ("temperature: 0.7", Ok(Some(0.7))),
            ("temperature: server", Ok(None)),
            ("temperature: 3", Err("out of range")),
            ("temperature: hot", Err("not a number")),
        ];
        for (yaml, expected) in cases {
            let got = serde_yaml_ng::from_str::<LlmSection>(yaml)
                .map(|l| l.temperature.sent())
                .map_err(|e| e.to_string());
            match (expected, &got) {
                (Ok(t), Ok(sent)) => assert_eq!(sent, t, "{yaml}"),
                (Err(words), Err(e)) => assert!(e.contains(words), "{yaml}: {e}"),
                _ => panic!("{yaml}: {got:?}"),
            }
        }
        // The default as the documentation shows it, and `server` kept.
        let shown = serde_yaml_ng::to_string(&Temperature::default()).unwrap();
        assert_eq!(shown.trim(), "0.2");
        let server = serde_yaml_ng::to_string(&Temperature::Server).unwrap();
        assert_eq!(server.trim(), "server");
    }

    #[test]
    fn a_provider_sets_its_keys_and_keeps_a_configured_model() {
        // Over a section with a URL and key variable of its own: the wire
        // format, URL, key variable and (where none is set) model after
        // `--provider`.
        let cases: &[Case] = &[
            (
                ProviderKind::Anthropic,
                None,
                LlmProvider::Anthropic,
                "https://api.anthropic.com/v1",
                Some("ANTHROPIC_API_KEY"),
                Some("claude-sonnet-4-5"),
            ),
            (
                ProviderKind::Openai,
                Some("mine"),
                LlmProvider::Openai,
                "https://api.openai.com/v1",
                Some("OPENAI_API_KEY"),
                Some("mine"),
            ),
            (
                ProviderKind::Ollama,
                None,
                LlmProvider::Openai,
                "http://127.0.0.1:11434/v1",
                None,
                None,
            ),
            (
                ProviderKind::OpenaiCompatible,
                Some("mine"),
                LlmProvider::Openai,
                "http://configured/v1",
                None,
                Some("mine"),
            ),
        ];
        for &(kind, model, wire, url, key, expected_model) in cases {
            let mut llm = LlmSection {
                provider: LlmProvider::Anthropic,
                model: model.map(str::to_owned),
                base_url: Some("http://configured/v1".to_owned()),
                api_key_env: Some("MY_KEY".to_owned()),
                ..LlmSection::default()
            };
            llm.use_provider(kind);
            assert_eq!(llm.provider, wire, "{kind}");
            assert_eq!(llm.base_url.as_deref(), Some(url), "{kind}");
            assert_eq!(llm.api_key_env.as_deref(), key, "{kind}");
            assert_eq!(llm.model.as_deref(), expected_model, "{kind}");
        }
    }
}
