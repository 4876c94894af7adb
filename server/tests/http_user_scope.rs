//! Seed 001's per-user scoping over real HTTP: an upload's `user_id` (the knowledge library's
//! and /v1's) makes its documents that user's, over any owner the file's own records name; a
//! search naming a user (`/api/knowledge/search`'s `user_id`, `/api/rag/search`'s
//! `filters.user_id`, /v1's `filters.metadata.user_id`) sees that user's documents only, and so
//! does the library's listing; owners survive a restart; a bad `user_id` is a 400 naming it.

use crate::http_common;

use std::time::Duration;

use http_common::{options, TestServer};
use serde_json::{json, Value};

const TEA: &str = "# Tea\n\nGreen tea steeps for two minutes at eighty degrees; black tea wants boiling water.\n";

async fn library_upload(server: &TestServer, file: &str, text: &str, user_id: Option<&str>) -> (u16, Value) {
    let mut form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(file.to_string()),
    );
    if let Some(user_id) = user_id {
        form = form.text("user_id", user_id.to_string());
    }
    server.post_form("/api/knowledge/documents", form).await
}

async fn ready(server: &TestServer, id: &str) -> Value {
    for _ in 0..600 {
        let (_, document) = server.get(&format!("/api/knowledge/documents/{id}")).await;
        if document["status"] == "ready" {
            return document;
        }
        assert_ne!(document["status"], "failed", "{document}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("document {id} did not get ready");
}

/// The document names a knowledge search finds for `body`.
async fn library_hits(server: &TestServer, body: Value) -> Vec<String> {
    let (status, results) = server.post("/api/knowledge/search", body).await;
    assert_eq!(status, 200, "{results}");
    let mut names: Vec<String> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["document_name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The file names a /v1 search of `notes` finds for `filters`.
async fn v1_hits(server: &TestServer, filters: Value) -> Vec<String> {
    let (status, result) = server
        .post(
            "/v1/collections/notes/search",
            json!({ "query": "how long does tea steep", "top_k": 20, "filters": filters }),
        )
        .await;
    assert_eq!(status, 200, "{result}");
    http_common::result_files(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uploads_belong_to_their_user_and_scoped_searches_see_only_theirs() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;

    // The knowledge library: the same text owned by two users, and once by nobody.
    let mut ids = Vec::new();
    for (file, user) in [
        ("alice.md", Some(" alice ")),
        ("bob.md", Some("bob")),
        ("shared.md", None),
    ] {
        let (status, pending) = library_upload(&server, file, TEA, user).await;
        assert_eq!(status, 202, "{pending}");
        assert_eq!(pending["user_id"], json!(user.map(str::trim)), "{pending}");
        ids.push(pending["id"].as_str().unwrap().to_string());
    }
    for id in &ids {
        ready(&server, id).await;
    }
    let query = |user: Option<&str>| {
        let mut body = json!({ "query": "how long does green tea steep", "top_k": 10, "similarity_threshold": 0.1 });
        if let Some(user) = user {
            body["user_id"] = json!(user);
        }
        body
    };
    assert_eq!(library_hits(&server, query(Some("alice"))).await, ["alice.md"]);
    assert_eq!(library_hits(&server, query(Some("bob"))).await, ["bob.md"]);
    assert!(library_hits(&server, query(Some("carol"))).await.is_empty());
    assert_eq!(
        library_hits(&server, query(None)).await,
        ["alice.md", "bob.md", "shared.md"],
        "no user named: every document"
    );
    let (status, listed) = server.get("/api/knowledge/documents?user_id=bob").await;
    assert_eq!(status, 200, "{listed}");
    let listed: Vec<&Value> = listed.as_array().unwrap().iter().collect();
    assert_eq!(
        listed
            .iter()
            .map(|d| (&d["filename"], &d["user_id"]))
            .collect::<Vec<_>>(),
        [(&json!("bob.md"), &json!("bob"))]
    );
    assert_eq!(
        server.get("/api/knowledge/documents").await.1.as_array().unwrap().len(),
        3
    );

    // Bad owners are refused, naming the field, in each surface's shape.
    let (status, refused) = library_upload(&server, "x.md", TEA, Some("   ")).await;
    assert_eq!(
        (status, &refused["details"]["field"]),
        (400, &json!("user_id")),
        "{refused}"
    );
    let (status, refused) = server
        .post("/api/knowledge/search", json!({ "query": "tea", "user_id": 7 }))
        .await;
    assert_eq!(
        (status, &refused["details"]["field"]),
        (400, &json!("user_id")),
        "{refused}"
    );
    let (status, refused) = server.get("/api/knowledge/documents?user_id=%20").await;
    assert_eq!(status, 400, "{refused}");
    let (status, refused) = server
        .post(
            "/api/rag/search",
            json!({ "query": "tea", "filters": { "user_id": ["a"] } }),
        )
        .await;
    assert_eq!(
        (status, &refused["details"]["field"]),
        (400, &json!("filters.user_id")),
        "{refused}"
    );

    // /v1: an upload's owner wins over the one its own records name.
    let (status, _) = server.post("/v1/collections", json!({ "name": "notes" })).await;
    assert_eq!(status, 201);
    let claimed = "{\"_id\": \"n1\", \"title\": \"Tea\", \"text\": \"Oolong tea steeps for three minutes.\", \"metadata\": {\"user_id\": \"mallory\"}}\n";
    for (file, text, user) in [
        ("carol.md", TEA, Some("carol")),
        ("claimed.jsonl", claimed, Some("carol")),
        ("dan.md", TEA, Some("dan")),
        ("open.md", TEA, None),
    ] {
        let mut form = reqwest::multipart::Form::new().part(
            "files",
            reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(file),
        );
        if let Some(user) = user {
            form = form.text("user_id", user);
        }
        let (status, job) = server.post_form("/v1/collections/notes/documents", form).await;
        assert_eq!(status, 202, "{job}");
        let done = server.wait_job(job["job_id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{done}");
    }
    assert_eq!(
        v1_hits(&server, json!({ "metadata": { "user_id": "carol" } })).await,
        ["carol.md", "claimed.jsonl"]
    );
    assert!(v1_hits(&server, json!({ "metadata": { "user_id": "mallory" } }))
        .await
        .is_empty());
    assert_eq!(
        v1_hits(&server, json!({ "metadata": { "user_id": "dan" } })).await,
        ["dan.md"]
    );
    let (_, files) = server.get("/v1/collections/notes/documents").await;
    let carol = files
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file_name"] == "carol.md")
        .unwrap();
    assert_eq!(carol["metadata"]["user_id"], "carol", "{carol}");

    // /api/rag: a document's metadata names its owner; filters.user_id scopes the search.
    let ingest =
        json!({ "source": "wiki", "path": "tea.md", "title": "Tea", "text": TEA, "metadata": { "user_id": "erin" } });
    let (status, created) = server.post("/api/rag/ingest", ingest).await;
    assert_eq!(status, 200, "{created}");
    for (user, found) in [("erin", 1), ("frank", 0)] {
        let (status, result) = server
            .post(
                "/api/rag/search",
                json!({ "query": "green tea", "filters": { "user_id": user } }),
            )
            .await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["results"].as_array().unwrap().len(), found, "{user}: {result}");
    }

    // Owners are kept in the snapshot and the file records: a restart scopes the same way.
    server.stop().await;
    let server = TestServer::start(options(data.path())).await;
    assert_eq!(library_hits(&server, query(Some("bob"))).await, ["bob.md"]);
    assert_eq!(
        v1_hits(&server, json!({ "metadata": { "user_id": "dan" } })).await,
        ["dan.md"]
    );
    let (_, listed) = server.get("/api/knowledge/documents?user_id=alice").await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    server.stop().await;
}
