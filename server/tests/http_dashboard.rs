//! The dashboard and what it shows, over real HTTP: the page and every API call it makes,
//! upload tags (filters find them), the queue position of a waiting job, and a file's
//! progress through its stages, in its job status and in the collection's event stream.

use crate::http_common;

use std::sync::Mutex;
use std::time::Duration;

use http_common::{options, paragraph, TestServer};
use quarry_indexer::source::RawDocument;
use quarry_server::events::{Stage, StageProgress};
use quarry_server::ingest::online::{chunker_for, process_file, FileSettings, StoredVectors};
use serde_json::{json, Value};

/// The (method, path template) of every `api.call(...)` in the dashboard's script.
fn api_calls(page: &str) -> Vec<(String, String)> {
    page.split("api.call(\"")
        .skip(1)
        .filter_map(|rest| {
            let (method, rest) = rest.split_once('"')?;
            let rest = rest.strip_prefix(", ")?;
            let quote = rest.chars().next()?;
            let path = rest[1..].split(quote).next()?;
            Some((method.to_string(), path.to_string()))
        })
        .filter(|(method, _)| method != "${method}")
        .collect()
}

/// A template's `${...}` parts filled in: a job id where it names one, else `collection`.
fn filled(template: &str, collection: &str, job_id: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some((before, after)) = rest.split_once("${") {
        out.push_str(before);
        let (expression, after) = after.split_once('}').expect("a closed ${...}");
        out.push_str(if expression.contains("job") { job_id } else { collection });
        rest = after;
    }
    out + rest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_dashboard_calls_only_routes_the_server_has() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = no_redirects.get(server.url("/")).send().await.unwrap();
    assert_eq!(
        (root.status().as_u16(), root.headers()["location"].to_str().unwrap()),
        (307, "/dashboard")
    );
    let page = server.client.get(server.url("/dashboard")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let page = page.text().await.unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page loads nothing from elsewhere"
    );

    server.post("/v1/collections", json!({ "name": "kept" })).await;
    server.post("/v1/collections", json!({ "name": "scratch" })).await;
    let job = server
        .upload_completed("kept", "notes.md", paragraph("tides").into_bytes())
        .await;
    let job_id = job["job_id"].as_str().unwrap();

    let calls = api_calls(&page);
    assert!(calls.len() >= 9, "{calls:?}");
    for (method, template) in &calls {
        // Deletes go to a collection the test can lose; the other calls to one with a job.
        let collection = if method == "DELETE" { "scratch" } else { "kept" };
        let path = filled(template, collection, job_id);
        let request = server.client.request(method.parse().unwrap(), server.url(&path));
        let request = if method == "GET" {
            request
        } else {
            request.json(&json!({}))
        };
        let status = request.send().await.unwrap().status().as_u16();
        // A body the route rejects is fine here (400); no route, or not this method, is not.
        assert!(
            ![404, 405].contains(&status),
            "{method} {path} (from `{template}`) answered {status}"
        );
    }
    let streams: Vec<&str> = page
        .split("readEvents(`")
        .skip(1)
        .filter_map(|rest| rest.split('`').next())
        .collect();
    assert_eq!(streams.len(), 1, "the page listens to its collection's events");
    for template in streams {
        let stream = server
            .client
            .get(server.url(&filled(template, "kept", job_id)))
            .send()
            .await
            .unwrap();
        assert_eq!(
            (
                stream.status().as_u16(),
                stream.headers()["content-type"].to_str().unwrap()
            ),
            (200, "text/event-stream"),
            "{template}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn upload_tags_reach_the_files_and_the_filters() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    let upload = |name: &'static str, tags: String| {
        let server = &server;
        async move {
            let form = reqwest::multipart::Form::new().text("tags", tags).part(
                "files",
                reqwest::multipart::Part::bytes(paragraph("tides").into_bytes()).file_name(name),
            );
            let response = server
                .client
                .post(server.url("/v1/collections/c/documents"))
                .multipart(form)
                .send()
                .await
                .unwrap();
            (
                response.status().as_u16(),
                response.json::<serde_json::Value>().await.unwrap(),
            )
        }
    };
    // The field comes before the file here: the handler takes it wherever it is.
    let (status, submitted) = upload("tides.md", " ocean, science ,,ocean".into()).await;
    assert_eq!(status, 202, "{submitted}");
    server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    let (_, files) = server.get("/v1/collections/c/documents").await;
    assert_eq!(
        files[0]["metadata"]["tags"],
        json!(["ocean", "science"]),
        "trimmed, empty ones and repeats dropped"
    );

    let found = |tag: &'static str| {
        let server = &server;
        async move {
            let (status, result) = server
                .post(
                    "/v1/collections/c/search",
                    json!({ "query": "tides", "filters": { "tags": [tag] } }),
                )
                .await;
            assert_eq!(status, 200, "{result}");
            result["chunks"].as_array().unwrap().len()
        }
    };
    assert!(found("science").await >= 1);
    assert_eq!(found("geology").await, 0);

    let too_many = (0..33).map(|i| format!("t{i}")).collect::<Vec<_>>().join(",");
    let (status, error) = upload("more.md", too_many).await;
    assert_eq!(
        (status, error["detail"].as_str().unwrap()),
        (400, "tags: 33 given, at most 32")
    );
    let (status, error) = upload("more.md", "x".repeat(65)).await;
    assert_eq!(status, 400, "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("longer than 64 characters"),
        "{error}"
    );
    assert!(
        std::fs::read_dir(data.path().join("uploads"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "a refused upload leaves no files behind"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiting_job_says_where_it_is_in_the_queue() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    // Every ingestion slot taken: the jobs below wait, in the order they came.
    let slots = server.state.options().ingest_workers.max(1) as u32;
    let held = server
        .state
        .ingestion()
        .ingest_slots
        .clone()
        .acquire_many_owned(slots)
        .await
        .unwrap();
    let mut jobs = Vec::new();
    for topic in ["tides", "glaciers", "deserts"] {
        let (status, submitted) = server
            .upload("c", &[(&format!("{topic}.md"), paragraph(topic).into_bytes())])
            .await;
        assert_eq!(status, 202, "{submitted}");
        jobs.push(submitted["job_id"].as_str().unwrap().to_string());
    }
    for (at, job_id) in jobs.iter().enumerate() {
        let (_, job) = server.get(&format!("/v1/documents/{job_id}/status")).await;
        assert_eq!(job["status"], "pending", "{job}");
        assert_eq!(
            (
                job["metadata"]["queue_position"].clone(),
                job["metadata"]["queue_length"].clone()
            ),
            (json!(at + 1), json!(3)),
            "{job}"
        );
    }
    drop(held);
    for job_id in &jobs {
        let job = server.wait_job(job_id).await;
        assert_eq!(job["status"], "completed", "{job}");
        assert!(job["metadata"].get("queue_position").is_none(), "{job}");
    }
    server.stop().await;
}

/// A file long enough for several of the CPU's 4,096-token batches: about 50 chunks.
fn long_markdown() -> Vec<u8> {
    (0..150)
        .map(|i| paragraph(&format!("topic {i}")) + "\n\n")
        .collect::<String>()
        .into_bytes()
}

/// A file's progress rises through its stages: parsed, chunked, then batch by batch as the
/// model embeds it, up to embedded (the job's storing and success take it on to 100).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_file_reports_its_progress_batch_by_batch() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let bytes = long_markdown();
    let raw = RawDocument {
        uri: "upload://c/f/long.md".into(),
        relative_path: "long.md".into(),
        size: bytes.len() as u64,
        bytes: bytes.into(),
        etag: None,
        source: "upload".into(),
        content_type: None,
    };
    let seen = Mutex::new(Vec::new());
    let record = |at: StageProgress| seen.lock().unwrap().push(at);
    let settings = FileSettings {
        chunker: chunker_for(server.state.ingestion(), None).unwrap(),
        stored: &StoredVectors::None,
        tags: &[],
        user_id: None,
        progress: &record,
    };
    let file = process_file(server.state.ingestion(), &raw, settings).unwrap();
    let chunks = file.embedded_chunks;
    assert!(chunks >= 30, "{chunks} chunks");
    let seen = seen.into_inner().unwrap();
    assert_eq!(
        &seen[..2],
        &[StageProgress::parsed(), StageProgress::chunked(chunks)],
        "{seen:?}"
    );
    assert_eq!(seen.last(), Some(&StageProgress::embedding(chunks, chunks)), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].percent < w[1].percent), "rising: {seen:?}");
    let batches = seen
        .iter()
        .filter(|at| at.stage == Stage::Embedding && at.percent < 90.0)
        .count();
    assert!(batches >= 2, "batch by batch: {seen:?}");
    server.stop().await;
}

/// Reads the next event of a server-sent event stream: (its name, its JSON data, its id).
async fn next_event(stream: &mut reqwest::Response, buffer: &mut String) -> (String, Value, String) {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let field = |name: &str| {
                block
                    .lines()
                    .filter_map(|l| l.strip_prefix(name))
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let (name, data, id) = (field("event:"), field("data:"), field("id:"));
            if !name.is_empty() {
                return (
                    name,
                    serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}")),
                    id,
                );
            }
            continue; // a keep-alive comment
        }
        let chunk = stream
            .chunk()
            .await
            .unwrap()
            .expect("the stream goes on while the server runs");
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

/// Subscribes to a collection's event stream (`query` may name a job).
async fn subscribe(server: &TestServer, collection: &str, query: &str) -> reqwest::Response {
    let stream = server
        .client
        .get(server.url(&format!("/v1/collections/{collection}/events{query}")))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    assert_eq!(stream.headers()["content-type"].to_str().unwrap(), "text/event-stream");
    stream
}

/// Events until every file of `files` had its completed or failed one, and their ids
/// (`<epoch>-<number>`: one epoch, rising numbers).
async fn events_until_done(stream: &mut reqwest::Response, files: usize) -> (Vec<(String, Value)>, Vec<String>) {
    let mut buffer = String::new();
    let (mut events, mut ids) = (Vec::new(), Vec::<String>::new());
    let finished = |events: &Vec<(String, Value)>| {
        events
            .iter()
            .filter(|(name, _)| name.ends_with("_completed") || name.ends_with("_failed"))
            .count()
    };
    while finished(&events) < files {
        let (name, data, id) = tokio::time::timeout(Duration::from_secs(300), next_event(stream, &mut buffer))
            .await
            .expect("an event within 5 minutes");
        let (epoch, number) = id.split_once('-').unwrap_or_else(|| panic!("{name}: id '{id}'"));
        if let Some((last_epoch, last_number)) = ids.last().and_then(|last| last.split_once('-')) {
            assert!(
                epoch == last_epoch && number.parse::<u64>().unwrap() > last_number.parse::<u64>().unwrap(),
                "{id} after {last_epoch}-{last_number}"
            );
        }
        ids.push(id);
        events.push((name, data));
    }
    (events, ids)
}

/// The seed-004 events of one job's files over real HTTP: started, progress through the
/// stages with the chunks embedded of all, then completed with the chunk count or failed with
/// the error the job status gives; another collection's and another job's events stay out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_event_stream_follows_each_file_through_its_stages() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    server.post("/v1/collections", json!({ "name": "other" })).await;
    let (status, error) = server.get("/v1/collections/nope/events").await;
    assert_eq!(
        (status, error["detail"].as_str()),
        (404, Some("Collection 'nope' not found"))
    );
    let (status, _) = server.get("/v1/collections/c/events?job_id=nope").await;
    assert_eq!(status, 404);

    // The jobs wait for a slot until every stream is open.
    let slots = server.state.options().ingest_workers.max(1) as u32;
    let held = server
        .state
        .ingestion()
        .ingest_slots
        .clone()
        .acquire_many_owned(slots)
        .await
        .unwrap();
    let (_, other) = server
        .upload("other", &[("tides.md", paragraph("tides").into_bytes())])
        .await;
    let (status, submitted) = server
        .upload("c", &[("long.md", long_markdown()), ("empty.md", Vec::new())])
        .await;
    assert_eq!(status, 202, "{submitted}");
    let job_id = submitted["job_id"].as_str().unwrap().to_string();
    let (_, later) = server
        .upload("c", &[("glaciers.md", paragraph("glaciers").into_bytes())])
        .await;
    let (status, _) = server
        .get(&format!(
            "/v1/collections/c/events?job_id={}",
            other["job_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 404, "a job of another collection");
    let mut all = subscribe(&server, "c", "").await;
    let mut one_job = subscribe(&server, "c", &format!("?job_id={job_id}")).await;
    drop(held);

    let (events, ids) = events_until_done(&mut all, 3).await;
    assert!(
        events.iter().all(|(_, e)| e["collection_name"] == "c"),
        "only c's events: {events:?}"
    );
    assert!(
        events.iter().any(|(_, e)| e["job_id"] == later["job_id"]),
        "the later job's too: {events:?}"
    );
    let (job_events, _) = events_until_done(&mut one_job, 2).await;
    assert!(
        job_events.iter().all(|(_, e)| e["job_id"] == job_id.as_str()),
        "{job_events:?}"
    );
    // Each job's publish put a new version in service; the job's own stream has none of them.
    let versions: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "collection_version_loaded")
        .map(|(_, e)| e)
        .collect();
    assert_eq!(versions.len(), 2, "{events:?}");
    assert!(
        versions[0]["previous_version"].is_null() && versions[1]["previous_version"] == versions[0]["version"],
        "{versions:?}"
    );
    let (_, info) = server.get("/v1/collections/c").await;
    assert_eq!(
        (&versions[1]["version"], &versions[1]["chunks"]),
        (&info["metadata"]["snapshot_version"], &info["chunk_count"]),
        "{info}"
    );
    let job = server.wait_job(&job_id).await;
    let detail = |name: &str| {
        job["file_details"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file_name"] == name)
            .unwrap()
            .clone()
    };

    for events in [&events, &job_events] {
        let of_file = |name: &str| {
            events
                .iter()
                .filter(|(_, e)| e["file_name"] == name)
                .cloned()
                .collect::<Vec<_>>()
        };
        let long = of_file("long.md");
        let names: Vec<&str> = long.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names.first(), Some(&"document_ingestion_started"), "{names:?}");
        assert_eq!(names.last(), Some(&"document_ingestion_completed"), "{names:?}");
        assert!(
            long.iter()
                .all(|(name, e)| e["event"] == name.as_str() && e["document_id"] == detail("long.md")["file_id"]),
            "{long:?}"
        );
        let progress: Vec<&Value> = long
            .iter()
            .filter(|(name, _)| name == "document_ingestion_progress")
            .map(|(_, e)| e)
            .collect();
        let stages: Vec<&str> = progress.iter().map(|e| e["stage"].as_str().unwrap()).collect();
        let mut distinct = stages.clone();
        distinct.dedup();
        assert_eq!(
            distinct,
            ["parsing", "chunking", "embedding", "storing"],
            "in order: {stages:?}"
        );
        let fractions: Vec<f64> = progress.iter().map(|e| e["progress"].as_f64().unwrap()).collect();
        assert!(
            fractions.windows(2).all(|w| w[0] < w[1]) && fractions[0] > 0.0 && fractions[fractions.len() - 1] < 1.0,
            "{fractions:?}"
        );
        let chunks = detail("long.md")["chunks_created"].as_u64().unwrap();
        let embedding: Vec<(u64, u64)> = progress
            .iter()
            .filter(|e| e["stage"] == "embedding")
            .map(|e| {
                (
                    e["chunks_processed"].as_u64().unwrap(),
                    e["total_chunks"].as_u64().unwrap(),
                )
            })
            .collect();
        assert!(
            embedding.len() >= 2 && embedding.iter().all(|(_, total)| *total == chunks),
            "{embedding:?} of {chunks}"
        );
        assert_eq!(embedding.last(), Some(&(chunks, chunks)));
        let completed = &long.last().unwrap().1;
        assert_eq!(
            (completed["status"].as_str(), completed["chunk_count"].as_u64()),
            (Some("ready"), Some(chunks)),
            "{completed}"
        );
        assert!(completed["token_count"].as_u64().unwrap() > chunks, "{completed}");

        let empty = of_file("empty.md");
        let names: Vec<&str> = empty.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            (names.first(), names.last()),
            (Some(&"document_ingestion_started"), Some(&"document_ingestion_failed")),
            "{names:?}"
        );
        let failed = &empty.last().unwrap().1;
        assert_eq!(
            (failed["status"].as_str(), &failed["error"]),
            (Some("failed"), &detail("empty.md")["error_message"]),
            "{failed}"
        );
        assert!(failed["error"].as_str().is_some_and(|e| !e.is_empty()), "{failed}");
    }
    // A client back with the last id it saw gets what it missed, in order; one whose id this
    // server never gave is told it missed events.
    let mut back = server
        .client
        .get(server.url("/v1/collections/c/events"))
        .header("last-event-id", &ids[0])
        .send()
        .await
        .unwrap();
    assert_eq!(
        events_until_done(&mut back, 3).await.0,
        events[1..],
        "the kept events after the first again"
    );
    let mut stranger = subscribe(&server, "c", "?last_event_id=999999").await;
    let (name, _, _) = next_event(&mut stranger, &mut String::new()).await;
    assert_eq!(name, "events_missed");
    drop((back, stranger));

    // Shutting down ends the open streams (after what they were sent) instead of waiting on them.
    tokio::time::timeout(Duration::from_secs(60), server.stop())
        .await
        .expect("open event streams do not hold up a shutdown");
    for mut stream in [all, one_job] {
        while stream.chunk().await.expect("the stream ends cleanly").is_some() {}
    }
}
