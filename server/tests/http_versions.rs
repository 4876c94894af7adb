//! A collection's versions over HTTP: the list, rollbacks (back, forward, refused) served when
//! the request returns, an upload after a rollback made elsewhere building on its target, and
//! an upload while a nightly run works on the collection's root surviving the run (and the
//! loaded segments' field indexes built in the background).

use crate::http_common;

use std::collections::HashSet;

use http_common::{batch_index, batch_index_calling, options, paragraph, ApiClient, TestServer};
use quarry_indexer::snapshot::{roll_back, RollbackOptions, RollbackTarget, SnapshotReader};
use quarry_indexer::store::StoreOptions;
use quarry_server::app::ServeOptions;
use serde_json::json;

/// A root with two nightly versions: alpha.md, then alpha.md and beta.md.
async fn two_nights() -> (tempfile::TempDir, String, String) {
    let (src, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        src.path().join("alpha.md"),
        format!("# Alpha\n\n{}", paragraph("alpine lakes")),
    )
    .unwrap();
    let first = batch_index(src.path(), root.path()).await;
    std::fs::write(
        src.path().join("beta.md"),
        format!("# Beta\n\n{}", paragraph("desert dunes")),
    )
    .unwrap();
    let second = batch_index(src.path(), root.path()).await;
    (root, first, second)
}

/// Serves `root` as the collection "nightly", with no polling.
fn serving(root: &tempfile::TempDir, data: &std::path::Path) -> ServeOptions {
    let mut opts = options(data);
    opts.collections = vec![("nightly".into(), root.path().to_str().unwrap().into())];
    opts
}

async fn files_found(server: &TestServer, query: &str) -> HashSet<String> {
    let (status, result) = server
        .post("/v1/collections/nightly/search", json!({ "query": query, "top_k": 10 }))
        .await;
    assert_eq!(status, 200, "{result}");
    result["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file_name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn versions_are_listed_and_a_rollback_is_served_when_it_returns() {
    let (root, first, second) = two_nights().await;
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(serving(&root, data.path())).await;
    let (status, listing) = server.get("/v1/collections/nightly/versions").await;
    assert_eq!(status, 200, "{listing}");
    assert_eq!(
        (&listing["latest"], &listing["served_version"]),
        (&json!(second), &json!(second))
    );
    let states: Vec<(&str, &str)> = listing["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_str().unwrap(), v["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [(first.as_str(), "earlier"), (second.as_str(), "latest")]);
    assert_eq!(listing["versions"][1]["documents"], 2);
    let run = &listing["versions"][1]["run"];
    assert_eq!(
        (
            &run["documents_written"],
            &run["documents_removed"],
            &run["documents_failed"]
        ),
        (&json!(1), &json!(0), &json!(0)),
        "the second night wrote beta.md: {listing}"
    );

    let (status, dry) = server
        .post("/v1/collections/nightly/rollback", json!({ "dry_run": true }))
        .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(
        (&dry["rollback"]["to"], &dry["rollback"]["dry_run"]),
        (&json!(first), &json!(true))
    );
    assert_eq!(
        server.state.collection("nightly").unwrap().version().as_deref(),
        Some(second.as_str())
    );
    let (status, body) = server
        .post(
            "/v1/collections/nightly/rollback",
            json!({ "version": "no-such-version" }),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("no version `no-such-version`"),
        "{body}"
    );
    let (status, body) = server
        .post("/v1/collections/nightly/rollback", json!({ "versoin": first }))
        .await;
    assert_eq!(status, 400, "an unknown field is refused: {body}");

    let (status, body) = server.post("/v1/collections/nightly/rollback", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rollback"]["abandoned"], json!([second]));
    assert!(
        body["rollback"]["verification"]["files_checked"].as_u64().unwrap() > 0,
        "{body}"
    );
    assert_eq!(
        body["collection"]["metadata"]["snapshot_version"],
        json!(first),
        "served when the request returns: {body}"
    );
    assert_eq!(
        files_found(&server, "desert dunes").await,
        HashSet::from(["alpha.md".to_string()])
    );
    let (status, body) = server.post("/v1/collections/nightly/rollback", json!({})).await;
    assert_eq!(status, 409, "nothing before the first version: {body}");

    let (status, body) = server
        .post(
            "/v1/collections/nightly/rollback",
            json!({ "version": second, "verify": false }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["rollback"]["verification"].is_null(), "{body}");
    assert_eq!(
        files_found(&server, "desert dunes").await,
        HashSet::from(["alpha.md".to_string(), "beta.md".to_string()])
    );
    let (_, listing) = server.get("/v1/collections/nightly/versions").await;
    assert_eq!(
        listing["versions"][1]["state"], "latest",
        "a rollback to it takes it back: {listing}"
    );

    let (status, created) = server.post("/v1/collections", json!({ "name": "fresh" })).await;
    assert_eq!(status, 201, "{created}");
    let (status, listing) = server.get("/v1/collections/fresh/versions").await;
    assert_eq!(
        (status, listing["versions"].clone(), listing["latest"].clone()),
        (200, json!([]), json!(null))
    );
    let (status, _) = server.get("/v1/collections/missing/versions").await;
    assert_eq!(status, 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upload_after_a_rollback_builds_on_the_version_rolled_back_to() {
    let (root, first, second) = two_nights().await;
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(serving(&root, data.path())).await; // no polling: only the upload can notice the rollback
    assert_eq!(
        server.state.collection("nightly").unwrap().version().as_deref(),
        Some(second.as_str())
    );

    let uri = root.path().to_str().unwrap();
    let report = roll_back(
        uri,
        &StoreOptions::default(),
        &RollbackOptions {
            target: RollbackTarget::Previous,
            verify: true,
            dry_run: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(report.to, first);
    server
        .upload_completed(
            "nightly",
            "gamma.md",
            format!("# Gamma\n\n{}", paragraph("coral reefs")).into_bytes(),
        )
        .await;

    let published = SnapshotReader::open(uri, &StoreOptions::default())
        .await
        .unwrap()
        .manifest()
        .clone();
    assert_eq!(
        published.counts.documents, 2,
        "alpha and gamma, not beta: {:?}",
        published.counts
    );
    let files = files_found(&server, "desert dunes").await;
    assert_eq!(
        files,
        HashSet::from(["alpha.md".to_string(), "gamma.md".to_string()]),
        "the rolled-back night's file stays gone"
    );
    server.stop().await;
}

static SERVER_BASE: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Uploads gamma.md through the server's HTTP API and waits for its job, while the run that
/// calls this has embedded and not yet published.
fn upload_during_the_run() {
    let base = SERVER_BASE.lock().unwrap().take().expect("set by the test");
    std::thread::spawn(move || {
        tokio::runtime::Runtime::new().unwrap().block_on(async move {
            ApiClient::new(base)
                .upload_completed(
                    "nightly",
                    "gamma.md",
                    format!("# Gamma\n\n{}", paragraph("coral reefs")).into_bytes(),
                )
                .await;
        })
    })
    .join()
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upload_while_a_nightly_run_works_survives_it_and_the_next_night() {
    let (src, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        src.path().join("alpha.md"),
        format!("# Alpha\n\n{}", paragraph("alpine lakes")),
    )
    .unwrap();
    let first = batch_index(src.path(), root.path()).await;
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(serving(&root, data.path())).await;

    // The next night adds beta.md; while it runs, gamma.md is uploaded to the served collection.
    std::fs::write(
        src.path().join("beta.md"),
        format!("# Beta\n\n{}", paragraph("desert dunes")),
    )
    .unwrap();
    *SERVER_BASE.lock().unwrap() = Some(server.base.clone());
    let night = batch_index_calling(src.path(), root.path(), Some(upload_during_the_run)).await;
    let uploaded = night
        .delta
        .as_ref()
        .and_then(|d| d.rebased_onto.clone())
        .expect("the run went on top of the upload's version");
    let uri = root.path().to_str().unwrap();
    let upload_version = SnapshotReader::open_version(uri, &uploaded, &StoreOptions::default())
        .await
        .unwrap();
    assert_eq!(
        upload_version.manifest().parent.as_deref(),
        Some(first.as_str()),
        "the upload built on the first night"
    );

    let (status, _) = server.post("/v1/collections/nightly/reload", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(server.state.collection("nightly").unwrap().version(), night.version);
    let everything = HashSet::from(["alpha.md".to_string(), "beta.md".to_string(), "gamma.md".to_string()]);
    assert_eq!(files_found(&server, "coral reefs and desert dunes").await, everything);

    // The loaded segments' field indexes are built in the background, ahead of any filter.
    let searcher = server.state.collection("nightly").unwrap().searcher().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !searcher
        .snapshot()
        .segments
        .iter()
        .all(|s| s.data.field_index.is_built())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "field indexes not built in the background"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    // A quiet night keeps the upload: it is not the source's to remove.
    let quiet = batch_index_calling(src.path(), root.path(), None).await;
    assert_eq!(
        quiet
            .delta
            .as_ref()
            .map(|d| (d.documents_removed, d.documents_from_api)),
        Some((0, 1))
    );
    server.post("/v1/collections/nightly/reload", json!({})).await;
    assert_eq!(files_found(&server, "coral reefs and desert dunes").await, everything);
    server.stop().await;
}
