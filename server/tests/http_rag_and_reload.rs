//! The seed-002 RAG contract over real HTTP, concurrent searches during reloads and
//! uploads (zero failures, one snapshot version per answer), the bounded search queue,
//! and hot reload (polling, the reload endpoint, a broken snapshot keeping the old one).

use crate::http_common;

use std::collections::HashSet;
use std::time::Duration;

use http_common::{batch_index, options, paragraph, TestServer};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rag_contract_exactly() {
    let data = tempfile::tempdir().unwrap();
    // Every second small segment triggers a merge: updates must hold across compactions.
    let mut serve_options = options(data.path());
    serve_options.compact.max_small_segments = 1;
    let server = TestServer::start(serve_options).await;
    let doc = json!({ "source": "confluence", "path": "/wiki/gpus", "title": "GPUs", "text": "GPUs run thousands of threads in parallel.", "tags": ["hardware"], "metadata": { "owner": "ops" } });
    let (status, created) = server.post("/api/rag/ingest", doc.clone()).await;
    assert_eq!(status, 200, "{created}");
    let keys: HashSet<&str> = created.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        HashSet::from(["status", "documentId", "chunkCount"]),
        "no extra fields"
    );
    assert_eq!(
        (created["status"].clone(), created["chunkCount"].clone()),
        (json!("created"), json!(1))
    );
    let id = created["documentId"].clone();
    let (_, again) = server.post("/api/rag/ingest", doc.clone()).await;
    assert_eq!(
        again,
        json!({ "status": "unchanged", "documentId": id, "chunkCount": 1 })
    );
    let mut changed = doc.clone();
    changed["text"] = json!("TPUs are matrix accelerators designed by Google.");
    let (_, updated) = server.post("/api/rag/ingest", changed.clone()).await;
    assert_eq!(updated["status"], "updated");
    assert_eq!(updated["documentId"], id);
    // The `hash` field decides: same hash, different text -> unchanged.
    let mut hashed = changed.clone();
    hashed["hash"] = json!("v7");
    assert_eq!(
        server.post("/api/rag/ingest", hashed.clone()).await.1["status"],
        "updated"
    );
    hashed["text"] = json!("Completely different text under the same hash.");
    assert_eq!(server.post("/api/rag/ingest", hashed).await.1["status"], "unchanged");
    server.post("/api/rag/ingest", json!({ "source": "github", "path": "README.md", "title": "Readme", "text": "Install with cargo build.", "tags": ["docs"] })).await;

    // Search: the update replaced the old text; metadata as the contract says.
    let (status, found) = server
        .post("/api/rag/search", json!({ "query": "matrix accelerators" }))
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["query"], "matrix accelerators");
    assert_eq!(found["resultCount"], found["results"].as_array().unwrap().len());
    let top = &found["results"][0];
    assert_eq!(top["text"], "TPUs are matrix accelerators designed by Google.");
    assert_eq!(
        top["metadata"],
        json!({ "documentId": id, "source": "confluence", "path": "/wiki/gpus", "title": "GPUs", "chunkIndex": 0, "tags": ["hardware"] })
    );
    assert!(
        found["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["text"] != "GPUs run thousands of threads in parallel."),
        "the replaced version is gone"
    );
    let (_, filtered) = server
        .post(
            "/api/rag/search",
            json!({ "query": "install", "topK": 20, "filters": { "source": "github" } }),
        )
        .await;
    assert!(filtered["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["metadata"]["source"] == "github"));
    assert_eq!(filtered["resultCount"], 1);
    let (_, tagged) = server
        .post(
            "/api/rag/search",
            json!({ "query": "install", "filters": { "tags": ["hardware", "nothing"] } }),
        )
        .await;
    assert!(tagged["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["metadata"]["tags"] == json!(["hardware"])));
    let (_, strict) = server
        .post("/api/rag/search", json!({ "query": "install", "minScore": 0.99 }))
        .await;
    assert_eq!(strict["resultCount"], 0);
    let (_, few) = server
        .post("/api/rag/search", json!({ "query": "install", "topK": 1 }))
        .await;
    assert_eq!(few["resultCount"], 1);
    let latest = std::fs::read_to_string(data.path().join("collections/rag/LATEST")).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            data.path()
                .join(format!("collections/rag/manifests/{}.json", latest.trim())),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["segments"].as_array().unwrap().len(),
        1,
        "four ingests, compacted as they came"
    );
    assert_eq!(
        manifest["counts"]["documents"], 2,
        "the replaced copies are gone, not just hidden"
    );
    assert_eq!(manifest["tombstones"], json!([]));
    let on_disk = |folder: &str| {
        std::fs::read_dir(data.path().join("collections/rag").join(folder))
            .unwrap()
            .count()
    };
    // Kept: the merged version (one segment) and the one before it (the previous merge plus the last upload).
    assert_eq!(
        (on_disk("manifests"), on_disk("segments")),
        (2, 3),
        "the server removes what the last two versions do not use"
    );

    // Validation errors, exactly as written.
    let error = |field: &str, message: &str| json!({ "error": "Validation error", "details": { "field": field, "message": message } });
    for field in ["source", "path", "title", "text"] {
        let mut missing = doc.clone();
        missing.as_object_mut().unwrap().remove(field);
        assert_eq!(
            server.post("/api/rag/ingest", missing).await,
            (400, error(field, &format!("{field} is required")))
        );
    }
    let mut bad = doc.clone();
    bad["source"] = json!("not valid!");
    assert_eq!(
        server.post("/api/rag/ingest", bad).await,
        (400, error("source", "source must match pattern ^[a-zA-Z0-9_-]+$"))
    );
    let mut bad = doc.clone();
    bad["text"] = json!("   ");
    assert_eq!(server.post("/api/rag/ingest", bad).await.0, 400);
    let mut bad = doc.clone();
    bad["tags"] = json!("hardware");
    assert_eq!(
        server.post("/api/rag/ingest", bad).await,
        (400, error("tags", "tags must be an array of strings"))
    );
    assert_eq!(
        server.post("/api/rag/search", json!({ "topK": 3 })).await,
        (400, error("query", "query is required"))
    );
    let long = "word ".repeat(2_001);
    assert_eq!(
        server.post("/api/rag/search", json!({ "query": long })).await,
        (400, error("query", "query is 10005 characters long; at most 10000"))
    );
    for k in [0, 21] {
        assert_eq!(
            server.post("/api/rag/search", json!({ "query": "x", "topK": k })).await,
            (400, error("topK", "topK must be an integer between 1 and 20"))
        );
    }
    // A JSON number that is an integer is an integer, written either way.
    let (status, found) = server
        .post("/api/rag/search", json!({ "query": "install", "topK": 5.0 }))
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        server
            .post("/api/rag/search", json!({ "query": "x", "topK": 2.5 }))
            .await,
        (400, error("topK", "topK must be an integer between 1 and 20"))
    );
    // The collection behind /api/rag cannot be deleted from under it.
    let (status, body) = server.delete("/v1/collections/rag", None).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("backs /api/rag"), "{body}");
    assert_eq!(
        server.post("/api/rag/search", json!({ "query": "install" })).await.0,
        200
    );
    for s in [-0.1, 1.1] {
        assert_eq!(
            server
                .post("/api/rag/search", json!({ "query": "x", "minScore": s }))
                .await,
            (400, error("minScore", "minScore must be a number between 0 and 1"))
        );
    }
    let response = server
        .client
        .post(server.url("/api/rag/search"))
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap()["details"]["field"],
        "body"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updated_document_embeds_only_its_new_chunks() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let topics = [
        "tides",
        "glaciers",
        "deserts",
        "rivers",
        "volcanoes",
        "forests",
        "reefs",
        "caves",
    ];
    let text: String = topics.iter().map(|t| paragraph(t) + "\n\n").collect();

    let doc = json!({ "source": "wiki", "path": "/notes/earth", "title": "Earth", "text": text });
    let (status, created) = server.post("/api/rag/ingest", doc.clone()).await;
    assert_eq!(status, 200, "{created}");
    let first_chunks = created["chunkCount"].as_u64().unwrap();
    assert!(first_chunks >= 4, "{created}");
    assert_eq!(server.ingested_chunks().await, (first_chunks, 0));

    // A paragraph appended: the chunks before it keep their text, and their vectors.
    let mut appended = doc.clone();
    appended["text"] = json!(format!("{text}{}", paragraph("auroras")));
    let (_, updated) = server.post("/api/rag/ingest", appended).await;
    assert_eq!(updated["status"], "updated", "{updated}");
    let (embedded, reused) = server.ingested_chunks().await;
    let (embedded, reused) = (embedded - first_chunks, reused);
    assert_eq!(embedded + reused, updated["chunkCount"].as_u64().unwrap());
    assert!(
        reused >= 2 && embedded >= 1 && embedded < reused,
        "embedded {embedded}, reused {reused}"
    );

    // Every chunk, reused or embedded, is found by its own text at cosine ~1.
    let chunks = server
        .assert_each_chunk_finds_itself("rag", "paragraph", serde_json::Value::Null)
        .await;
    assert_eq!(chunks.len() as u64, embedded + reused, "{chunks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_searches_during_reloads_and_uploads_never_fail() {
    let (src_a, src_b, root) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(
        src_a.path().join("a.md"),
        "# Alpha\n\nVector search on graphics processors.",
    )
    .unwrap();
    std::fs::write(
        src_b.path().join("b.md"),
        "# Beta\n\nKeyword search with BM25 and stemming.",
    )
    .unwrap();
    batch_index(src_a.path(), root.path()).await;
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![("live".into(), root.path().to_str().unwrap().into())];
    opts.search_queue = 256;
    let server = std::sync::Arc::new(TestServer::start(opts).await);

    // Searchers run until the publishing below is over (and at least 40 requests each).
    let publishing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut searchers = Vec::new();
    for worker in 0..6 {
        let (server, publishing) = (server.clone(), publishing.clone());
        searchers.push(tokio::spawn(async move {
            let mut versions = HashSet::new();
            let mut i = 0;
            while i < 40 || publishing.load(std::sync::atomic::Ordering::SeqCst) {
                i += 1;
                let mode = ["vector", "keyword", "hybrid"][(worker + i) % 3];
                let (status, result) = server
                    .post(
                        "/v1/collections/live/search",
                        json!({ "query": "search", "top_k": 10, "mode": mode }),
                    )
                    .await;
                assert_eq!(status, 200, "{result}");
                let seen: HashSet<String> = result["chunks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["metadata"]["snapshot_version"].as_str().unwrap().to_string())
                    .collect();
                assert!(seen.len() <= 1, "one answer mixed versions: {seen:?}");
                versions.extend(seen);
            }
            versions
        }));
    }
    // Meanwhile: new batch versions published and reloaded, and uploads landing.
    for round in 0..3 {
        let src = if round % 2 == 0 { src_b.path() } else { src_a.path() };
        batch_index(src, root.path()).await;
        let (status, body) = server.post("/v1/collections/live/reload", json!({})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["reloaded"], true);
        let (status, submitted) = server
            .upload(
                "live",
                &[(
                    &format!("note{round}.txt"),
                    format!("Upload number {round} about search.").into_bytes(),
                )],
            )
            .await;
        assert_eq!(status, 202);
        server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    }
    publishing.store(false, std::sync::atomic::Ordering::SeqCst);
    let mut versions = HashSet::new();
    for handle in searchers {
        versions.extend(handle.await.unwrap());
    }
    assert!(versions.len() >= 2, "searches saw the versions change: {versions:?}");
    let (_, result) = server
        .post(
            "/v1/collections/live/search",
            json!({ "query": "upload number", "top_k": 10, "mode": "keyword" }),
        )
        .await;
    assert!(
        result["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["file_name"] == "note2.txt"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_search_queue_answers_503_at_once() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a.md"), "# A\n\nSome text to search.").unwrap();
    let root = tempfile::tempdir().unwrap();
    batch_index(src.path(), root.path()).await;
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![("c".into(), root.path().to_str().unwrap().into())];
    opts.search_workers = 1;
    opts.search_queue = 0;
    let server = std::sync::Arc::new(TestServer::start(opts).await);
    let long_query = "vector search on graphics processors with token budgets ".repeat(20);
    // Collected first, so all 24 are in flight together.
    let requests: Vec<_> = (0..24)
        .map(|_| {
            let (server, query) = (server.clone(), long_query.clone());
            tokio::spawn(async move { server.post("/v1/collections/c/search", json!({ "query": query })).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for request in requests {
        let (status, body) = request.await.unwrap();
        if status == 503 {
            assert!(
                body["detail"].as_str().unwrap().contains("search queue is full"),
                "{body}"
            );
        }
        statuses.push(status);
    }
    assert!(statuses.iter().all(|s| *s == 200 || *s == 503), "{statuses:?}");
    assert!(statuses.contains(&200) && statuses.contains(&503), "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hot_reload_by_polling_and_a_broken_snapshot_keeps_the_old_one() {
    let (src_a, src_b, root) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(src_a.path().join("a.md"), "# Alpha\n\nThe first version.").unwrap();
    std::fs::write(src_b.path().join("b.md"), "# Beta\n\nThe second version.").unwrap();
    let first = batch_index(src_a.path(), root.path()).await;
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![("polled".into(), root.path().to_str().unwrap().into())];
    opts.poll_interval = Some(Duration::from_millis(300));
    let server = TestServer::start(opts).await;
    let version = |server: &TestServer| server.state.collection("polled").unwrap().version();
    assert_eq!(version(&server).as_deref(), Some(first.as_str()));

    let second = batch_index(src_b.path(), root.path()).await;
    for _ in 0..100 {
        if version(&server).as_deref() == Some(second.as_str()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        version(&server).as_deref(),
        Some(second.as_str()),
        "the poller picked up the new LATEST"
    );
    let (_, result) = server
        .post("/v1/collections/polled/search", json!({ "query": "version" }))
        .await;
    assert_eq!(result["chunks"][0]["file_name"], "b.md");

    // A LATEST naming a manifest whose files are missing: reload fails, the old version serves, health says why.
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.path().join(format!("manifests/{second}.json"))).unwrap()).unwrap();
    manifest["version"] = json!("broken-version");
    manifest["segments"][0]["id"] = json!("seg-missing");
    std::fs::write(
        root.path().join("manifests/broken-version.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    std::fs::write(root.path().join("LATEST"), "broken-version").unwrap();
    let (status, body) = server.post("/v1/collections/polled/reload", json!({})).await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("previous version keeps serving"),
        "{body}"
    );
    assert_eq!(version(&server).as_deref(), Some(second.as_str()));
    let (status, health) = server.get("/v1/knowledge/health").await;
    assert_eq!(status, 503);
    assert!(health["collections"]["polled"]["error"].is_string(), "{health}");
    assert_eq!(health["collections"]["polled"]["version"], json!(second));
    let (status, result) = server
        .post("/v1/collections/polled/search", json!({ "query": "version" }))
        .await;
    assert_eq!((status, result["chunks"][0]["file_name"].clone()), (200, json!("b.md")));
    server.stop().await;
}

/// A collection whose snapshot does not load answers searches with `success: false` and the
/// reason (seed 000's retriever reports failures in the result); a blank query is still a 400;
/// a RAG store that does not load is a 503 in seed 002's shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_that_did_not_load_says_so_in_its_results() {
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("LATEST"), "20990101T000000000Z-none").unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![
        ("broken".into(), broken.path().to_str().unwrap().into()),
        ("rag".into(), broken.path().to_str().unwrap().into()),
    ];
    let server = TestServer::start(opts).await;
    let (status, result) = server
        .post("/v1/collections/broken/search", json!({ "query": "anything" }))
        .await;
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["success"], false, "{result}");
    assert_eq!(result["chunks"], json!([]));
    assert!(
        result["error_message"].as_str().unwrap().contains("did not load"),
        "{result}"
    );
    let (status, body) = server
        .post("/v1/collections/broken/search", json!({ "query": "  " }))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.post("/api/rag/search", json!({ "query": "anything" })).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "Service Unavailable", "{body}");
    assert!(body["message"].as_str().unwrap().contains("did not load"), "{body}");
    server.stop().await;
}
