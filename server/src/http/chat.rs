//! Seed 002's `POST /api/chat`: the conversation goes to the optional LLM endpoint
//! (`quarry serve --llm-url`); with `useRag`, the RAG collection's best chunks for the last
//! user message are put into the system prompt in the seed's format and returned as
//! `ragSources`. `"stream": true` (or `Accept: text/event-stream`) answers with server-sent
//! events: one `{"type": "token", "content"}` per piece of the answer, then `{"type":
//! "done", ...}` holding the whole response (or `{"type": "error", "error", "message"}`).
//! Errors come in seed 002's shape; without an LLM endpoint the route answers 503 naming the
//! setting. Conversations are not stored: `conversationId` is echoed, or a new one is given.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use super::rag::{body_object, rag_filters, rag_search, top_k};
use super::search::SearchParts;
use crate::app::HttpSettings;
use crate::http::api_error::{ApiError, RagError};
use crate::llm::{ChatCall, ChatMessage, LlmClient};
use crate::search::filter::Filters;
use crate::search::result::ChunkResult;

/// Characters of a chunk a `ragSources` entry previews.
const PREVIEW_CHARS: usize = 200;

/// A `POST /api/chat` body, validated.
struct ChatBody {
    model: Option<String>,
    messages: Vec<ChatMessage>,
    system: Option<String>,
    options: Map<String, Value>,
    conversation_id: Option<String>,
    use_rag: bool,
    rag_top_k: usize,
    rag_filters: Filters,
    stream: bool,
}

fn optional_string(object: &Map<String, Value>, field: &str) -> Result<Option<String>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::field(field, format!("{field} must be a string"))),
    }
}

fn optional_bool(object: &Map<String, Value>, field: &str) -> Result<bool, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::field(field, format!("{field} must be a boolean"))),
    }
}

fn messages(object: &Map<String, Value>) -> Result<Vec<ChatMessage>, ApiError> {
    let items = match object.get("messages") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            return Err(ApiError::field("messages", "messages must be a non-empty array"))
        }
        Some(_) => return Err(ApiError::field("messages", "messages must be an array")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = format!("messages[{i}]");
            let text = |key: &str| match item.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(ApiError::field(
                    &format!("{field}.{key}"),
                    format!("{field}.{key} must be a string"),
                )),
            };
            Ok(ChatMessage {
                role: text("role")?,
                content: text("content")?,
            })
        })
        .collect()
}

fn parse(body: &Bytes, headers: &HeaderMap) -> Result<ChatBody, ApiError> {
    let object = body_object(body)?;
    let options = match object.get("options") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(options)) => options.clone(),
        Some(_) => return Err(ApiError::field("options", "options must be an object")),
    };
    let wants_events = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"));
    Ok(ChatBody {
        model: optional_string(&object, "model")?,
        messages: messages(&object)?,
        system: optional_string(&object, "system")?,
        options,
        conversation_id: optional_string(&object, "conversationId")?,
        use_rag: optional_bool(&object, "useRag")?,
        rag_top_k: top_k(object.get("ragTopK"), "ragTopK")?,
        rag_filters: rag_filters(object.get("ragFilters"), "ragFilters")?,
        stream: optional_bool(&object, "stream")? || wants_events,
    })
}

/// The system prompt with the retrieved chunks before it, in seed 002's format.
fn with_context(chunks: &[ChunkResult], system: Option<&str>) -> String {
    let mut prompt = String::from("=== Retrieved Context ===\n");
    for (i, chunk) in chunks.iter().enumerate() {
        if i > 0 {
            prompt.push('\n');
        }
        prompt.push_str(&format!("[Source: {}]\n{}\n", title_of(chunk), chunk.content));
    }
    prompt.push_str("=== End Context ===\n\n");
    prompt.push_str(system.unwrap_or_default());
    prompt
}

fn title_of(chunk: &ChunkResult) -> String {
    match chunk.metadata.get("title").and_then(Value::as_str) {
        Some(title) if !title.is_empty() => title.to_string(),
        _ => chunk.file_name.clone(),
    }
}

/// A `ragSources` entry: the chunk's first 200 characters, its score, source and title.
fn source_of(chunk: &ChunkResult) -> Value {
    json!({
        "text": chunk.content.chars().take(PREVIEW_CHARS).collect::<String>(),
        "score": chunk.score,
        "source": chunk.metadata.get("source").cloned().unwrap_or(Value::Null),
        "title": title_of(chunk),
    })
}

/// What the LLM is asked, with the sources put into it.
async fn prepare(
    parts: &SearchParts,
    settings: &HttpSettings,
    body: ChatBody,
) -> Result<(ChatCall, Vec<Value>, ChatBody), ApiError> {
    let mut system = body.system.clone();
    let mut sources = Vec::new();
    if body.use_rag {
        let query = body
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.clone())
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| ApiError::field("messages", "useRag needs a user message with text to search for"))?;
        let chunks = rag_search(parts, settings, &query, body.rag_top_k, 0.0, body.rag_filters.clone()).await?;
        if !chunks.is_empty() {
            system = Some(with_context(&chunks, body.system.as_deref()));
        }
        sources = chunks.iter().map(source_of).collect();
    }
    let mut messages = Vec::with_capacity(body.messages.len() + 1);
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        messages.push(ChatMessage {
            role: "system".into(),
            content: system,
        });
    }
    messages.extend(body.messages.iter().cloned());
    let call = ChatCall {
        model: body.model.clone(),
        messages,
        options: body.options.clone(),
    };
    Ok((call, sources, body))
}

fn response_body(answer: String, conversation_id: String, rag_used: bool, sources: Vec<Value>) -> Value {
    json!({
        "status": "success",
        "data": { "message": answer, "conversationId": conversation_id },
        "ragUsed": rag_used,
        "ragSources": sources,
    })
}

fn the_llm(settings: &HttpSettings) -> Result<Arc<LlmClient>, ApiError> {
    settings.llm.clone().ok_or_else(|| {
        ApiError::Unavailable(
            "POST /api/chat needs an LLM endpoint: start quarry serve with --llm-url URL (an OpenAI-compatible API) and --llm-model NAME (its key in QUARRY_LLM_API_KEY)".into(),
        )
    })
}

/// `POST /api/chat`.
pub async fn chat(
    State(parts): State<SearchParts>,
    State(settings): State<Arc<HttpSettings>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, RagError> {
    let body = parse(&body, &headers)?;
    let llm = the_llm(&settings)?;
    let (call, sources, body) = prepare(&parts, &settings, body).await?;
    let conversation_id = body
        .conversation_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    if !body.stream {
        let answer = llm.complete(&call).await.map_err(ApiError::from)?;
        return Ok(Json(response_body(answer, conversation_id, body.use_rag, sources)).into_response());
    }
    Ok(stream_answer(llm, call, conversation_id, body.use_rag, sources))
}

/// The answer as server-sent events (see the module).
fn stream_answer(
    llm: Arc<LlmClient>,
    call: ChatCall,
    conversation_id: String,
    rag_used: bool,
    sources: Vec<Value>,
) -> Response {
    let (events, mut received) = tokio::sync::mpsc::channel::<Event>(64);
    tokio::spawn(async move {
        let (pieces, mut piece_received) = tokio::sync::mpsc::channel::<String>(64);
        let forward = {
            let events = events.clone();
            async move {
                while let Some(piece) = piece_received.recv().await {
                    let event = Event::default().data(json!({ "type": "token", "content": piece }).to_string());
                    if events.send(event).await.is_err() {
                        break;
                    }
                }
            }
        };
        let (answer, ()) = tokio::join!(llm.stream(&call, pieces), forward);
        let last = match answer {
            Ok(answer) => {
                let mut done = response_body(answer, conversation_id, rag_used, sources);
                done["type"] = "done".into();
                done
            }
            Err(e) => {
                let error = ApiError::from(e);
                let mut body = error.body(crate::http::api_error::Surface::Rag);
                body["type"] = "error".into();
                body
            }
        };
        let _ = events.send(Event::default().data(last.to_string())).await;
    });
    let stream = futures::stream::poll_fn(move |cx| received.poll_recv(cx).map(|e| e.map(Ok::<_, Infallible>)));
    Sse::new(stream).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(title: &str, content: &str) -> ChunkResult {
        let mut chunk: ChunkResult = serde_json::from_value(json!({
            "chunk_id": "d-0", "content": content, "score": 0.5, "file_name": "f.txt",
            "page_number": null, "display_citation": "", "content_type": "text",
            "content_subtype": null, "structured_data": null, "image_storage_uri": null,
            "image_url": null, "metadata": {}
        }))
        .unwrap();
        chunk.metadata.insert("title".into(), title.into());
        chunk
    }

    #[test]
    fn the_context_is_in_the_seeds_format() {
        let chunks = [chunk("Guide", "Step one."), chunk("", "Step two.")];
        assert_eq!(
            with_context(&chunks, Some("Be brief.")),
            "=== Retrieved Context ===\n[Source: Guide]\nStep one.\n\n[Source: f.txt]\nStep two.\n=== End Context ===\n\nBe brief."
        );
        let long = chunk("T", &"é".repeat(300));
        assert_eq!(source_of(&long)["text"].as_str().unwrap().chars().count(), 200);
    }
}
