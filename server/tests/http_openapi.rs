//! The OpenAPI document against the live server: every path the router serves is described
//! with exactly the methods the server answers, and schemathesis (which first validates the
//! document against the OpenAPI schema) (PyPI, installed into .venv by
//! scripts/python-tools.sh) sends generated and malformed requests to every operation, bounded
//! in count and seeded, checking each answer against the document: no 5xx, documented status
//! codes, content types, headers and schemas, malformed input refused, auth not ignored. An
//! LLM stand-in on loopback answers chat completions, so /api/chat and the LLM stages answer
//! as they do in production (no LLM runs on these machines). The events stream is left out:
//! it does not end.

use crate::http_common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use axum::routing::post;
use axum::{Json, Router};
use http_common::{options, TestServer};
use quarry_server::llm::LlmSettings;
use serde_json::{json, Value};

/// Answers every chat completion with one short sentence (streamed when asked).
async fn completions(Json(body): Json<Value>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let answer = "A short answer.";
    if body["stream"] == true {
        let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": answer } }] });
        let events = format!("data: {chunk}\n\ndata: [DONE]\n\n");
        return ([(axum::http::header::CONTENT_TYPE, "text/event-stream")], events).into_response();
    }
    Json(json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer } }] })).into_response()
}

async fn start() -> (tempfile::TempDir, TestServer) {
    let llm = http_common::serve_stand_in(Router::new().route("/v1/chat/completions", post(completions))).await;
    let data = tempfile::tempdir().unwrap();
    let mut serve = options(data.path());
    serve.llm = Some(LlmSettings {
        url: llm,
        model: "stand-in".into(),
        api_key: None,
        timeout: Duration::from_secs(10),
        retries: 0,
        concurrency: 8,
    });
    let server = TestServer::start(serve).await;
    (data, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_described_path_has_the_methods_the_server_answers() {
    let (_data, server) = start().await;
    let (status, document) = server.get("/openapi.json").await;
    assert_eq!((status, &document["openapi"]), (200, &json!("3.1.0")));
    for (path, item) in document["paths"].as_object().unwrap() {
        let described: BTreeSet<String> = item.as_object().unwrap().keys().map(|m| m.to_uppercase()).collect();
        let concrete = path
            .replace("{name}", "kept")
            .replace("{job_id}", "j")
            .replace("{id}", "d");
        let response = server
            .client
            .request(reqwest::Method::TRACE, server.url(&concrete))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 405, "TRACE {concrete}");
        let allow = response.headers()["allow"].to_str().unwrap().to_string();
        let answered: BTreeSet<String> = allow
            .split(',')
            .map(|m| m.trim().to_string())
            .filter(|m| m != "HEAD")
            .collect();
        assert_eq!(
            described, answered,
            "{path}: described {described:?}, the server answers {allow}"
        );
    }
    server.stop().await;
}

/// Checks that `answer` has the fields `schema` describes, no others, each required one there,
/// through nested objects and arrays (`oneOf`: the first branch whose type fits); `at` names
/// the place for the message.
fn assert_documented_fields(answer: &Value, schema: &Value, at: &str) {
    if let Some(branches) = schema["oneOf"].as_array() {
        let fits = |branch: &&Value| match (&branch["type"], answer) {
            (Value::String(t), Value::Null) => t == "null",
            (Value::String(t), Value::Object(_)) => t == "object",
            _ => false,
        };
        let branch = branches
            .iter()
            .find(fits)
            .unwrap_or_else(|| panic!("{at}: {answer} fits no branch"));
        return assert_documented_fields(answer, branch, at);
    }
    match answer {
        Value::Object(fields) if schema["properties"].is_object() => {
            let described: BTreeSet<&String> = schema["properties"].as_object().unwrap().keys().collect();
            let present: BTreeSet<&String> = fields.keys().collect();
            assert_eq!(present, described, "{at}: fields against the document");
            for required in schema["required"].as_array().into_iter().flatten() {
                assert!(
                    fields.contains_key(required.as_str().unwrap()),
                    "{at}: {required} missing"
                );
            }
            for (name, value) in fields {
                assert_documented_fields(value, &schema["properties"][name], &format!("{at}.{name}"));
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                assert_documented_fields(item, &schema["items"], &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_collections_versions_have_the_fields_the_document_lists() {
    let (_data, server) = start().await;
    let (status, _) = server.post("/v1/collections", json!({ "name": "kept" })).await;
    assert_eq!(status, 201);
    server
        .upload_completed("kept", "tides.md", b"# Tides\n\nThe moon pulls the sea.".to_vec())
        .await;
    let (_, document) = server.get("/openapi.json").await;
    let schema = &document["paths"]["/v1/collections/{name}/versions"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"];
    assert!(
        schema["properties"]["versions"]["items"]["properties"].is_object(),
        "{schema}"
    );
    let (status, versions) = server.get("/v1/collections/kept/versions").await;
    assert_eq!(status, 200, "{versions}");
    assert_eq!(versions["versions"].as_array().map(Vec::len), Some(1), "{versions}");
    assert!(
        versions["versions"][0]["run"].is_null(),
        "an online upload has no run report"
    );
    assert_documented_fields(&versions, schema, "versions");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn schemathesis_finds_every_answer_as_the_document_says() {
    let st = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/st");
    assert!(
        st.exists(),
        "{} missing: run scripts/python-tools.sh (scripts/test.sh does)",
        st.display()
    );
    let (_data, server) = start().await;
    let (status, _) = server.post("/v1/collections", json!({ "name": "kept" })).await;
    assert_eq!(status, 201);
    server
        .upload_completed(
            "kept",
            "tides.md",
            b"# Tides\n\nThe moon pulls the sea twice a day.".to_vec(),
        )
        .await;
    let spec = server.url("/openapi.json");
    let output = tokio::task::spawn_blocking(move || {
        Command::new("timeout")
            .arg("600")
            .arg(st)
            .args([
                "run",
                &spec,
                "--experimental=openapi-3.1",
                "--validate-schema=true",
                "--checks",
                "all",
            ])
            .args([
                "--hypothesis-max-examples",
                "25",
                "--hypothesis-seed",
                "11",
                "--hypothesis-derandomize",
            ])
            .args([
                "--hypothesis-deadline",
                "None",
                "--hypothesis-suppress-health-check",
                "all",
            ])
            .args([
                "--exclude-path-regex",
                "/events$",
                "--request-timeout",
                "30000",
                "--workers",
                "2",
            ])
            .env("SCHEMATHESIS_TELEMETRY", "false")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let tail: String = stdout
        .lines()
        .rev()
        .take(80)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        output.status.success(),
        "schemathesis found answers the document does not describe:\n{tail}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("response_schema_conformance"), "{tail}");
    server.stop().await;
}
