//! Seed 001's LLM stages around a /v1 search, opt-in per request through the LLM endpoint
//! (`quarry serve --llm-url`): `"rewrite_query": true` has the LLM rewrite the query into a
//! standalone question from the conversation before it (`"history": [{role, content}]`), and
//! the search runs with that (`rewritten_query` in the result); `"compress": true` has it keep,
//! of each returned chunk, only the sentences that answer the query (the chunk's text becomes
//! those; `metadata.uncompressed_content` keeps the original), dropping chunks with none.
//! Without an LLM endpoint either asks for a 503 naming the setting.

use futures::StreamExt;
use serde_json::{Map, Value};

use crate::http::api_error::ApiError;
use crate::llm::{ChatCall, ChatMessage, LlmClient};
use crate::search::result::RetrievalResult;

/// Seed 001's instruction for the rewrite.
pub const REWRITE_INSTRUCTION: &str = "Rewrite the 'user' query to be a standalone question, incorporating context from the chat history. Answer with the rewritten question only.";

/// Seed 001's instruction for the compression.
pub const COMPRESS_INSTRUCTION: &str = "Extract only the sentences from the document text that directly answer or are relevant to the query. If no sentences are relevant, return an empty string.";

/// Chunks compressed at once.
const COMPRESS_AT_ONCE: usize = 8;

/// The LLM stages a search body asks for, taken out of it (the rest is the search request).
#[derive(Debug, Default)]
pub struct LlmStages {
    pub rewrite: bool,
    pub history: Vec<ChatMessage>,
    pub compress: bool,
}

impl LlmStages {
    pub fn any(&self) -> bool {
        self.rewrite || self.compress
    }
}

fn flag(body: &mut Map<String, Value>, field: &str) -> Result<bool, ApiError> {
    match body.remove(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(ApiError::BadRequest(format!("{field} must be true or false"))),
    }
}

/// Takes `rewrite_query`, `history` and `compress` out of a search body.
pub fn take_llm_stages(body: &mut Map<String, Value>) -> Result<LlmStages, ApiError> {
    let rewrite = flag(body, "rewrite_query")?;
    let compress = flag(body, "compress")?;
    let history = match body.remove("history") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match (item.get("role"), item.get("content")) {
                (Some(Value::String(role)), Some(Value::String(content))) => Ok(ChatMessage {
                    role: role.clone(),
                    content: content.clone(),
                }),
                _ => Err(ApiError::BadRequest(
                    "history must be a list of {\"role\", \"content\"} strings".into(),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ApiError::BadRequest("history must be a list of messages".into())),
    };
    if !history.is_empty() && !rewrite {
        return Err(ApiError::BadRequest(
            "history is read only to rewrite the query: send \"rewrite_query\": true with it".into(),
        ));
    }
    Ok(LlmStages {
        rewrite,
        history,
        compress,
    })
}

/// The LLM, or the 503 that names the missing setting.
pub fn llm_for(llm: Option<&std::sync::Arc<LlmClient>>) -> Result<std::sync::Arc<LlmClient>, ApiError> {
    llm.cloned().ok_or_else(|| {
        ApiError::Unavailable(
            "rewrite_query and compress need an LLM endpoint: start quarry serve with --llm-url URL (an OpenAI-compatible API) and --llm-model NAME".into(),
        )
    })
}

fn ask(system: &str, user: String) -> ChatCall {
    ChatCall {
        model: None,
        messages: vec![
            ChatMessage {
                role: "system".into(),
                content: system.into(),
            },
            ChatMessage {
                role: "user".into(),
                content: user,
            },
        ],
        options: Map::from_iter([("temperature".to_string(), Value::from(0.0))]),
    }
}

/// The query as a standalone question (the original when the LLM answers nothing).
pub async fn rewrite(llm: &LlmClient, query: &str, history: &[ChatMessage]) -> Result<String, ApiError> {
    let mut prompt = String::from("Chat history:\n");
    for message in history {
        prompt.push_str(&format!("{}: {}\n", message.role, message.content));
    }
    prompt.push_str(&format!("\nUser query: {query}"));
    let answer = llm.complete(&ask(REWRITE_INSTRUCTION, prompt)).await?;
    let answer = answer.trim();
    Ok(if answer.is_empty() { query } else { answer }.to_string())
}

/// Each chunk of `result` cut to the sentences the LLM finds relevant to `query`; chunks with
/// none are dropped.
pub async fn compress(llm: &LlmClient, query: &str, result: &mut RetrievalResult) -> Result<(), ApiError> {
    let calls: Vec<ChatCall> = result
        .chunks
        .iter()
        .map(|chunk| ask(COMPRESS_INSTRUCTION, format!("{query}\n\n{}", chunk.content)))
        .collect();
    let answers: Vec<Result<String, crate::ServerError>> = futures::stream::iter(calls)
        .map(|call| llm.complete_owned(call))
        .buffered(COMPRESS_AT_ONCE)
        .collect()
        .await;
    let mut kept = Vec::with_capacity(result.chunks.len());
    for (mut chunk, answer) in std::mem::take(&mut result.chunks).into_iter().zip(answers) {
        let answer = answer?;
        let answer = answer.trim();
        if answer.is_empty() {
            continue;
        }
        let original = std::mem::replace(&mut chunk.content, answer.to_string());
        chunk.metadata.insert("uncompressed_content".into(), original.into());
        kept.push(chunk);
    }
    result.chunks = kept;
    Ok(())
}
