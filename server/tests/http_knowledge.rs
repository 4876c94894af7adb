//! The seed-000 knowledge-layer API over real HTTP: every endpoint, every state
//! transition, bad inputs, body limits, restart and resumed jobs.

use crate::http_common;

use http_common::{options, paragraph, TestServer};
use std::sync::Arc;

use quarry_indexer::embed::{BatchPolicy, Precision};
use quarry_indexer::parse::SUPPORTED_FORMATS;
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions};
use quarry_server::records::{FileProgress, FileStatus, IngestionJobStatus, JobState};
use serde_json::json;

fn pdf_two_pages() -> Vec<u8> {
    // A real two-page PDF written by hand: one text object per page.
    let mut body = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 /MediaBox [0 0 595 842] /Resources << /Font << /F1 7 0 R >> >> >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>".to_string(),
        stream("BT /F1 12 Tf 72 700 Td (Quarterly revenue grew fifteen percent) Tj ET"),
        "<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>".to_string(),
        stream("BT /F1 12 Tf 72 700 Td (Margins improved on the second page) Tj ET"),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
    ];
    for (i, object) in objects.iter().enumerate() {
        offsets.push(body.len());
        body.push_str(&format!("{} 0 obj\n{object}\nendobj\n", i + 1));
    }
    let xref = body.len();
    body.push_str(&format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1));
    for offset in offsets {
        body.push_str(&format!("{offset:010} 00000 n \n"));
    }
    body.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    body.into_bytes()
}

fn stream(content: &str) -> String {
    format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn knowledge_layer_end_to_end() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;

    // Collections.
    let (status, info) = server
        .post(
            "/v1/collections",
            json!({ "name": "reports", "description": "Q3 reports", "metadata": { "team": "finance" } }),
        )
        .await;
    assert_eq!(status, 201, "{info}");
    for field in [
        "name",
        "description",
        "file_count",
        "chunk_count",
        "created_at",
        "updated_at",
        "backend",
        "metadata",
    ] {
        assert!(info.get(field).is_some(), "CollectionInfo lacks {field}");
    }
    assert_eq!(
        (
            info["backend"].clone(),
            info["file_count"].clone(),
            info["metadata"]["team"].clone()
        ),
        (json!("quarry"), json!(0), json!("finance"))
    );
    assert_eq!(
        server.post("/v1/collections", json!({ "name": "reports" })).await.0,
        400,
        "duplicate"
    );
    for bad in ["Reports", "a b", "", "../x"] {
        let (status, body) = server.post("/v1/collections", json!({ "name": bad })).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains("invalid collection name"),
            "{body}"
        );
    }
    let response = server
        .client
        .post(server.url("/v1/collections"))
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert!(response.json::<serde_json::Value>().await.unwrap()["detail"]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON body"));
    let (status, list) = server.get("/v1/collections").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["knowledge", "rag", "reports"]);
    assert_eq!(server.get("/v1/collections/reports").await.0, 200);
    let (status, body) = server.get("/v1/collections/nope").await;
    assert_eq!(
        (status, body),
        (404, json!({ "detail": "Collection 'nope' not found" }))
    );

    // An upload job: one good Markdown file, one good PDF, one corrupt PDF, one empty file, one binary.
    let files = [
        (
            "plan.md",
            b"# Plan\n\nBuy more GPUs for the vector search cluster.\n".to_vec(),
        ),
        ("q3.pdf", pdf_two_pages()),
        ("broken.pdf", b"%PDF-1.7 not really".to_vec()),
        ("empty.txt", Vec::new()),
        ("photo.png", b"\x89PNG\r\n\x1a\nxxxx".to_vec()),
    ];
    let (status, submitted) = server.upload("reports", &files).await;
    assert_eq!(status, 202, "{submitted}");
    assert_eq!(submitted["message"], "Ingestion job submitted for 5 file(s)");
    let file_ids: Vec<String> = submitted["file_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(file_ids.len(), 5);
    let job = server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    let job: IngestionJobStatus = serde_json::from_value(job).unwrap();
    assert_eq!(job.status, JobState::Completed);
    assert_eq!(
        (job.total_files, job.processed_files, job.progress_percent),
        (5, 5, 100.0)
    );
    assert!(job.started_at.is_some() && job.completed_at.is_some());
    let detail = |name: &str| -> &FileProgress { job.file_details.iter().find(|f| f.file_name == name).unwrap() };
    assert_eq!(detail("plan.md").status, FileStatus::Success);
    assert!(detail("plan.md").chunks_created >= 1);
    assert_eq!(detail("q3.pdf").status, FileStatus::Success);
    // Seed 004's message exactly; what was wrong in the file is kept apart.
    assert_eq!(
        detail("broken.pdf").error_message.as_deref(),
        Some("File appears corrupted. Please verify the file and try again.")
    );
    assert_eq!(detail("empty.txt").error_message.as_deref(), Some("file is empty"));
    assert_eq!(
        detail("photo.png").error_message.as_deref(),
        Some(format!("binary file: not a supported document format (PNG image); {SUPPORTED_FORMATS}").as_str())
    );
    // The job records its terminal state first and removes its uploads right after (a crash
    // in between must not leave a job to resume without its files): they go within moments.
    let uploads_left = || {
        std::fs::read_dir(data.path().join("uploads"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while uploads_left() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(uploads_left(), 0, "temporary files are removed");

    let (status, listed) = server.get("/v1/collections/reports/documents").await;
    assert_eq!(status, 200);
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 5);
    let plan = listed.iter().find(|f| f["file_name"] == "plan.md").unwrap();
    assert_eq!(
        (plan["status"].clone(), plan["collection_name"].clone()),
        (json!("success"), json!("reports"))
    );
    assert!(plan["uploaded_at"].is_string() && plan["ingested_at"].is_string());
    assert_eq!(
        listed.iter().find(|f| f["file_name"] == "empty.txt").unwrap()["status"],
        "failed"
    );
    let broken = listed.iter().find(|f| f["file_name"] == "broken.pdf").unwrap();
    assert_eq!(
        broken["error_message"],
        "File appears corrupted. Please verify the file and try again."
    );
    let why = broken["metadata"]["error_detail"].as_str().unwrap();
    assert!(why.starts_with("PDF could not be parsed"), "{why}");

    // Search sees the upload, with page numbers and citations from the PDF.
    let (status, result) = server
        .post(
            "/v1/collections/reports/search",
            json!({ "query": "how much did revenue grow", "top_k": 3 }),
        )
        .await;
    assert_eq!(status, 200, "{result}");
    let top = &result["chunks"][0];
    assert_eq!(
        (
            top["file_name"].clone(),
            top["page_number"].clone(),
            top["display_citation"].clone()
        ),
        (json!("q3.pdf"), json!(1), json!("q3.pdf, p.1"))
    );
    let (_, info) = server.get("/v1/collections/reports").await;
    assert_eq!(info["file_count"], 2);
    // The same query again: its embedding comes from the recent-query cache, same answer.
    let cache_hits = |metrics: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with("quarry_query_cache_total{result=\"hit\"}"))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .unwrap_or(0)
    };
    let before = cache_hits(
        &server
            .client
            .get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let (status, again) = server
        .post(
            "/v1/collections/reports/search",
            json!({ "query": "how much did revenue grow", "top_k": 3 }),
        )
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["chunks"], result["chunks"]);
    assert_eq!(
        cache_hits(
            &server
                .client
                .get(server.url("/metrics"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        ),
        before + 1
    );

    // Delete by original file name and by file id; a missing id fails alone.
    let plan_id = &file_ids[0];
    let (status, deleted) = server
        .delete(
            "/v1/collections/reports/documents",
            Some(json!({ "file_ids": ["q3.pdf", plan_id, "nope"] })),
        )
        .await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["total_deleted"], 2);
    assert_eq!(deleted["successful"], json!(["q3.pdf", plan_id]));
    assert_eq!(
        deleted["failed"],
        json!([{ "file_id": "nope", "error": "Not found or already deleted" }])
    );
    assert_eq!(deleted["message"], "Deleted 2 of 3 files");
    let (_, result) = server
        .post(
            "/v1/collections/reports/search",
            json!({ "query": "revenue GPUs margins", "top_k": 10, "mode": "hybrid" }),
        )
        .await;
    assert_eq!(
        result["chunks"],
        json!([]),
        "deleted files are hidden as soon as DELETE returns"
    );
    assert_eq!(result["underfilled"], true);

    // Bad inputs.
    assert_eq!(server.upload("nope", &[("a.txt", b"x".to_vec())]).await.0, 404);
    let empty_form = server
        .client
        .post(server.url("/v1/collections/reports/documents"))
        .multipart(reqwest::multipart::Form::new().text("note", "no files"))
        .send()
        .await
        .unwrap();
    assert_eq!(empty_form.status().as_u16(), 400);
    assert_eq!(
        server
            .post("/v1/collections/nope/search", json!({ "query": "x" }))
            .await
            .0,
        404
    );
    let (status, body) = server
        .post("/v1/collections/reports/search", json!({ "query": "x", "top_k": 0 }))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        server
            .post(
                "/v1/collections/reports/search",
                json!({ "query": "x", "min_score": 1.5 })
            )
            .await
            .0,
        400
    );
    assert_eq!(
        server
            .post(
                "/v1/collections/reports/search",
                json!({ "query": "x", "colour": "red" })
            )
            .await
            .0,
        400
    );
    assert_eq!(server.get("/v1/documents/no-such-job/status").await.0, 404);
    assert_eq!(
        server
            .delete("/v1/collections/reports/documents", Some(json!({ "file_ids": [] })))
            .await
            .0,
        400
    );

    // Health, readiness, metrics.
    let (status, health) = server.get("/v1/knowledge/health").await;
    assert_eq!(
        (status, health["status"].clone(), health["backend"].clone()),
        (200, json!("healthy"), json!("quarry"))
    );
    assert_eq!(server.get("/readyz").await.0, 200);
    assert_eq!(
        server
            .client
            .get(server.url("/healthz"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    let metrics = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in [
        "quarry_http_requests_total",
        "quarry_http_request_duration_seconds_bucket",
        "quarry_search_lane_duration_seconds",
        "quarry_search_queue_depth",
        "quarry_ingestion_jobs",
        "quarry_collection_snapshot_info",
    ] {
        assert!(metrics.contains(name), "metrics lack {name}");
    }
    assert!(metrics.contains("route=\"/v1/collections/{name}/search\""));
    assert!(
        metrics.contains("quarry_ingestion_jobs{state=\"completed\"} 1"),
        "{metrics}"
    );

    // Deleting the collection removes its data; it is gone afterwards.
    let (status, _) = server.delete("/v1/collections/reports", None).await;
    assert_eq!(status, 200);
    assert_eq!(server.get("/v1/collections/reports").await.0, 404);
    assert!(!data.path().join("collections/reports").exists());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_whose_files_all_fail_is_failed() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    let (_, submitted) = server
        .upload("c", &[("a.pdf", b"%PDF-1.4 junk".to_vec()), ("b.txt", Vec::new())])
        .await;
    let job = server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    assert_eq!(job["status"], "failed");
    assert_eq!(job["error_message"], "all 2 file(s) failed");
    assert_eq!(job["processed_files"], 2);
    server.stop().await;
}

/// A file indexed though part of it could not be read says so on its record (after a restart
/// too), in seed 004's document record, and as a file of a nightly run's snapshot; a file
/// read whole has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_file_read_in_part_says_what_was_not_read() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let files = [
        (
            "partial.pdf",
            crate::common::pdf_files::pdf_with_a_page_it_cannot_read("Harbour dues"),
        ),
        ("whole.md", b"# Tides\n\nThe harbour dries at low water.".to_vec()),
    ];
    let (_, submitted) = server.upload("knowledge", &files).await;
    let job = server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    assert_eq!(job["status"], "completed", "{job:#}");
    let warnings_of = |listed: &serde_json::Value, name: &str| -> Option<Vec<String>> {
        let file = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file_name"] == name)
            .unwrap();
        assert_eq!(file["status"], "success", "{file:#}");
        file["metadata"].get("warnings").map(|w| {
            w.as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect()
        })
    };
    let check = |listed: &serde_json::Value| {
        let warnings = warnings_of(listed, "partial.pdf").expect("the PDF's warnings");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("page 2 of 2: text could not be extracted (the PDF reader stopped: ")
                && warnings[0].ends_with("); it was left out"),
            "{warnings:?}"
        );
        assert_eq!(warnings_of(listed, "whole.md"), None);
    };
    let (status, listed) = server.get("/v1/collections/knowledge/documents").await;
    assert_eq!(status, 200);
    check(&listed);
    // The page it read is searchable.
    let (_, found) = server
        .post(
            "/v1/collections/knowledge/search",
            json!({ "query": "harbour dues", "top_k": 1 }),
        )
        .await;
    assert_eq!(found["chunks"][0]["file_name"], "partial.pdf", "{found:#}");
    // Seed 004's document record (the knowledge library is this collection) carries them too.
    let (status, library) = server.get("/api/knowledge/documents").await;
    assert_eq!(status, 200, "{library}");
    let pdf = library
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["filename"] == "partial.pdf")
        .unwrap();
    assert_eq!(pdf["metadata"]["warnings"].as_array().map(Vec::len), Some(1), "{pdf:#}");
    server.stop().await;

    // After a restart; and a nightly run's snapshot lists its file read in part alike.
    let (src, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (name, bytes) in &files {
        std::fs::write(src.path().join(name), bytes).unwrap();
    }
    http_common::batch_index(src.path(), root.path()).await;
    let mut opts = options(data.path());
    opts.collections = vec![("batch".into(), root.path().to_str().unwrap().into())];
    let server = TestServer::start(opts).await;
    for collection in ["knowledge", "batch"] {
        let (_, listed) = server.get(&format!("/v1/collections/{collection}/documents")).await;
        check(&listed);
    }
    server.stop().await;
}

/// Uploads and deletes from 4 clients at once: every one answered as it should be (no 500
/// from writers of one record tripping over each other), every upload recorded once, and the
/// records on disk the same as in memory. A retried upload with its Idempotency-Key gets the
/// first one's job.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_uploads_and_deletes_answer_truly_and_retries_do_not_duplicate() {
    let data = tempfile::tempdir().unwrap();
    let server = Arc::new(TestServer::start(options(data.path())).await);
    server.post("/v1/collections", json!({ "name": "c" })).await;
    let mut clients = Vec::new();
    for client in 0..4 {
        let server = server.clone();
        clients.push(tokio::spawn(async move {
            let mut kept = Vec::new();
            for i in 0..10 {
                let name = format!("c{client}-{i}.txt");
                let (status, body) = server
                    .upload(
                        "c",
                        &[(&name, format!("note {client} {i} about the harbour").into_bytes())],
                    )
                    .await;
                assert_eq!(status, 202, "{name}: {body}");
                let file_id = body["file_ids"][0].as_str().unwrap().to_string();
                if i % 3 == 0 {
                    server.wait_job(body["job_id"].as_str().unwrap()).await;
                    let (status, deleted) = server
                        .delete("/v1/collections/c/documents", Some(json!({ "file_ids": [file_id] })))
                        .await;
                    assert_eq!(status, 200, "{deleted}");
                } else {
                    kept.push((file_id, body["job_id"].as_str().unwrap().to_string()));
                }
            }
            kept
        }));
    }
    let mut kept = Vec::new();
    for client in clients {
        kept.extend(client.await.unwrap());
    }
    for (_, job_id) in &kept {
        assert_eq!(server.wait_job(job_id).await["status"], "completed");
    }
    let listed = |files: &serde_json::Value| {
        let mut ids: Vec<String> = files
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let mut want: Vec<String> = kept.iter().map(|(id, _)| id.clone()).collect();
    want.sort();
    let (status, files) = server.get("/v1/collections/c/documents").await;
    assert_eq!(status, 200);
    assert_eq!(listed(&files), want);
    // What is on disk is what is served.
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.path().join("files").join("c.json")).unwrap()).unwrap();
    assert_eq!(listed(&on_disk), want);
    let leftovers: Vec<_> = std::fs::read_dir(data.path().join("files"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A retry with the first attempt's key gets its job; another key makes another.
    let file = [("retried.txt", b"a report on the tides, sent twice".to_vec())];
    let (status, first) = server.upload_with_key("c", &file, Some("upload-42")).await;
    assert_eq!(status, 202, "{first}");
    let (status, again) = server.upload_with_key("c", &file, Some("upload-42")).await;
    assert_eq!(
        (status, &again["job_id"], &again["file_ids"]),
        (202, &first["job_id"], &first["file_ids"])
    );
    let (_, other) = server.upload_with_key("c", &file, Some("upload-43")).await;
    assert_ne!(other["job_id"], first["job_id"]);
    let (status, bad) = server.upload_with_key("c", &file, Some("ünïcode key")).await;
    assert_eq!(status, 400, "{bad}");
    assert!(bad["detail"].as_str().unwrap().contains("Idempotency-Key"), "{bad}");
    server.wait_job(first["job_id"].as_str().unwrap()).await;
    server.wait_job(other["job_id"].as_str().unwrap()).await;
    let (_, files) = server.get("/v1/collections/c/documents").await;
    let retried = files
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file_name"] == "retried.txt")
        .count();
    assert_eq!(retried, 2, "one per key: {files}");
    Arc::try_unwrap(server).ok().expect("clients done").stop().await;
}

/// No route, a wrong method: answered in the surface's documented error shape, not an empty body.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_routes_and_methods_answer_in_the_documented_shape() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (status, body) = server.get("/v1/nothing/here").await;
    assert_eq!(
        (status, body["detail"].as_str()),
        (404, Some("no route GET /v1/nothing/here")),
        "{body}"
    );
    let response = server.client.put(server.url("/v1/collections")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert!(
        response
            .headers()
            .get("allow")
            .is_some_and(|v| v.to_str().unwrap().contains("POST")),
        "{:?}",
        response.headers()
    );
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["detail"], "PUT is not allowed on /v1/collections");
    let (status, body) = server.post("/api/rag/nothing", json!({})).await;
    assert_eq!(
        (status, &body["error"], &body["message"]),
        (404, &json!("Not Found"), &json!("no route POST /api/rag/nothing")),
        "{body}"
    );
    let response = server.client.get(server.url("/api/rag/search")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"], "Method Not Allowed", "{body}");
    // Refused by an extractor before any handler ran (axum answers those in plain text).
    let (status, body) = server.get("/v1/collections/%FF%FE").await;
    assert_eq!(status, 400, "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("UTF-8")), "{body}");
    let response = server
        .client
        .post(server.url("/api/rag/search"))
        .header("content-type", "application/json")
        .body("{\"query\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        (&body["error"], &body["details"]["field"]),
        (&json!("Validation error"), &json!("body")),
        "seed 002's shape: {body}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn oversized_bodies_get_413() {
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.upload_limit = 4096;
    let server = TestServer::start(opts).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    let (status, body) = server.upload("c", &[("big.txt", vec![b'a'; 64 * 1024])]).await;
    assert_eq!(status, 413, "{body}");
    let (status, _) = server
        .post(
            "/api/rag/ingest",
            json!({ "source": "s", "path": "p", "title": "t", "text": "x".repeat(64 * 1024) }),
        )
        .await;
    assert_eq!(status, 413);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_keeps_everything_and_resumes_unfinished_jobs() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server
        .post(
            "/v1/collections",
            json!({ "name": "kept", "description": "survives restarts" }),
        )
        .await;
    let (_, submitted) = server
        .upload(
            "kept",
            &[("cats.md", b"# Cats\n\nCats sleep sixteen hours a day.".to_vec())],
        )
        .await;
    let job_id = submitted["job_id"].as_str().unwrap().to_string();
    server.wait_job(&job_id).await;
    // Mac OS Roman, which no guess gives: the part's charset is how its text is read.
    let ferry = "Die Fähre über den Fluß fährt stündlich.";
    let (_, typed) = server
        .upload_typed("kept", "ferry.txt", mac_roman(ferry), "text/plain; charset=macintosh")
        .await;
    let typed = server.wait_job(typed["job_id"].as_str().unwrap()).await;
    assert_eq!(typed["status"], "completed", "{typed}");
    let (_, rag) = server
        .post(
            "/api/rag/ingest",
            json!({ "source": "wiki", "path": "/dogs", "title": "Dogs", "text": "Dogs love long walks." }),
        )
        .await;
    server.stop().await;

    // A job the previous run accepted but never started: its record and its upload are on disk.
    let pending_id = "resumed-job";
    let upload_dir = data.path().join("uploads").join(pending_id);
    std::fs::create_dir_all(&upload_dir).unwrap();
    let birds = "Birds migrate south in winter. Die Vögel ziehen über die Straße nach Süden.";
    std::fs::write(upload_dir.join("file-resumed"), mac_roman(birds)).unwrap();
    let pending = IngestionJobStatus {
        job_id: pending_id.into(),
        status: JobState::Processing,
        submitted_at: chrono::Utc::now(),
        started_at: None,
        completed_at: None,
        total_files: 1,
        processed_files: 0,
        file_details: vec![FileProgress { file_id: "file-resumed".into(), file_name: "birds.txt".into(), status: FileStatus::Ingesting, progress_percent: 10.0, error_message: None, chunks_created: 0 }],
        collection_name: "kept".into(),
        backend: "quarry".into(),
        error_message: None,
        // The upload's tags and owner, as `submit` records them.
        metadata: json!({ "uploads": [{ "file_id": "file-resumed", "file_name": "birds.txt", "size": 76, "tags": ["wildlife"], "user_id": "ana", "content_type": "text/plain; charset=macintosh" }] }).as_object().cloned().unwrap(),
        progress_percent: 0.0,
        is_terminal: false,
    };
    std::fs::write(
        data.path().join("jobs").join(format!("{pending_id}.json")),
        serde_json::to_vec(&pending).unwrap(),
    )
    .unwrap();

    let server = TestServer::start(options(data.path())).await;
    let (status, info) = server.get("/v1/collections/kept").await;
    assert_eq!((status, info["description"].clone()), (200, json!("survives restarts")));
    let (_, old_job) = server.get(&format!("/v1/documents/{job_id}/status")).await;
    assert_eq!(old_job["status"], "completed");
    let (_, files) = server.get("/v1/collections/kept/documents").await;
    assert!(files
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["file_name"] == "cats.md" && f["status"] == "success"));
    let (_, result) = server
        .post(
            "/v1/collections/kept/search",
            json!({ "query": "how long do cats sleep" }),
        )
        .await;
    assert_eq!(result["chunks"][0]["file_name"], "cats.md");
    let (_, result) = server
        .post(
            "/v1/collections/kept/search",
            json!({ "query": "ferry every hour", "filters": { "file_name": ["ferry.txt"] } }),
        )
        .await;
    assert_eq!(result["chunks"][0]["content"], ferry, "{result}");
    let (_, found) = server.post("/api/rag/search", json!({ "query": "dogs walking" })).await;
    assert_eq!(found["results"][0]["metadata"]["documentId"], rag["documentId"]);

    let resumed = server.wait_job(pending_id).await;
    assert_eq!(resumed["status"], "completed", "{resumed}");
    let (_, result) = server
        .post(
            "/v1/collections/kept/search",
            json!({ "query": "bird migration", "filters": { "tags": ["wildlife"] } }),
        )
        .await;
    assert_eq!(
        result["chunks"][0]["file_name"], "birds.txt",
        "resumed with its upload's tags"
    );
    assert_eq!(
        result["chunks"][0]["content"], birds,
        "resumed with its upload's charset"
    );
    for (user, found) in [("ana", 1), ("ben", 0)] {
        let (_, result) = server
            .post(
                "/v1/collections/kept/search",
                json!({ "query": "bird migration", "filters": { "metadata": { "user_id": user } } }),
            )
            .await;
        assert_eq!(
            result["chunks"].as_array().unwrap().len(),
            found,
            "resumed with its upload's owner: {result}"
        );
    }
    server.stop().await;
}

/// `text` in Mac OS Roman.
fn mac_roman(text: &str) -> Vec<u8> {
    encoding_rs::MACINTOSH.encode(text).0.into_owned()
}

/// A job the process stopped in while parsing one of its files: at the next start that file
/// fails with the reason (it may be what stopped the process, so it is not parsed again) and
/// the job's other files are ingested.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_file_being_parsed_when_the_server_stopped_fails_at_the_next_start() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "kept" })).await;
    server.stop().await;

    let job_id = "stopped-job";
    let upload_dir = data.path().join("uploads").join(job_id);
    std::fs::create_dir_all(&upload_dir).unwrap();
    std::fs::write(upload_dir.join("file-fine"), "# Owls\n\nOwls hunt at night.").unwrap();
    std::fs::write(
        upload_dir.join("file-fatal"),
        "# Anything\n\nIts content does not matter here.",
    )
    .unwrap();
    let file = |file_id: &str, file_name: &str, status| FileProgress {
        file_id: file_id.into(),
        file_name: file_name.into(),
        status,
        progress_percent: 0.0,
        error_message: None,
        chunks_created: 0,
    };
    let stopped = IngestionJobStatus {
        job_id: job_id.into(),
        status: JobState::Processing,
        submitted_at: chrono::Utc::now(),
        started_at: Some(chrono::Utc::now()),
        completed_at: None,
        total_files: 2,
        processed_files: 0,
        file_details: vec![
            file("file-fatal", "fatal.md", FileStatus::Ingesting),
            file("file-fine", "owls.md", FileStatus::Uploading),
        ],
        collection_name: "kept".into(),
        backend: "quarry".into(),
        error_message: None,
        metadata: json!({ quarry_server::ingest::jobs::FILE_IN_PROGRESS: "file-fatal" })
            .as_object()
            .cloned()
            .unwrap(),
        progress_percent: 0.0,
        is_terminal: false,
    };
    std::fs::write(
        data.path().join("jobs").join(format!("{job_id}.json")),
        serde_json::to_vec(&stopped).unwrap(),
    )
    .unwrap();

    let server = TestServer::start(options(data.path())).await;
    let job = server.wait_job(job_id).await;
    assert_eq!(job["status"], "completed", "the other file made it: {job}");
    assert!(
        job["metadata"]
            .get(quarry_server::ingest::jobs::FILE_IN_PROGRESS)
            .is_none(),
        "{job}"
    );
    let fatal = job["file_details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file_id"] == "file-fatal")
        .unwrap()
        .clone();
    assert_eq!(
        (&fatal["status"], &fatal["error_message"]),
        (
            &json!("failed"),
            &json!(quarry_server::ingest::jobs::STOPPED_WHILE_PARSING)
        ),
        "{job}"
    );
    let (_, files) = server.get("/v1/collections/kept/documents").await;
    let status_of = |name: &str| {
        files
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file_name"] == name)
            .map(|f| f["status"].clone())
    };
    assert_eq!(
        (status_of("fatal.md"), status_of("owls.md")),
        (Some(json!("failed")), Some(json!("success"))),
        "{files}"
    );
    let (_, result) = server
        .post(
            "/v1/collections/kept/search",
            json!({ "query": "owls hunting at night" }),
        )
        .await;
    assert_eq!(result["chunks"][0]["file_name"], "owls.md");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_snapshot_lists_its_source_files_and_deletes_them_whole() {
    let (src, root, data) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let lines: String = (0..5).map(|i| format!("{}\n", json!({ "_id": format!("d{i}"), "title": format!("Doc {i}"), "text": format!("Passage number {i} about rivers and lakes.") }))).collect();
    std::fs::write(src.path().join("corpus.jsonl"), lines).unwrap();
    std::fs::write(src.path().join("notes.md"), "# Notes\n\nMountains and valleys.").unwrap();
    http_common::batch_index(src.path(), root.path()).await;
    let mut opts = options(data.path());
    opts.collections = vec![("batch".into(), root.path().to_str().unwrap().into())];
    let server = TestServer::start(opts).await;

    let (_, files) = server.get("/v1/collections/batch/documents").await;
    let files = files.as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    let corpus = files.iter().find(|f| f["file_name"] == "corpus.jsonl").unwrap();
    assert_eq!(corpus["metadata"]["doc_ids"].as_array().unwrap().len(), 5);
    assert_eq!(
        (corpus["chunk_count"].clone(), corpus["status"].clone()),
        (json!(5), json!("success"))
    );
    let (_, info) = server.get("/v1/collections/batch").await;
    assert_eq!(
        (info["file_count"].clone(), info["chunk_count"].clone()),
        (json!(2), json!(6))
    );

    let (status, deleted) = server
        .delete(
            "/v1/collections/batch/documents",
            Some(json!({ "file_ids": ["corpus.jsonl"] })),
        )
        .await;
    assert_eq!((status, deleted["total_deleted"].clone()), (200, json!(1)));
    let (_, result) = server
        .post(
            "/v1/collections/batch/search",
            json!({ "query": "rivers and lakes", "top_k": 10 }),
        )
        .await;
    let names: Vec<&str> = result["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes.md"], "every document of the deleted file is hidden");
    server.stop().await;
}

/// Chunks of an uploaded file whose text the collection already serves take the stored
/// vector (a revised file uploaded beside the old one embeds only its new chunks).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_uploaded_file_reuses_the_vectors_of_text_the_collection_holds() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    let text: String = [
        "tides",
        "glaciers",
        "deserts",
        "rivers",
        "volcanoes",
        "forests",
        "reefs",
        "caves",
    ]
    .iter()
    .map(|t| paragraph(t) + "\n\n")
    .collect();
    let upload = |name: &'static str, text: String| {
        let server = &server;
        async move {
            server.upload_completed("c", name, text.into_bytes()).await["file_details"][0]["chunks_created"]
                .as_u64()
                .unwrap()
        }
    };

    let first = upload("earth.txt", text.clone()).await;
    assert!(first >= 4);
    assert_eq!(
        server.ingested_chunks().await,
        (first, 0),
        "an empty collection has nothing to reuse"
    );
    let revised = upload("earth-v2.txt", format!("{text}{}", paragraph("auroras"))).await;
    let (embedded, reused) = server.ingested_chunks().await;
    let embedded = embedded - first;
    assert_eq!(embedded + reused, revised);
    assert!(
        reused >= 2 && embedded >= 1 && embedded < reused,
        "embedded {embedded}, reused {reused}"
    );

    // Every chunk of the revised file, reused or embedded, is found by its own text at cosine ~1.
    let chunks = server
        .assert_each_chunk_finds_itself("c", "paragraph", json!({ "file_name": "earth-v2.txt" }))
        .await;
    assert_eq!(chunks.len() as u64, revised, "{chunks:?}");
    server.stop().await;
}

/// A collection's version lists how its vectors were computed (CollectionInfo's
/// `embedding_precisions`): an upload whose every chunk took a stored vector adds nothing,
/// one that embedded adds the server's precision.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upload_adds_its_precision_only_when_it_embedded() {
    let (src, root, data) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let text = format!("{}\n\n{}", paragraph("tides"), paragraph("glaciers"));
    std::fs::write(src.path().join("earth.txt"), &text).unwrap();
    let mut run = RunOptions::new(
        src.path().to_str().unwrap(),
        root.path().to_str().unwrap(),
        http_common::common::model_dir(),
    );
    run.progress = ProgressMode::Quiet;
    let f32_embedder = Arc::new(http_common::common::load_embedder_at(
        BatchPolicy::default(),
        Precision::F32,
    ));
    run_with_embedder(run, f32_embedder).await.unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![("batch".into(), root.path().to_str().unwrap().into())];
    let server = TestServer::start(opts).await;
    let precisions =
        || async { server.get("/v1/collections/batch").await.1["metadata"]["embedding_precisions"].clone() };
    assert_eq!(precisions().await, json!(["cpu f32"]));

    server
        .upload_completed("batch", "earth-copy.txt", text.into_bytes())
        .await;
    let (embedded, reused) = server.ingested_chunks().await;
    assert!(embedded == 0 && reused >= 1, "embedded {embedded}, reused {reused}");
    assert_eq!(
        precisions().await,
        json!(["cpu f32"]),
        "every vector reused: nothing computed, nothing added"
    );

    server
        .upload_completed("batch", "moon.txt", paragraph("craters").into_bytes())
        .await;
    let own = http_common::common::embedder().info().precisions.clone();
    let mut both = vec!["cpu f32".to_string()];
    both.extend(own.into_iter().filter(|p| p != "cpu f32"));
    assert_eq!(
        precisions().await,
        json!(both),
        "moon.txt's vectors computed by the server"
    );
    server.stop().await;
}

/// A file of one paragraph per topic (each paragraph a chunk or more).
fn topics_file(topics: &[&str]) -> Vec<u8> {
    topics
        .iter()
        .map(|t| paragraph(t) + "\n\n")
        .collect::<String>()
        .into_bytes()
}

/// (content, score) of a search's chunks, checked best first, sorted for comparing.
fn scored(result: &serde_json::Value) -> Vec<(String, f64)> {
    let chunks = result["chunks"].as_array().unwrap_or_else(|| panic!("{result}"));
    let scores: Vec<f64> = chunks.iter().map(|c| c["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
    let mut pairs: Vec<(String, f64)> = chunks
        .iter()
        .map(|c| (c["content"].as_str().unwrap().to_string(), c["score"].as_f64().unwrap()))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

/// POST /v1/search ranks several collections' chunks as one collection holding them all
/// would (every mode: the keyword lane scores with all their BM25 statistics), names each
/// chunk's collection, searches every collection when none are named, and filters inside.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_collections_search_as_one() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (coast, ice) = (
        ["tides", "harbours", "lighthouses"],
        ["glaciers", "moraines", "ice sheets and tides"],
    );
    for name in ["coast", "ice", "both", "empty"] {
        server.post("/v1/collections", json!({ "name": name })).await;
    }
    server.upload_completed("coast", "coast.md", topics_file(&coast)).await;
    server.upload_completed("ice", "ice.md", topics_file(&ice)).await;
    let (status, submitted) = server
        .upload(
            "both",
            &[("coast.md", topics_file(&coast)), ("ice.md", topics_file(&ice))],
        )
        .await;
    assert_eq!(status, 202, "{submitted}");
    server.wait_job(submitted["job_id"].as_str().unwrap()).await;

    for mode in ["vector", "keyword", "hybrid", "auto"] {
        for query in ["tides", "glaciers and moraines"] {
            let body = json!({ "query": query, "mode": mode, "top_k": 50 });
            let (status, together) = server.post("/v1/search", json!({ "query": query, "mode": mode, "top_k": 50, "collections": ["coast", "ice", "empty", "coast"] })).await;
            assert_eq!(status, 200, "{together}");
            let (_, one) = server.post("/v1/collections/both/search", body).await;
            let (together_scored, one_scored) = (scored(&together), scored(&one));
            assert!(!one_scored.is_empty(), "{mode} {query}: {one}");
            assert_eq!(together_scored.len(), one_scored.len(), "{mode} {query}");
            for ((text, score), (one_text, one_score)) in together_scored.iter().zip(&one_scored) {
                assert_eq!(text, one_text, "{mode} {query}");
                assert!(
                    (score - one_score).abs() < 1e-4,
                    "{mode} {query}: {score} vs {one_score} for {text}"
                );
            }
            for chunk in together["chunks"].as_array().unwrap() {
                let from = if chunk["file_name"] == "coast.md" {
                    "coast"
                } else {
                    "ice"
                };
                assert_eq!(chunk["metadata"]["collection"], from, "{chunk}");
            }
        }
    }

    let (_, top) = server
        .post("/v1/search", json!({ "query": "moraines", "top_k": 3 }))
        .await;
    let collections: Vec<&str> = top["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["collection"].as_str().unwrap())
        .collect();
    assert!(
        collections[0] == "ice" || collections[0] == "both",
        "every collection searched when none are named: {top}"
    );
    assert!(
        collections.contains(&"ice") && collections.contains(&"both"),
        "{collections:?}"
    );
    let (_, filtered) = server
        .post(
            "/v1/search",
            json!({ "query": "moraines", "top_k": 50, "filters": { "file_name": "coast.md" } }),
        )
        .await;
    let filtered = filtered["chunks"].as_array().unwrap();
    assert!(
        !filtered.is_empty() && filtered.iter().all(|c| c["file_name"] == "coast.md"),
        "{filtered:?}"
    );
    // One chunk per document: each collection's copy of a file counts on its own; pages.
    let (_, all) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "top_k": 50, "collections": ["coast", "both"] }),
        )
        .await;
    assert!(
        all["chunks"].as_array().unwrap().len() > 3,
        "the files have several chunks each: {all}"
    );
    let (status, one_each) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "top_k": 50, "collections": ["coast", "both"], "max_chunks_per_document": 1 }),
        )
        .await;
    assert_eq!(status, 200, "{one_each}");
    let mut seen: Vec<String> = one_each["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}/{}",
                c["metadata"]["collection"].as_str().unwrap(),
                c["file_name"].as_str().unwrap()
            )
        })
        .collect();
    seen.sort();
    assert_eq!(seen, ["both/coast.md", "both/ice.md", "coast/coast.md"], "{one_each}");
    assert_eq!(one_each["underfilled"], true);
    let (_, second) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "top_k": 2, "offset": 2, "collections": ["coast", "both"] }),
        )
        .await;
    let ids = |r: &serde_json::Value| {
        r["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["chunk_id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&second), ids(&all)[2..4], "offset 2, top_k 2: results 3 and 4");
    let (_, marked) = server
        .post(
            "/v1/collections/coast/search",
            json!({ "query": "tides", "top_k": 1, "highlight": true }),
        )
        .await;
    let chunk = &marked["chunks"][0];
    let chars: Vec<char> = chunk["content"].as_str().unwrap().chars().collect();
    let ranges: Vec<(usize, usize)> = serde_json::from_value(chunk["metadata"]["highlights"].clone()).unwrap();
    assert!(
        !ranges.is_empty()
            && ranges
                .iter()
                .all(|&(from, to)| chars[from..to].iter().collect::<String>() == "tides"),
        "{marked}"
    );
    let (status, error) = server
        .post(
            "/v1/collections/coast/search",
            json!({ "query": "tides", "max_chunks_per_document": 0 }),
        )
        .await;
    assert!(
        status == 400 && error["detail"].as_str().unwrap().contains("max_chunks_per_document"),
        "{error}"
    );
    let (status, error) = server
        .post(
            "/v1/collections/coast/search",
            json!({ "query": "tides", "offset": 10_000 }),
        )
        .await;
    assert!(
        status == 400 && error["detail"].as_str().unwrap().contains("offset + top_k"),
        "{error}"
    );
    // Facets: documents by value over what the search could return, each collection's own.
    let facet_of = |result: &serde_json::Value, name: &str| -> Vec<(String, u64)> {
        result["facets"][name]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["value"].as_str().unwrap().to_string(), v["count"].as_u64().unwrap()))
            .collect()
    };
    let (status, counted) = server
        .post(
            "/v1/search",
            json!({ "query": "glaciers", "top_k": 1, "facets": ["file_name", "source"] }),
        )
        .await;
    assert_eq!(status, 200, "{counted}");
    assert_eq!(
        facet_of(&counted, "file_name"),
        [("coast.md".into(), 2), ("ice.md".into(), 2)],
        "{counted}"
    );
    assert_eq!(facet_of(&counted, "source"), [("upload".into(), 4)], "{counted}");
    let (_, keyword) = server
        .post(
            "/v1/search",
            json!({ "query": "glaciers", "mode": "keyword", "facets": ["file_name"] }),
        )
        .await;
    assert_eq!(
        facet_of(&keyword, "file_name"),
        [("ice.md".into(), 2)],
        "keyword mode counts the documents holding a query word: {keyword}"
    );
    let (_, empty) = server
        .post(
            "/v1/collections/empty/search",
            json!({ "query": "glaciers", "facets": ["tags"] }),
        )
        .await;
    assert_eq!(
        (
            &empty["facets"]["tags"]["documents"],
            empty["facets"]["tags"]["values"].as_array().map(Vec::len)
        ),
        (&json!(0), Some(0)),
        "{empty}"
    );
    assert!(marked.get("facets").is_none(), "no facets unless asked for: {marked}");
    let (status, error) = server
        .post(
            "/v1/collections/coast/search",
            json!({ "query": "tides", "facets": ["team"] }),
        )
        .await;
    assert!(
        status == 400 && error["detail"].as_str().unwrap().contains("cannot count `team`"),
        "{error}"
    );

    let (status, error) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "collections": ["coast", "nope"] }),
        )
        .await;
    assert_eq!(
        (status, error["detail"].as_str()),
        (404, Some("Collection 'nope' not found"))
    );
    let (status, error) = server
        .post("/v1/search", json!({ "query": "tides", "collections": [] }))
        .await;
    assert_eq!(status, 400, "{error}");
    let (status, error) = server
        .post("/v1/search", json!({ "query": "tides", "collections": "coast" }))
        .await;
    assert_eq!(status, 400, "{error}");
    let (status, error) = server
        .post("/v1/search", json!({ "query": "tides", "colections": ["coast"] }))
        .await;
    assert!(
        status == 400 && error["detail"].as_str().unwrap().contains("colections"),
        "{error}"
    );
    let (status, error) = server
        .post(
            "/v1/collections/coast/search",
            json!({ "query": "tides", "filters": { "metadata": { "year": { "$between": [2020, 2024] } } } }),
        )
        .await;
    assert_eq!(status, 400, "{error}");
    assert!(
        error["detail"]
            .as_str()
            .unwrap()
            .starts_with("metadata.year: unknown operator $between"),
        "{error}"
    );
    let (_, before) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "filters": { "ingested_before": "2000-01-01T00:00:00Z" } }),
        )
        .await;
    assert!(
        before["chunks"].as_array().unwrap().is_empty() && before["underfilled"] == true,
        "{before}"
    );
    let (_, after) = server
        .post(
            "/v1/search",
            json!({ "query": "tides", "filters": { "ingested_after": "2000-01-01T00:00:00Z" } }),
        )
        .await;
    assert!(!after["chunks"].as_array().unwrap().is_empty(), "{after}");
    let (status, error) = server.post("/v1/search", json!({ "query": " " })).await;
    assert_eq!(
        (status, error["detail"].as_str()),
        (
            400,
            Some("query must not be empty (or search by example with similar_to)")
        )
    );
    server.stop().await;
}

/// With API keys, every API route needs one (a header either way), search keys only read and
/// search, the probes, metrics and dashboard page stay open, and each surface refuses in its
/// own error shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_keys_guard_the_routes_by_role() {
    let (admin, search) = ("admin-key-0123456789", "search-key-0123456789");
    let data = tempfile::tempdir().unwrap();
    let mut serve = options(data.path());
    serve.api_keys = quarry_server::http::auth::ApiKeys::new(&[admin.into()], &[search.into()]).unwrap();
    let server = TestServer::start(serve).await;
    let call = |method: &str, path: &str, key: Option<(&str, &str)>, body: serde_json::Value| {
        let mut request = server.client.request(method.parse().unwrap(), server.url(path));
        if let Some((header, value)) = key {
            request = request.header(header, value);
        }
        if method != "GET" {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let challenge = response
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap().to_string());
            (
                status,
                challenge,
                response
                    .json::<serde_json::Value>()
                    .await
                    .unwrap_or(serde_json::Value::Null),
            )
        }
    };
    let (admin_bearer, search_bearer) = (format!("Bearer {admin}"), format!("Bearer {search}"));

    for open in ["/healthz", "/readyz", "/metrics", "/dashboard"] {
        assert_eq!(call("GET", open, None, json!(null)).await.0, 200, "{open}");
    }
    let (status, challenge, error) = call("GET", "/v1/collections", None, json!(null)).await;
    assert_eq!((status, challenge.as_deref()), (401, Some("Bearer")));
    assert!(
        error["detail"].as_str().unwrap().starts_with("missing API key"),
        "{error}"
    );
    let (status, _, error) = call(
        "GET",
        "/v1/collections",
        Some(("x-api-key", "admin-key-012345678X")),
        json!(null),
    )
    .await;
    assert_eq!((status, error["detail"].as_str()), (401, Some("invalid API key")));
    let (status, _, error) = call("POST", "/api/rag/search", None, json!({ "query": "tides" })).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (401, Some("Unauthorized")),
        "the RAG surface's shape: {error}"
    );

    let (status, _, created) = call(
        "POST",
        "/v1/collections",
        Some(("authorization", admin_bearer.as_str())),
        json!({ "name": "c" }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let (status, _, refused) = call(
        "POST",
        "/v1/collections",
        Some(("authorization", search_bearer.as_str())),
        json!({ "name": "d" }),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("needs an admin API key"),
        "{refused}"
    );
    let (status, _, refused) = call(
        "POST",
        "/api/rag/ingest",
        Some(("x-api-key", search)),
        json!({ "text": "tides", "source": "s" }),
    )
    .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (403, Some("Forbidden")),
        "{refused}"
    );
    assert_eq!(
        call("DELETE", "/v1/collections/c", Some(("x-api-key", search)), json!(null))
            .await
            .0,
        403
    );

    let form = || {
        reqwest::multipart::Form::new().part(
            "files",
            reqwest::multipart::Part::bytes(paragraph("tides").into_bytes()).file_name("tides.md"),
        )
    };
    let upload = |key: &'static str| {
        server
            .client
            .post(server.url("/v1/collections/c/documents"))
            .header("x-api-key", key)
            .multipart(form())
            .send()
    };
    assert_eq!(upload(search).await.unwrap().status().as_u16(), 403);
    let submitted: serde_json::Value = upload(admin).await.unwrap().json().await.unwrap();
    let job_path = format!("/v1/documents/{}/status", submitted["job_id"].as_str().unwrap());
    for _ in 0..600 {
        let (status, _, job) = call("GET", &job_path, Some(("x-api-key", search)), json!(null)).await;
        assert_eq!(status, 200, "a search key reads job status: {job}");
        if job["is_terminal"] == true {
            assert_eq!(job["status"], "completed", "{job}");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for (method, path, body) in [
        ("POST", "/v1/collections/c/search", json!({ "query": "tides" })),
        ("POST", "/v1/search", json!({ "query": "tides" })),
        ("GET", "/v1/collections/c/documents", json!(null)),
    ] {
        let (status, _, answer) = call(method, path, Some(("authorization", search_bearer.as_str())), body).await;
        assert_eq!(status, 200, "{method} {path}: {answer}");
    }
    let (_, _, found) = call(
        "POST",
        "/v1/collections/c/search",
        Some(("x-api-key", search)),
        json!({ "query": "tides" }),
    )
    .await;
    assert!(!found["chunks"].as_array().unwrap().is_empty(), "{found}");
    let stream = server
        .client
        .get(server.url("/v1/collections/c/events"))
        .header("x-api-key", search)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    drop(stream);
    server.stop().await;
}
