//! Seed 002's POST /api/chat over real HTTP, against a small OpenAI-compatible chat server the
//! test starts on loopback (no LLM runs on these machines): the request and response shapes,
//! the RAG context in the seed's format, streaming as server-sent events, a timeout, an LLM
//! that fails (retried, then a 502 naming it), and a server without an LLM (503); and seed
//! 001's query rewriting and contextual compression around a /v1 search.

use crate::http_common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use http_common::{options, TestServer};
use quarry_server::llm::LlmSettings;
use serde_json::{json, Value};

/// What the stand-in LLM received, and how often it failed on purpose.
#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<Value>>,
    flaky_failures: AtomicUsize,
}

/// The stand-in's answer: which model it was asked for, then the system prompt's first line
/// and the last message, so a test can see what quarry sent. The model name picks a behaviour:
/// `slow` answers after 3 s, `broken` always fails with a 500, `flaky` fails once.
async fn completions(State(seen): State<Arc<Seen>>, Json(body): Json<Value>) -> axum::response::Response {
    seen.requests.lock().unwrap().push(body.clone());
    let model = body["model"].as_str().unwrap_or_default().to_string();
    match model.as_str() {
        "slow" => tokio::time::sleep(Duration::from_secs(3)).await,
        "broken" => return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "model crashed").into_response(),
        "flaky" if seen.flaky_failures.fetch_add(1, Ordering::SeqCst) == 0 => {
            return (axum::http::StatusCode::SERVICE_UNAVAILABLE, "warming up").into_response()
        }
        _ => {}
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if let Some(answer) = seed_001_stage(&messages) {
        let reply = json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer } }] });
        return Json(reply).into_response();
    }
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str())
        .map(|s| s.lines().next().unwrap_or_default().to_string())
        .unwrap_or_else(|| "none".into());
    let last = messages.last().and_then(|m| m["content"].as_str()).unwrap_or_default();
    let answer = format!("[{model}] system: {system}; last: {last}");
    if body["stream"] == true {
        let pieces: Vec<String> = answer.split_inclusive(' ').map(str::to_string).collect();
        let mut events = String::new();
        for piece in pieces {
            let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": piece } }] });
            events.push_str(&format!("data: {chunk}\n\n"));
        }
        events.push_str("data: [DONE]\n\n");
        return ([(axum::http::header::CONTENT_TYPE, "text/event-stream")], events).into_response();
    }
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": model,
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 }
    }))
    .into_response()
}

/// The stand-in's answers to seed 001's two instructions: a rewrite makes the green-tea
/// question standalone when the history speaks of green tea; a compression keeps the sentences
/// of the chunk that share a word of four letters or more with the query.
fn seed_001_stage(messages: &[Value]) -> Option<String> {
    let system = messages.first()?["content"].as_str()?;
    let user = messages.get(1)?["content"].as_str()?;
    if system.starts_with("Rewrite the 'user' query") {
        let query = user.rsplit_once("User query: ")?.1;
        return Some(match user.contains("green tea") {
            true => "How long should green tea steep?".to_string(),
            false => query.to_string(),
        });
    }
    if system.starts_with("Extract only the sentences") {
        let (query, text) = user.split_once("\n\n")?;
        let words = |s: &str| -> Vec<String> {
            s.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 4)
                .map(str::to_lowercase)
                .collect()
        };
        let asked = words(query);
        let kept: Vec<&str> = text
            .split_inclusive('.')
            .filter(|sentence| words(sentence).iter().any(|w| asked.contains(w)))
            .map(str::trim)
            .collect();
        return Some(kept.join(" "));
    }
    None
}

/// Starts the stand-in LLM; its base URL (`http://127.0.0.1:PORT/v1`).
async fn start_llm(seen: Arc<Seen>) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(seen);
    http_common::serve_stand_in(app).await
}

fn llm_settings(url: &str) -> LlmSettings {
    LlmSettings {
        url: url.to_string(),
        model: "default-model".into(),
        api_key: Some("sk-test".into()),
        timeout: Duration::from_secs(1),
        retries: 2,
        concurrency: 8,
    }
}

/// The stand-in LLM and a quarry server using it (its data folder lives as long as the handle).
async fn start_with_llm() -> (Arc<Seen>, String, tempfile::TempDir, TestServer) {
    let seen = Arc::new(Seen::default());
    let url = start_llm(seen.clone()).await;
    let data = tempfile::tempdir().unwrap();
    let mut serve = options(data.path());
    serve.llm = Some(llm_settings(&url));
    let server = TestServer::start(serve).await;
    (seen, url, data, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chat_with_and_without_rag_streamed_and_when_the_llm_fails() {
    let (seen, url, _data, server) = start_with_llm().await;
    let ingest = |path: &str, title: &str, text: &str| json!({ "source": "wiki", "path": path, "title": title, "text": text, "tags": ["ops"] });
    for (path, title, text) in [
        (
            "/gpu",
            "GPUs",
            "GPUs run thousands of threads in parallel to multiply matrices.",
        ),
        (
            "/tea",
            "Tea",
            "Green tea is steeped at about eighty degrees for two minutes.",
        ),
    ] {
        let (status, body) = server.post("/api/rag/ingest", ingest(path, title, text)).await;
        assert_eq!(status, 200, "{body}");
    }

    // Without useRag: the conversation goes as it is, with the default model; the V1/V2 shape.
    let (status, answer) = server
        .post(
            "/api/chat",
            json!({ "messages": [{ "role": "user", "content": "Hi" }], "conversationId": "c-1", "options": { "temperature": 0.1, "num_predict": 32 } }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({
            "status": "success",
            "data": { "message": "[default-model] system: none; last: Hi", "conversationId": "c-1" },
            "ragUsed": false,
            "ragSources": []
        })
    );
    let sent = seen.requests.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (sent["temperature"].clone(), sent["max_tokens"].clone()),
        (json!(0.1), json!(32))
    );
    assert_eq!(sent["stream"], false);

    // With useRag: the last user message is the query; the chunks go into the system prompt in
    // the seed's format, before the request's own system prompt.
    let (status, answer) = server
        .post(
            "/api/chat",
            json!({
                "model": "llama2",
                "system": "Answer in one sentence.",
                "messages": [{ "role": "user", "content": "How long should green tea steep?" }],
                "useRag": true, "ragTopK": 1, "ragFilters": { "source": "wiki", "tags": ["ops"] }
            }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ragUsed"], true);
    assert_eq!(
        answer["ragSources"],
        json!([{ "text": "Green tea is steeped at about eighty degrees for two minutes.", "score": answer["ragSources"][0]["score"], "source": "wiki", "title": "Tea" }])
    );
    assert!(
        answer["data"]["conversationId"].as_str().unwrap().len() >= 32,
        "a new id is given"
    );
    let sent = seen.requests.lock().unwrap().last().cloned().unwrap();
    assert_eq!(sent["model"], "llama2");
    assert_eq!(
        sent["messages"][0]["content"],
        "=== Retrieved Context ===\n[Source: Tea]\nGreen tea is steeped at about eighty degrees for two minutes.\n=== End Context ===\n\nAnswer in one sentence."
    );
    assert_eq!(
        sent["messages"][1],
        json!({ "role": "user", "content": "How long should green tea steep?" })
    );

    // Streamed: the pieces as they come, then the whole response.
    let response = server
        .client
        .post(format!("{}/api/chat", server.base))
        .json(&json!({ "model": "streamer", "messages": [{ "role": "user", "content": "Tell me about GPUs" }], "useRag": true, "stream": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    let (last, tokens) = events.split_last().unwrap();
    assert!(
        tokens.len() > 3 && tokens.iter().all(|e| e["type"] == "token"),
        "{text}"
    );
    let streamed: String = tokens.iter().map(|e| e["content"].as_str().unwrap()).collect();
    assert_eq!(last["type"], "done", "{text}");
    assert_eq!(last["data"]["message"].as_str().unwrap(), streamed);
    assert!(
        streamed.starts_with("[streamer] system: === Retrieved Context ==="),
        "{streamed}"
    );
    assert_eq!(last["ragSources"][0]["title"], "GPUs");
    assert_eq!(seen.requests.lock().unwrap().last().unwrap()["stream"], true);

    // An LLM that fails once is asked again; one that keeps failing is a 502 naming it.
    let ask = |model: &str| json!({ "model": model, "messages": [{ "role": "user", "content": "Hi" }] });
    let (status, answer) = server.post("/api/chat", ask("flaky")).await;
    assert_eq!(status, 200, "{answer}");
    let before = seen.requests.lock().unwrap().len();
    let (status, answer) = server.post("/api/chat", ask("broken")).await;
    assert_eq!(status, 502, "{answer}");
    assert_eq!(answer["error"], "Bad Gateway");
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.contains(&url) && message.contains("answered 500") && message.contains("model crashed"),
        "{message}"
    );
    assert_eq!(
        seen.requests.lock().unwrap().len() - before,
        3,
        "the first try and two retries"
    );

    // An LLM slower than --llm-timeout: a 504 within about the timeout.
    let started = Instant::now();
    let (status, answer) = server.post("/api/chat", ask("slow")).await;
    assert_eq!(status, 504, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("did not answer within 1 s"),
        "{answer}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );

    // Invalid requests: seed 002's validation shape, naming the field.
    for (body, field) in [
        (json!({ "messages": [] }), "messages"),
        (json!({ "messages": [{ "role": "user" }] }), "messages[0].content"),
        (
            json!({ "messages": [{ "role": "user", "content": "x" }], "ragTopK": 0, "useRag": true }),
            "ragTopK",
        ),
        (
            json!({ "messages": [{ "role": "user", "content": "x" }], "useRag": "yes" }),
            "useRag",
        ),
        (
            json!({ "messages": [{ "role": "assistant", "content": "x" }], "useRag": true }),
            "messages",
        ),
    ] {
        let (status, answer) = server.post("/api/chat", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"], "Validation error", "{answer}");
        assert_eq!(answer["details"]["field"], field, "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_llm_chat_is_a_503_naming_the_setting() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (status, answer) = server
        .post(
            "/api/chat",
            json!({ "messages": [{ "role": "user", "content": "Hi" }] }),
        )
        .await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"], "Service Unavailable");
    assert!(answer["message"].as_str().unwrap().contains("--llm-url"), "{answer}");
    let (status, answer) = server
        .post("/v1/search", json!({ "query": "Hi", "compress": true }))
        .await;
    assert_eq!(status, 503, "{answer}");
    assert!(answer["detail"].as_str().unwrap().contains("--llm-url"), "{answer}");
    // The rest of the seed's surface works without one.
    let (status, _) = server
        .post(
            "/api/rag/ingest",
            json!({ "source": "s", "path": "p", "title": "T", "text": "Some text." }),
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn search_with_the_query_rewritten_and_the_chunks_compressed_by_the_llm() {
    let (seen, _url, _data, server) = start_with_llm().await;
    for (path, title, text) in [
        (
            "/gpu",
            "GPUs",
            "GPUs run thousands of threads in parallel. They multiply matrices quickly.",
        ),
        (
            "/tea",
            "Tea",
            "Black tea takes boiling water. Green tea should steep for two minutes at eighty degrees.",
        ),
    ] {
        let body = json!({ "source": "wiki", "path": path, "title": title, "text": text });
        assert_eq!(server.post("/api/rag/ingest", body).await.0, 200);
    }
    let history = json!([
        { "role": "user", "content": "How do I make green tea?" },
        { "role": "assistant", "content": "Use water below boiling." }
    ]);
    for route in ["/v1/collections/rag/search", "/v1/search"] {
        let (status, result) = server
            .post(
                route,
                json!({ "query": "and for how long?", "history": history, "rewrite_query": true, "compress": true, "top_k": 2, "mode": "hybrid" }),
            )
            .await;
        assert_eq!(status, 200, "{route}: {result}");
        assert_eq!(
            result["rewritten_query"], "How long should green tea steep?",
            "{result}"
        );
        assert_eq!(result["query"], "How long should green tea steep?");
        // The GPU chunk holds no sentence about the question: dropped; the tea chunk is cut to
        // the sentence that answers it, its whole text kept beside.
        let chunks = result["chunks"].as_array().unwrap();
        assert_eq!(chunks.len(), 1, "{result}");
        assert_eq!(
            chunks[0]["content"],
            "Green tea should steep for two minutes at eighty degrees."
        );
        assert!(chunks[0]["metadata"]["uncompressed_content"]
            .as_str()
            .unwrap()
            .starts_with("Black tea"));
    }
    // What quarry asked: seed 001's instructions, the history and the query in the rewrite.
    let requests = seen.requests.lock().unwrap().clone();
    let rewrite = requests
        .iter()
        .find(|r| r["messages"][0]["content"].as_str().unwrap().starts_with("Rewrite"))
        .unwrap();
    let prompt = rewrite["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("user: How do I make green tea?") && prompt.ends_with("User query: and for how long?"),
        "{prompt}"
    );
    assert_eq!(rewrite["model"], "default-model");
    let compressions = requests
        .iter()
        .filter(|r| r["messages"][0]["content"].as_str().unwrap().starts_with("Extract"))
        .count();
    assert_eq!(compressions, 4, "two chunks, two routes");

    // Without the stages a search never calls the LLM; history alone is refused.
    let before = seen.requests.lock().unwrap().len();
    let (status, plain) = server
        .post("/v1/collections/rag/search", json!({ "query": "green tea" }))
        .await;
    assert_eq!(status, 200);
    assert!(plain.get("rewritten_query").is_none());
    assert_eq!(seen.requests.lock().unwrap().len(), before);
    let (status, refused) = server
        .post(
            "/v1/collections/rag/search",
            json!({ "query": "x", "history": history }),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        refused["detail"].as_str().unwrap().contains("rewrite_query"),
        "{refused}"
    );
}
