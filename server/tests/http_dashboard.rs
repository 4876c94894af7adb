//! The dashboard and what it shows, over real HTTP: the page and every API call it makes,
//! upload tags (filters find them), and the queue position of a waiting job.

mod http_common;

use http_common::{options, paragraph, TestServer};
use serde_json::json;

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
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let root = no_redirects.get(server.url("/")).send().await.unwrap();
    assert_eq!((root.status().as_u16(), root.headers()["location"].to_str().unwrap()), (307, "/dashboard"));
    let page = server.client.get(server.url("/dashboard")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let page = page.text().await.unwrap();
    assert!(!page.contains("http://") && !page.contains("https://"), "the page loads nothing from elsewhere");

    server.post("/v1/collections", json!({ "name": "kept" })).await;
    server.post("/v1/collections", json!({ "name": "scratch" })).await;
    let job = server.upload_completed("kept", "notes.md", paragraph("tides").into_bytes()).await;
    let job_id = job["job_id"].as_str().unwrap();

    let calls = api_calls(&page);
    assert!(calls.len() >= 9, "{calls:?}");
    for (method, template) in &calls {
        // Deletes go to a collection the test can lose; the other calls to one with a job.
        let collection = if method == "DELETE" { "scratch" } else { "kept" };
        let path = filled(template, collection, job_id);
        let request = server.client.request(method.parse().unwrap(), server.url(&path));
        let request = if method == "GET" { request } else { request.json(&json!({})) };
        let status = request.send().await.unwrap().status().as_u16();
        // A body the route rejects is fine here (400); no route, or not this method, is not.
        assert!(![404, 405].contains(&status), "{method} {path} (from `{template}`) answered {status}");
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
            let form = reqwest::multipart::Form::new()
                .text("tags", tags)
                .part("files", reqwest::multipart::Part::bytes(paragraph("tides").into_bytes()).file_name(name));
            let response = server.client.post(server.url("/v1/collections/c/documents")).multipart(form).send().await.unwrap();
            (response.status().as_u16(), response.json::<serde_json::Value>().await.unwrap())
        }
    };
    // The field comes before the file here: the handler takes it wherever it is.
    let (status, submitted) = upload("tides.md", " ocean, science ,,ocean".into()).await;
    assert_eq!(status, 202, "{submitted}");
    server.wait_job(submitted["job_id"].as_str().unwrap()).await;
    let (_, files) = server.get("/v1/collections/c/documents").await;
    assert_eq!(files[0]["metadata"]["tags"], json!(["ocean", "science"]), "trimmed, empty ones and repeats dropped");

    let found = |tag: &'static str| {
        let server = &server;
        async move {
            let (status, result) = server.post("/v1/collections/c/search", json!({ "query": "tides", "filters": { "tags": [tag] } })).await;
            assert_eq!(status, 200, "{result}");
            result["chunks"].as_array().unwrap().len()
        }
    };
    assert!(found("science").await >= 1);
    assert_eq!(found("geology").await, 0);

    let too_many = (0..33).map(|i| format!("t{i}")).collect::<Vec<_>>().join(",");
    let (status, error) = upload("more.md", too_many).await;
    assert_eq!((status, error["detail"].as_str().unwrap()), (400, "tags: 33 given, at most 32"));
    let (status, error) = upload("more.md", "x".repeat(65)).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["detail"].as_str().unwrap().contains("longer than 64 characters"), "{error}");
    assert!(std::fs::read_dir(data.path().join("uploads")).map(|d| d.count()).unwrap_or(0) == 0, "a refused upload leaves no files behind");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiting_job_says_where_it_is_in_the_queue() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.post("/v1/collections", json!({ "name": "c" })).await;
    // Every ingestion slot taken: the jobs below wait, in the order they came.
    let slots = server.state.options.ingest_workers.max(1) as u32;
    let held = server.state.ingest_slots.clone().acquire_many_owned(slots).await.unwrap();
    let mut jobs = Vec::new();
    for topic in ["tides", "glaciers", "deserts"] {
        let (status, submitted) = server.upload("c", &[(&format!("{topic}.md"), paragraph(topic).into_bytes())]).await;
        assert_eq!(status, 202, "{submitted}");
        jobs.push(submitted["job_id"].as_str().unwrap().to_string());
    }
    for (at, job_id) in jobs.iter().enumerate() {
        let (_, job) = server.get(&format!("/v1/documents/{job_id}/status")).await;
        assert_eq!(job["status"], "pending", "{job}");
        assert_eq!((job["metadata"]["queue_position"].clone(), job["metadata"]["queue_length"].clone()), (json!(at + 1), json!(3)), "{job}");
    }
    drop(held);
    for job_id in &jobs {
        let job = server.wait_job(job_id).await;
        assert_eq!(job["status"], "completed", "{job}");
        assert!(job["metadata"].get("queue_position").is_none(), "{job}");
    }
    server.stop().await;
}
