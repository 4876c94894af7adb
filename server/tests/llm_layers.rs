//! `--summaries llm`: document layers written by an OpenAI-compatible endpoint, against a small
//! chat-completions server the test starts on loopback (no LLM runs on these machines). A batch
//! run asks two calls a document (seed 003's L0 and L1) and stores the answers with
//! `layers_by: llm:<model>`, with at most `--llm-concurrency` requests in flight however many
//! threads parse; a document the endpoint fails on gets the extractive layers, and
//! the next run fetches its file again and asks again, leaving the others alone; an upload to
//! `quarry serve --summaries llm` gets them the same way, and the collection's own layers
//! from its documents' abstracts; `--summaries llm` without an endpoint does not start.

use crate::http_common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use http_common::{common, options, TestServer};
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions};
use quarry_indexer::snapshot::{DocumentRecord, SnapshotReader};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::summary::Summaries;
use quarry_server::llm::LlmSettings;
use quarry_server::llm_summaries::{
    summarizer_for, ABSTRACT_PROMPT, COLLECTION_ABSTRACT_PROMPT, COLLECTION_OVERVIEW_PROMPT, OVERVIEW_PROMPT,
};
use serde_json::{json, Value};

/// What the stand-in received; while `failing`, a document that mentions "volcano" is a 500.
#[derive(Default)]
struct StandIn {
    requests: Mutex<Vec<Value>>,
    failing: AtomicBool,
    /// How long each answer takes, and the requests being answered (now and at most).
    delay_ms: AtomicU64,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

/// Answers an abstract or an overview naming the document's first three words.
async fn completions(State(stand_in): State<Arc<StandIn>>, Json(body): Json<Value>) -> axum::response::Response {
    stand_in.requests.lock().unwrap().push(body.clone());
    let now = stand_in.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    stand_in.most_in_flight.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(stand_in.delay_ms.load(Ordering::SeqCst))).await;
    stand_in.in_flight.fetch_sub(1, Ordering::SeqCst);
    let (system, document) = (
        body["messages"][0]["content"].as_str().unwrap_or_default(),
        body["messages"][1]["content"].as_str().unwrap_or_default(),
    );
    if stand_in.failing.load(Ordering::SeqCst) && document.contains("volcano") {
        return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "model crashed").into_response();
    }
    let opening: Vec<&str> = document.split_whitespace().take(3).collect();
    let answer = match system {
        ABSTRACT_PROMPT => format!("  Abstract of {}.\n", opening.join(" ")),
        OVERVIEW_PROMPT => format!("Overview of {}.\n\nIt goes on.", opening.join(" ")),
        COLLECTION_OVERVIEW_PROMPT => format!("Collection of {} documents.", document.lines().count()),
        COLLECTION_ABSTRACT_PROMPT => format!("In short: {document}"),
        other => format!("unexpected instruction: {other}"),
    };
    Json(json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer } }] })).into_response()
}

async fn start_stand_in(stand_in: Arc<StandIn>) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(stand_in);
    http_common::serve_stand_in(app).await
}

fn settings(url: &str) -> LlmSettings {
    LlmSettings {
        url: url.to_string(),
        model: "stand-in".into(),
        api_key: None,
        timeout: Duration::from_secs(5),
        retries: 0,
        concurrency: 8,
    }
}

async fn index(source: &Path, out: &Path, llm: &LlmSettings) {
    let mut run = RunOptions::new(source.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    run.progress = ProgressMode::Quiet;
    run.summarizer = summarizer_for(Summaries::Llm, Some(llm), tokio::runtime::Handle::current()).unwrap();
    run_with_embedder(run, common::embedder()).await.unwrap();
}

async fn documents(out: &Path) -> HashMap<String, DocumentRecord> {
    let reader = SnapshotReader::open(out.to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let documents = reader.read_documents().await.unwrap();
    documents.into_iter().map(|d| (d.file_name.clone(), d)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_llm_writes_the_layers_and_a_failed_document_is_asked_again_next_run() {
    let stand_in = Arc::new(StandIn::default());
    stand_in.failing.store(true, Ordering::SeqCst);
    let url = start_stand_in(stand_in.clone()).await;
    let llm = settings(&url);
    let source = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let files = [
        ("tides.md", "Tides rise twice a day. The moon pulls the sea."),
        ("ferns.md", "Ferns grow in shade. They spread by spores."),
        (
            "volcano.md",
            "Lava flows from the volcano. Ash falls on the town. The town sleeps.",
        ),
    ];
    for (name, text) in files {
        std::fs::write(source.path().join(name), text).unwrap();
    }
    index(source.path(), out.path(), &llm).await;

    let first = documents(out.path()).await;
    let tides = &first["tides.md"].layers;
    assert_eq!(
        (
            tides.abstract_text.as_str(),
            tides.overview.as_str(),
            tides.made_by.as_str()
        ),
        (
            "Abstract of Tides rise twice.",
            "Overview of Tides rise twice.\n\nIt goes on.",
            "llm:stand-in"
        )
    );
    let volcano = &first["volcano.md"].layers;
    assert_eq!(
        volcano.made_by, "extractive-v1",
        "the failed document's layers: {volcano:?}"
    );
    assert!(
        files[2].1.contains(&volcano.abstract_text),
        "an extractive L0 is a sentence of it: {volcano:?}"
    );
    {
        let requests = stand_in.requests.lock().unwrap();
        let good: Vec<&Value> = requests.iter().filter(|r| !r.to_string().contains("volcano")).collect();
        assert_eq!(good.len(), 4, "two calls for each document that answered");
        for request in &good {
            assert_eq!(
                (&request["model"], &request["temperature"]),
                (&json!("stand-in"), &json!(0))
            );
        }
    }

    // The endpoint recovers: the next run asks for the failed document only.
    stand_in.failing.store(false, Ordering::SeqCst);
    stand_in.requests.lock().unwrap().clear();
    index(source.path(), out.path(), &llm).await;
    let second = documents(out.path()).await;
    let asked: Vec<String> = stand_in
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r["messages"][1]["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked.iter().all(|text| text.contains("volcano")), "{asked:?}");
    assert_eq!(
        second["volcano.md"].layers.abstract_text,
        "Abstract of Lava flows from."
    );
    assert_eq!(second["volcano.md"].layers.made_by, "llm:stand-in");
    assert_eq!(
        second["tides.md"], first["tides.md"],
        "an unchanged document stays as it was"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn documents_are_summarized_with_the_requests_in_flight_the_settings_allow() {
    let stand_in = Arc::new(StandIn::default());
    stand_in.delay_ms.store(150, Ordering::SeqCst);
    let url = start_stand_in(stand_in.clone()).await;
    let source = tempfile::tempdir().unwrap();
    for n in 0..12 {
        std::fs::write(
            source.path().join(format!("note-{n:02}.md")),
            format!("Note {n} is about tides. The sea rises and falls."),
        )
        .unwrap();
    }
    for concurrency in [1, 6] {
        stand_in.most_in_flight.store(0, Ordering::SeqCst);
        let out = tempfile::tempdir().unwrap();
        let llm = LlmSettings {
            concurrency,
            ..settings(&url)
        };
        index(source.path(), out.path(), &llm).await;
        let most = stand_in.most_in_flight.load(Ordering::SeqCst);
        // Never more than allowed; when allowed, more than the parse threads of a 2-core machine
        // (the number of requests in flight used to be the number of parse threads).
        match concurrency {
            1 => assert_eq!(most, 1),
            _ => assert!(
                (4..=concurrency).contains(&most),
                "{most} requests in flight at once, {concurrency} allowed"
            ),
        }
        let written = documents(out.path()).await;
        assert_eq!(written.len(), 12);
        for (name, record) in &written {
            let n = name
                .trim_start_matches("note-")
                .trim_end_matches(".md")
                .trim_start_matches('0');
            let n = if n.is_empty() { "0" } else { n };
            assert_eq!(record.layers.made_by, "llm:stand-in", "{name}");
            assert_eq!(
                record.layers.abstract_text,
                format!("Abstract of Note {n} is."),
                "{name}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upload_gets_llm_layers_and_llm_summaries_need_an_endpoint() {
    let stand_in = Arc::new(StandIn::default());
    let url = start_stand_in(stand_in.clone()).await;
    let data = tempfile::tempdir().unwrap();
    let mut serve = options(data.path());
    serve.summaries = Summaries::Llm;
    serve.llm = Some(settings(&url));
    let server = TestServer::start(serve).await;
    let (status, _) = server.post("/v1/collections", json!({ "name": "notes" })).await;
    assert_eq!(status, 201);
    server
        .upload_completed(
            "notes",
            "owls.md",
            b"Owls hunt at night. They see in the dark.".to_vec(),
        )
        .await;
    let (status, summaries) = server.get("/v1/collections/notes/summaries").await;
    assert_eq!(status, 200, "{summaries}");
    assert_eq!(summaries["documents"][0]["summary"], "Abstract of Owls hunt at.");
    assert_eq!(
        summaries["documents"][0]["overview"],
        "Overview of Owls hunt at.\n\nIt goes on."
    );
    // The collection's layers: an overview from its documents' "- name: abstract" lines,
    // then an abstract from that overview; asked once for a version.
    server
        .upload_completed("notes", "bats.md", b"Bats fly at dusk. They hear their way.".to_vec())
        .await;
    stand_in.requests.lock().unwrap().clear();
    let (status, summaries) = server.get("/v1/collections/notes/summaries").await;
    assert_eq!(status, 200, "{summaries}");
    assert_eq!(
        summaries["collection"],
        json!({
            "abstract": "In short: Collection of 2 documents.",
            "overview": "Collection of 2 documents.",
            "made_by": "llm:stand-in",
            "from_documents": 2,
        })
    );
    let (_, again) = server.get("/v1/collections/notes/summaries?limit=1").await;
    assert_eq!(again["collection"], summaries["collection"]);
    let asked: Vec<Value> = stand_in.requests.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "two calls, once: {asked:?}");
    let mut lines: Vec<&str> = asked[0]["messages"][1]["content"].as_str().unwrap().lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "- bats.md: Abstract of Bats fly at.",
            "- owls.md: Abstract of Owls hunt at."
        ]
    );
    // An endpoint that fails leaves the extractive layers in their place.
    stand_in.failing.store(true, Ordering::SeqCst);
    server
        .upload_completed(
            "notes",
            "volcano.md",
            b"Lava flows from the volcano. Ash falls.".to_vec(),
        )
        .await;
    let (status, summaries) = server.get("/v1/collections/notes/summaries").await;
    assert_eq!(status, 200, "{summaries}");
    assert_eq!(summaries["collection"]["made_by"], "extractive-v1", "{summaries}");
    assert_eq!(summaries["collection"]["from_documents"], 3, "{summaries}");
    server.stop().await;

    let mut without = options(data.path());
    without.summaries = Summaries::Llm;
    let refused = quarry_server::app::start(without, common::embedder())
        .await
        .err()
        .unwrap();
    assert!(refused.contains("--llm-url"), "{refused}");
}
