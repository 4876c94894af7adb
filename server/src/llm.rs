//! The optional LLM endpoint: any server that speaks OpenAI's chat completions (vLLM,
//! llama.cpp's server, Ollama, a hosted API) at `--llm-url`. Requests time out, a refused
//! connection, a 429 or a 5xx is retried with backoff, answers stream as server-sent events
//! when asked, and every failure says which endpoint failed and how ([`ServerError`]'s `Llm*`).

use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::ServerError;

/// Where the LLM is and how to call it (`quarry serve --llm-url --llm-model`, QUARRY_LLM_API_KEY).
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// The API's base URL, such as `http://127.0.0.1:8000/v1` (requests go to `<url>/chat/completions`).
    pub url: String,
    /// The model asked for when a request names none.
    pub model: String,
    pub api_key: Option<String>,
    /// How long one attempt may take (a stream: between two pieces of the answer).
    pub timeout: Duration,
    /// Attempts after the first when the endpoint refuses, is busy (429) or fails (5xx).
    pub retries: u32,
    /// Requests in flight at most when documents are summarized (`--summaries llm`).
    pub concurrency: usize,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// What is asked of the LLM.
#[derive(Debug, Clone, Default)]
pub struct ChatCall {
    /// None: the settings' model.
    pub model: Option<String>,
    pub messages: Vec<ChatMessage>,
    /// Sampling options passed on: temperature, top_p, max_tokens (or Ollama's num_predict),
    /// stop, seed, presence_penalty, frequency_penalty.
    pub options: Map<String, Value>,
}

/// The options of a request an OpenAI-compatible endpoint takes, by their OpenAI names.
fn openai_options(options: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in options {
        let name = match key.as_str() {
            "num_predict" => "max_tokens",
            "temperature" | "top_p" | "max_tokens" | "stop" | "seed" | "presence_penalty" | "frequency_penalty" => key,
            _ => continue,
        };
        out.insert(name.to_string(), value.clone());
    }
    out
}

/// A client of one OpenAI-compatible endpoint.
pub struct LlmClient {
    settings: LlmSettings,
    http: reqwest::Client,
}

impl LlmClient {
    pub fn new(settings: LlmSettings) -> Result<Self, ServerError> {
        let http = reqwest::Client::builder()
            .connect_timeout(settings.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ServerError::LlmUnreachable {
                url: settings.url.clone(),
                reason: e.to_string(),
            })?;
        Ok(Self { settings, http })
    }

    pub fn url(&self) -> &str {
        &self.settings.url
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.settings.url.trim_end_matches('/'))
    }

    fn body(&self, call: &ChatCall, stream: bool) -> Value {
        let mut body = openai_options(&call.options);
        body.insert(
            "model".into(),
            call.model.clone().unwrap_or_else(|| self.settings.model.clone()).into(),
        );
        body.insert("messages".into(), json!(call.messages));
        body.insert("stream".into(), stream.into());
        Value::Object(body)
    }

    /// Sends `body`, retrying what may pass on a second try; the response once its status is a success.
    async fn send(&self, body: &Value) -> Result<reqwest::Response, ServerError> {
        let url = self.settings.url.clone();
        let mut attempt = 0;
        loop {
            let mut request = self
                .http
                .post(self.endpoint())
                .json(body)
                .timeout(self.settings.timeout);
            if let Some(key) = &self.settings.api_key {
                request = request.bearer_auth(key);
            }
            let failure = match request.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let text = response.text().await.unwrap_or_default();
                    let body: String = text.chars().take(300).collect();
                    let again = status == 429 || status >= 500;
                    (
                        again,
                        ServerError::LlmStatus {
                            url: url.clone(),
                            status,
                            body,
                        },
                    )
                }
                Err(e) if e.is_timeout() => {
                    let secs = self.settings.timeout.as_secs();
                    (false, ServerError::LlmTimeout { url: url.clone(), secs })
                }
                Err(e) => (
                    e.is_connect(),
                    ServerError::LlmUnreachable {
                        url: url.clone(),
                        reason: e.to_string(),
                    },
                ),
            };
            match failure {
                (true, _) if attempt < self.settings.retries => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(250 << attempt.min(6))).await;
                }
                (_, error) => return Err(error),
            }
        }
    }

    /// The LLM's answer to `call`.
    pub async fn complete(&self, call: &ChatCall) -> Result<String, ServerError> {
        let response = self.send(&self.body(call, false)).await?;
        let answer: Value = response.json().await.map_err(|e| self.unreadable(e))?;
        answer["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| self.unreadable("no choices[0].message.content"))
    }

    /// [`Self::complete`] of a call it owns (for calls made side by side).
    pub async fn complete_owned(&self, call: ChatCall) -> Result<String, ServerError> {
        self.complete(&call).await
    }

    /// The LLM's answer to `call`, streamed: each piece goes to `pieces` as it arrives; the
    /// whole answer is returned at the end.
    pub async fn stream(
        &self,
        call: &ChatCall,
        pieces: tokio::sync::mpsc::Sender<String>,
    ) -> Result<String, ServerError> {
        let response = self.send(&self.body(call, true)).await?;
        let mut bytes = response.bytes_stream();
        let (mut pending, mut answer) = (Vec::<u8>::new(), String::new());
        loop {
            let next = tokio::time::timeout(self.settings.timeout, bytes.next()).await;
            let chunk = match next {
                Err(_) => {
                    return Err(ServerError::LlmTimeout {
                        url: self.settings.url.clone(),
                        secs: self.settings.timeout.as_secs(),
                    })
                }
                Ok(None) => return Ok(answer),
                Ok(Some(chunk)) => chunk.map_err(|e| self.unreadable(e))?,
            };
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                let Some(data) = line.trim().strip_prefix("data:").map(str::trim) else {
                    continue;
                };
                if data == "[DONE]" {
                    return Ok(answer);
                }
                let event: Value = serde_json::from_str(data).map_err(|e| self.unreadable(e))?;
                if let Some(piece) = event["choices"][0]["delta"]["content"].as_str() {
                    answer.push_str(piece);
                    // A client that went away stops nothing but its own events.
                    let _ = pieces.send(piece.to_string()).await;
                }
            }
        }
    }

    fn unreadable(&self, reason: impl ToString) -> ServerError {
        ServerError::LlmAnswer {
            url: self.settings.url.clone(),
            reason: reason.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_pass_on_by_their_openai_names() {
        let options: Map<String, Value> = serde_json::from_value(json!({
            "temperature": 0.2, "num_predict": 64, "mirostat": 2, "stop": ["\n"]
        }))
        .unwrap();
        let out = openai_options(&options);
        assert_eq!(
            Value::Object(out),
            json!({"temperature": 0.2, "max_tokens": 64, "stop": ["\n"]})
        );
    }
}
