//! Read-only replicas on one S3 root (moto_server on loopback): not ready until a version is
//! published, then each serves it and every later version within a poll interval; reads and
//! searches answer, every write is a 405 in its surface's shape.

use crate::http_common;

use std::time::{Duration, Instant};

use http_common::{common, options, TestServer};
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions};
use quarry_indexer::store::StoreOptions;
use serde_json::json;

const POLL: Duration = Duration::from_secs(1);

async fn publish(source: &std::path::Path, root: &str, store: &StoreOptions) -> String {
    let mut options = RunOptions::new(source.to_str().unwrap(), root, common::model_dir());
    options.out_store = store.clone();
    options.progress = ProgressMode::Quiet;
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    report.version.expect("a version was published")
}

/// Waits until `replica` serves `version` of `docs`; the time it took.
async fn served_within(replica: &TestServer, version: &str, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (_, versions) = replica.get("/v1/collections/docs/versions").await;
        if versions["served_version"].as_str() == Some(version) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{} still serves {}, not {version}",
            replica.base,
            versions["served_version"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_serve_each_published_version_and_refuse_writes() {
    let s3 = common::S3Server::start("quarry-replicas");
    let store = StoreOptions {
        s3_endpoint: Some(s3.endpoint.clone()),
    };
    let root = format!("s3://{}/snap/docs", s3.bucket);
    let start_replica = |data: &std::path::Path| {
        let mut opts = options(data);
        opts.collections = vec![("docs".into(), root.clone())];
        opts.store = store.clone();
        opts.poll_interval = Some(POLL);
        opts.read_only = true;
        opts
    };
    let (data_a, data_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let replicas = [
        TestServer::start(start_replica(data_a.path())).await,
        TestServer::start(start_replica(data_b.path())).await,
    ];

    // Nothing published yet: alive, not ready, and saying what it waits for.
    for replica in &replicas {
        let (status, body) = replica.get("/readyz").await;
        assert_eq!((status, body["waiting_for"].clone()), (503, json!(["docs"])), "{body}");
        assert_eq!(replica.get("/healthz").await.0, 200);
    }

    // The nightly run publishes; each replica serves it after its next poll.
    let source = tempfile::tempdir().unwrap();
    for name in ["a.md", "b.md"] {
        std::fs::write(
            source.path().join(name),
            format!("# {name}\n\nGraphics processors speed up vector search in {name}."),
        )
        .unwrap();
    }
    let first = publish(source.path(), &root, &store).await;
    for replica in &replicas {
        let took = served_within(replica, &first, POLL + Duration::from_secs(20)).await;
        eprintln!("{} served {first} {took:?} after the publish", replica.base);
        assert_eq!(replica.get("/readyz").await.0, 200);
        let (status, result) = replica
            .post(
                "/v1/collections/docs/search",
                json!({ "query": "graphics processors", "top_k": 5 }),
            )
            .await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["chunks"].as_array().unwrap().len(), 2, "{result}");
    }

    // Writes: 405 with the reason, in each surface's shape, with what the route still takes.
    let replica = &replicas[0];
    let refused = [
        ("POST", "/v1/collections", json!({ "name": "new" }), "GET"),
        ("DELETE", "/v1/collections/docs", json!({}), "GET"),
        ("POST", "/v1/collections/docs/reload", json!({}), ""),
        ("POST", "/v1/collections/docs/rollback", json!({}), ""),
        (
            "DELETE",
            "/v1/collections/docs/documents",
            json!({ "file_ids": ["a.md"] }),
            "GET",
        ),
    ];
    for (method, path, body, allow) in refused {
        let response = replica
            .client
            .request(method.parse().unwrap(), replica.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method} {path}");
        assert_eq!(response.headers()["allow"], allow, "{method} {path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert!(
            body["detail"].as_str().unwrap().contains("read-only replica"),
            "{method} {path}: {body}"
        );
    }
    let (status, body) = replica
        .post(
            "/api/rag/ingest",
            json!({ "source": "s", "path": "p", "title": "t", "text": "x" }),
        )
        .await;
    assert_eq!(status, 405);
    assert_eq!(body["error"], "Method Not Allowed", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("read-only replica"),
        "{body}"
    );
    // Reads and searches still answer; nothing was written.
    assert_eq!(replica.get("/v1/collections/docs/documents").await.0, 200);
    assert_eq!(replica.get("/v1/collections/docs/versions").await.0, 200);
    let (status, _) = replica.post("/v1/search", json!({ "query": "vector search" })).await;
    assert_eq!(status, 200);
    let (_, listed) = replica.get("/v1/collections").await;
    assert!(
        listed.as_array().unwrap().iter().all(|c| c["name"] != "new"),
        "{listed}"
    );

    // The next night changes a file: both replicas move to the new version.
    std::fs::write(
        source.path().join("b.md"),
        "# b.md\n\nAn inverted index answers keyword search on the CPU.",
    )
    .unwrap();
    let second = publish(source.path(), &root, &store).await;
    assert_ne!(first, second);
    for replica in &replicas {
        served_within(replica, &second, POLL + Duration::from_secs(20)).await;
        let (_, result) = replica
            .post(
                "/v1/collections/docs/search",
                json!({ "query": "inverted index keyword", "mode": "keyword", "top_k": 1 }),
            )
            .await;
        assert!(
            result["chunks"][0]["content"]
                .as_str()
                .unwrap()
                .contains("inverted index"),
            "{result}"
        );
    }
    for replica in replicas {
        replica.stop().await;
    }
}
