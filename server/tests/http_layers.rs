//! Seed 003's layers and seed 000's summaries over real HTTP: a search with `"layer": "L0"`
//! or `"L1"` answers once per document with its abstract or overview; the collection's
//! summaries (paged, with the seed's `available_documents` block, and the collection's own
//! layers, made again for a new version); a file's summary in its
//! FileInfo, for a batch run's file and for an upload.

use crate::http_common;

use std::collections::HashSet;

use http_common::{batch_index, common, options, TestServer};
use serde_json::{json, Value};

const GUIDE: &str = "# Setup\n\nQuarry installs with one command on a new machine. \
    The install script fetches the model weights and the FAISS library. \
    Afterwards the quick start indexes the sample corpus in a few seconds.\n";

async fn search(server: &TestServer, body: Value) -> Value {
    let (status, result) = server.post("/v1/collections/night/search", body).await;
    assert_eq!(status, 200, "{result}");
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn layered_searches_summaries_and_file_summaries() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("msmarco.jsonl"), common::msmarco_slice(60)).unwrap();
    std::fs::write(src.path().join("guide.md"), GUIDE).unwrap();
    let root = tempfile::tempdir().unwrap();
    batch_index(src.path(), root.path()).await;
    let data = tempfile::tempdir().unwrap();
    let mut opts = options(data.path());
    opts.collections = vec![("night".into(), root.path().to_str().unwrap().into())];
    let server = TestServer::start(opts).await;

    // The summaries: every document has one; pages of the same listing.
    let (status, all) = server.get("/v1/collections/night/summaries?limit=1000").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["total"], 61);
    let listed = all["documents"].as_array().unwrap();
    assert_eq!(listed.len(), 61);
    let guide = listed.iter().find(|d| d["file_name"] == "guide.md").unwrap();
    assert_eq!(guide["summary"], "Quarry installs with one command on a new machine.");
    assert!(guide["overview"].as_str().unwrap().contains("FAISS library"), "{guide}");
    let block = all["available_documents"].as_str().unwrap();
    assert!(block.starts_with("## Uploaded Documents\n\n"), "{block}");
    assert!(
        block.contains("- **guide.md**: Quarry installs with one command on a new machine.\n"),
        "{block}"
    );
    // The collection's own layers: its most central abstract, and the abstracts that stand
    // for it, the most central first, each a document's.
    let collection = &all["collection"];
    assert_eq!(collection["made_by"], "extractive-v1", "{collection}");
    assert_eq!(collection["from_documents"], 61, "{collection}");
    let (abstract_text, overview) = (
        collection["abstract"].as_str().unwrap(),
        collection["overview"].as_str().unwrap(),
    );
    let summaries: Vec<&str> = listed.iter().map(|d| d["summary"].as_str().unwrap()).collect();
    assert!(summaries.contains(&abstract_text), "{collection}");
    assert!(
        overview.starts_with(abstract_text) && overview.len() > abstract_text.len(),
        "{collection}"
    );
    let in_overview = summaries.iter().filter(|s| overview.contains(**s)).count();
    assert!((2..=5).contains(&in_overview), "{in_overview} abstracts: {collection}");
    let (_, page) = server.get("/v1/collections/night/summaries?offset=2&limit=3").await;
    assert_eq!(page["documents"].as_array().unwrap()[..], listed[2..5]);
    assert_eq!(
        page["collection"], all["collection"],
        "the same version's, whatever the page"
    );
    assert_eq!((page["total"].clone(), page["offset"].clone()), (json!(61), json!(2)));
    let (status, refused) = server.get("/v1/collections/night/summaries?limit=0").await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused["detail"]
        .as_str()
        .unwrap()
        .contains("limit must be between 1 and 1000"));
    let (status, _) = server.get("/v1/collections/nowhere/summaries").await;
    assert_eq!(status, 404);
    let summary_of = |doc_id: &str, field: &str| -> String {
        listed.iter().find(|d| d["document_id"] == doc_id).unwrap()[field]
            .as_str()
            .unwrap()
            .to_string()
    };

    // L0: one result per document, its abstract as the content, the matching chunk kept.
    let chunks = search(
        &server,
        json!({"query": "install the model weights", "mode": "hybrid", "top_k": 8}),
    )
    .await;
    let l0 = search(
        &server,
        json!({"query": "install the model weights", "mode": "hybrid", "top_k": 8, "layer": "L0"}),
    )
    .await;
    let results = l0["chunks"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    let documents: HashSet<&str> = results
        .iter()
        .map(|r| r["metadata"]["doc_id"].as_str().unwrap())
        .collect();
    assert_eq!(documents.len(), 8, "one result per document");
    for result in results {
        let doc_id = result["metadata"]["doc_id"].as_str().unwrap();
        assert_eq!(result["metadata"]["layer"], "L0");
        assert_eq!(result["content"], summary_of(doc_id, "summary"), "{result}");
        assert!(result["metadata"]["matched_chunk"].is_string(), "{result}");
    }
    assert_eq!(results[0]["file_name"], "guide.md", "{l0}");
    assert_eq!(results[0]["metadata"]["matched_chunk"], chunks["chunks"][0]["content"]);
    let tokens: u64 = results
        .iter()
        .map(|r| r["metadata"]["token_count"].as_u64().unwrap())
        .sum();
    assert_eq!(l0["total_tokens"], tokens, "the tokens of what is returned");
    assert_eq!(results[0]["metadata"]["token_count"], 11, "{}", results[0]);

    // L1: the overview; L2 (the default): the chunks.
    let l1 = search(
        &server,
        json!({"query": "install the model weights", "top_k": 3, "layer": "l1"}),
    )
    .await;
    let first = &l1["chunks"][0];
    assert_eq!(first["metadata"]["layer"], "L1");
    assert_eq!(
        first["content"],
        summary_of(first["metadata"]["doc_id"].as_str().unwrap(), "overview")
    );
    let l2 = search(
        &server,
        json!({"query": "install the model weights", "top_k": 3, "layer": "L2"}),
    )
    .await;
    assert_eq!(l2["chunks"][0]["content"], chunks["chunks"][0]["content"]);
    assert!(l2["chunks"][0]["metadata"].get("layer").is_none());
    let (status, refused) = server
        .post(
            "/v1/collections/night/search",
            json!({"query": "install", "layer": "L3"}),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["detail"].to_string().contains("unknown layer `L3`"),
        "{refused}"
    );

    // The batch run's file lists its summary.
    let (_, files) = server.get("/v1/collections/night/documents").await;
    let file_named = |name: &str| {
        files
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file_name"] == name)
            .unwrap()
            .clone()
    };
    let guide_file = file_named("guide.md");
    assert_eq!(
        guide_file["metadata"]["summary"],
        "Quarry installs with one command on a new machine."
    );
    // A JSONL file of many documents has none of its own.
    let jsonl = file_named("msmarco.jsonl");
    assert!(jsonl["metadata"].get("summary").is_none(), "{jsonl}");

    // An uploaded file gets its summary at ingest.
    let (status, created) = server.post("/v1/collections", json!({"name": "uploads"})).await;
    assert_eq!(status, 201, "{created}");
    let note = b"Tea notes\n\nGreen tea steeps for two minutes at eighty degrees. Black tea takes longer and hotter water. Milk goes in last.";
    server.upload_completed("uploads", "tea.txt", note.to_vec()).await;
    let (_, files) = server.get("/v1/collections/uploads/documents").await;
    let summary = files[0]["metadata"]["summary"].as_str().unwrap();
    assert!(
        std::str::from_utf8(note).unwrap().contains(summary) && summary.contains("tea"),
        "{files}"
    );
    let (_, summaries) = server.get("/v1/collections/uploads/summaries").await;
    assert_eq!(summaries["documents"][0]["summary"], summary);
    assert_eq!(
        (
            &summaries["collection"]["abstract"],
            &summaries["collection"]["from_documents"]
        ),
        (&json!(summary), &json!(1)),
        "one document: its abstract is the collection's"
    );
    // A new version makes them again, from its own documents.
    let owls = b"Owl notes\n\nOwls hunt small animals at night. Their ears find mice under the snow. Owls rest by day.";
    server.upload_completed("uploads", "owls.txt", owls.to_vec()).await;
    let (_, summaries) = server.get("/v1/collections/uploads/summaries").await;
    assert_eq!(summaries["collection"]["from_documents"], 2, "{summaries}");
    let overview = summaries["collection"]["overview"].as_str().unwrap();
    assert!(overview.contains(summary) && overview.contains("Owls"), "{summaries}");
    server.stop().await;
}
