//! A search by example over real HTTP (`similar_to`): a chunk's or a document's stored
//! embedding ranks the vector lane (several examples by their mean, steered away from
//! `unlike` examples), its own document left out unless asked for, across
//! segments and collections, with filters and a query's phrases still holding; the ids no
//! collection serves and the modes that cannot rank an example are refused, naming why.

use serde_json::{json, Value};

use crate::http_common::{options, result_files as files, TestServer};

/// Notes in pairs on one subject each, uploaded in two jobs so that each note's partner is in
/// another segment.
const FIRST: [(&str, &str); 3] = [
    (
        "harbour-fees.txt",
        "The harbour authority raised the mooring fees for yachts and fishing boats in the marina.",
    ),
    (
        "volcano-eruption.txt",
        "The volcano erupted at dawn, sending lava down its slopes and forcing villages to evacuate.",
    ),
    (
        "sourdough.txt",
        "Feed the sourdough starter with flour and water, then let the dough rise overnight before baking the loaf.",
    ),
];
const SECOND: [(&str, &str); 2] = [
    (
        "marina-berths.txt",
        "Boat owners pay the port a yearly charge for a berth at the marina's pontoons and moorings.",
    ),
    (
        "ash-cloud.txt",
        "Ash from the erupting volcano drifted over the island and the lava flow reached the sea.",
    ),
];
/// A note of two sections, a chunk each: one on the volcano, one on bread.
const TWO_SUBJECTS: &str = "# Eruption\n\nThe volcano erupted again and molten lava poured from the crater toward the valley.\n\n# Baking\n\nKnead the bread dough with yeast and flour, let it prove, then bake the loaf in a hot oven.\n";

fn first_file(result: &Value) -> &str {
    result["chunks"][0]["file_name"]
        .as_str()
        .unwrap_or_else(|| panic!("no chunks: {result}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_or_a_document_finds_what_resembles_it() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.create_collections(&["notes", "bakery", "empty"]).await;
    for batch in [&FIRST[..], &SECOND[..]] {
        server.upload_texts_completed("notes", batch).await;
    }
    server
        .upload_completed("notes", "two-subjects.md", TWO_SUBJECTS.as_bytes().to_vec())
        .await;
    server
        .upload_completed(
            "bakery",
            "bread.txt",
            b"Bake the bread: mix flour, water and a sourdough starter, let the dough rise, then bake the loaf."
                .to_vec(),
        )
        .await;
    let api = &server.api;
    let search = move |body: Value| async move { api.post("/v1/collections/notes/search", body).await };
    // A chunk's id and its document's, from a keyword search.
    let (_, found) = search(json!({"query": "mooring fees", "mode": "keyword", "top_k": 1})).await;
    assert_eq!(first_file(&found), "harbour-fees.txt", "{found}");
    let chunk_id = found["chunks"][0]["chunk_id"].as_str().unwrap().to_string();
    let doc_id = found["chunks"][0]["metadata"]["doc_id"].as_str().unwrap().to_string();

    // Like a chunk: the note on the same subject first, from another segment; its own
    // document never, ranked by the vector lane alone.
    let (status, like) = search(json!({"similar_to": {"chunk_id": chunk_id}, "top_k": 10})).await;
    assert_eq!(status, 200, "{like}");
    assert_eq!(first_file(&like), "marina-berths.txt", "{like}");
    assert!(!files(&like).contains(&"harbour-fees.txt".to_string()), "{like}");
    assert_eq!(like["mode"], "vector", "{like}");
    assert_eq!(like["query"], "");
    assert!(like["chunks"][0]["metadata"]["vector_rank"] == 1, "{like}");
    // Asked for, its own document is in: the chunk itself first, as like as can be.
    let (_, with_source) =
        search(json!({"similar_to": {"chunk_id": chunk_id, "include_source": true}, "top_k": 10})).await;
    assert_eq!(with_source["chunks"][0]["chunk_id"], chunk_id.as_str(), "{with_source}");
    assert!(
        with_source["chunks"][0]["score"].as_f64().unwrap() > 0.999,
        "{with_source}"
    );
    // A document of one chunk ranks as its chunk does.
    let (_, by_document) = search(json!({"similar_to": {"document_id": doc_id}, "top_k": 10})).await;
    let scores = |result: &Value| -> Vec<(String, f64)> {
        result["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["chunk_id"].as_str().unwrap().to_string(),
                    c["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (chunk_scores, document_scores) = (scores(&like), scores(&by_document));
    assert_eq!(chunk_scores.len(), document_scores.len());
    for ((a, x), (b, y)) in chunk_scores.iter().zip(&document_scores) {
        assert!(a == b && (x - y).abs() < 1e-4, "{like} {by_document}");
    }

    // A document of two subjects ranks by both: by the mean of its chunks' vectors, so each
    // chunk's cosine with it is the sum of its cosines with the two, over the mean's length.
    let (_, two) = search(json!({"query": "molten lava crater", "mode": "keyword", "top_k": 1})).await;
    assert_eq!(first_file(&two), "two-subjects.md", "{two}");
    let two_doc = two["chunks"][0]["metadata"]["doc_id"].as_str().unwrap().to_string();
    let two_chunk = two["chunks"][0]["chunk_id"].as_str().unwrap().to_string();
    let (_, baking) = search(json!({"query": "knead yeast", "mode": "keyword", "top_k": 1})).await;
    let baking_chunk = baking["chunks"][0]["chunk_id"].as_str().unwrap().to_string();
    assert_ne!(
        baking_chunk, two_chunk,
        "the note's two sections are two chunks: {baking}"
    );
    let (_, eruption) = search(json!({"similar_to": {"chunk_id": two_chunk}, "top_k": 2})).await;
    assert_eq!(
        files(&eruption),
        ["ash-cloud.txt", "volcano-eruption.txt"],
        "{eruption}"
    );
    let cosines = |result: &Value| -> std::collections::HashMap<String, f64> {
        result["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let cosine = c["metadata"]["vector_score"].as_f64().unwrap();
                (c["chunk_id"].as_str().unwrap().to_string(), cosine)
            })
            .collect()
    };
    let every = |example: Value| search(json!({"similar_to": example, "top_k": 20}));
    let (_, by_lava) = every(json!({"chunk_id": two_chunk, "include_source": true})).await;
    let (_, by_bread) = every(json!({"chunk_id": baking_chunk, "include_source": true})).await;
    let (_, by_both) = every(json!({"document_id": two_doc, "include_source": true})).await;
    let (lava, bread, both) = (cosines(&by_lava), cosines(&by_bread), cosines(&by_both));
    assert_eq!(both.len(), 7, "every chunk of the collection: {by_both}");
    let length = (2.0 + 2.0 * lava[&baking_chunk]).sqrt();
    for (chunk, cosine) in &both {
        let expected = (lava[chunk] + bread[chunk]) / length;
        assert!((cosine - expected).abs() < 1e-3, "{chunk}: {cosine} against {expected}");
    }
    let (_, both_subjects) = search(json!({"similar_to": {"document_id": two_doc}, "top_k": 3})).await;
    assert!(
        !files(&both_subjects).contains(&"two-subjects.md".to_string()),
        "{both_subjects}"
    );

    // Filters hold; so do a query's phrases and exclusions, and its words rank the keyword lane.
    let (_, filtered) = search(
        json!({"similar_to": {"chunk_id": chunk_id}, "filters": {"exclude": {"file_name": "marina-berths.txt"}}}),
    )
    .await;
    assert!(
        !files(&filtered).contains(&"marina-berths.txt".to_string()),
        "{filtered}"
    );
    let (status, excluded) = search(json!({"similar_to": {"chunk_id": two_chunk}, "query": "-lava"})).await;
    assert_eq!(status, 200, "{excluded}");
    assert!(
        !files(&excluded)
            .iter()
            .any(|f| f == "ash-cloud.txt" || f == "volcano-eruption.txt"),
        "{excluded}"
    );
    let (_, phrase) = search(json!({"similar_to": {"chunk_id": chunk_id}, "query": "\"sourdough starter\""})).await;
    assert_eq!(files(&phrase), ["sourdough.txt"], "{phrase}");
    let (status, fused) =
        search(json!({"similar_to": {"chunk_id": chunk_id}, "query": "volcano", "mode": "hybrid"})).await;
    assert_eq!(status, 200, "{fused}");
    assert_eq!(fused["mode"], "hybrid");
    assert!(
        fused["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["metadata"]["keyword_rank"].is_number()),
        "{fused}"
    );

    // Several collections as one: the bakery's bread is most like the sourdough note.
    let (_, sourdough) = search(json!({"query": "sourdough starter", "mode": "keyword", "top_k": 1})).await;
    let sourdough_chunk = sourdough["chunks"][0]["chunk_id"].as_str().unwrap().to_string();
    let (status, across) = api
        .post(
            "/v1/search",
            json!({"collections": ["notes", "bakery"], "similar_to": {"chunk_id": sourdough_chunk}, "top_k": 3}),
        )
        .await;
    assert_eq!(status, 200, "{across}");
    assert_eq!(first_file(&across), "bread.txt", "{across}");
    assert_eq!(across["chunks"][0]["metadata"]["collection"], "bakery", "{across}");

    // Several examples rank by their mean, and `unlike` examples by 2 × mean(likes) -
    // mean(unlikes): each chunk's cosine follows from its cosines with each example.
    let (_, by_harbour) = every(json!({"chunk_id": chunk_id, "include_source": true})).await;
    let harbour = cosines(&by_harbour);
    let between = harbour[&two_chunk];
    let pair = json!([{"chunk_id": chunk_id}, {"chunk_id": two_chunk}]);
    let (status, by_pair) = every(json!({"like": pair, "include_source": true})).await;
    assert_eq!(status, 200, "{by_pair}");
    let length = (2.0 + 2.0 * between).sqrt();
    for (chunk, cosine) in &cosines(&by_pair) {
        let expected = (harbour[chunk] + lava[chunk]) / length;
        assert!((cosine - expected).abs() < 1e-3, "{chunk}: {cosine} against {expected}");
    }
    let steered =
        json!({"like": [{"chunk_id": chunk_id}], "unlike": [{"chunk_id": two_chunk}], "include_source": true});
    let (_, away) = every(steered).await;
    let length = (5.0 - 4.0 * between).sqrt();
    let away = cosines(&away);
    assert!(away.len() >= 3, "{away:?}");
    for (chunk, cosine) in &away {
        let expected = (2.0 * harbour[chunk] - lava[chunk]) / length;
        assert!((cosine - expected).abs() < 1e-3, "{chunk}: {cosine} against {expected}");
    }
    // Without include_source, every example's document is left out.
    let (_, left_out) = search(json!({"similar_to": {"like": pair}, "top_k": 20})).await;
    let left = files(&left_out);
    assert!(
        !left.iter().any(|f| f == "harbour-fees.txt" || f == "two-subjects.md")
            && left.contains(&"marina-berths.txt".to_string()),
        "{left_out}"
    );

    // Refused, naming why.
    let refused = |status: u16, result: &Value, says: &str| {
        assert!(result.to_string().contains(says), "{status} {result} should say {says}");
    };
    let (status, unknown) = search(json!({"similar_to": {"chunk_id": "no-such-chunk-3"}})).await;
    assert_eq!(status, 404, "{unknown}");
    refused(status, &unknown, "no chunk `no-such-chunk-3` is served");
    let (status, elsewhere) = api
        .post(
            "/v1/collections/bakery/search",
            json!({"similar_to": {"chunk_id": chunk_id}}),
        )
        .await;
    assert_eq!(status, 404, "{elsewhere}");
    let (status, empty) = api
        .post(
            "/v1/collections/empty/search",
            json!({"similar_to": {"document_id": doc_id}}),
        )
        .await;
    assert_eq!(status, 404, "{empty}");
    let (status, two_ids) = search(json!({"similar_to": {"chunk_id": chunk_id, "document_id": doc_id}})).await;
    assert_eq!(status, 400);
    refused(status, &two_ids, "not both");
    let (status, keyword) =
        search(json!({"similar_to": {"chunk_id": chunk_id}, "query": "boats", "mode": "keyword"})).await;
    assert_eq!(status, 400);
    refused(status, &keyword, "mode keyword ranks by words alone");
    let (status, hybrid) = search(json!({"similar_to": {"chunk_id": chunk_id}, "mode": "hybrid"})).await;
    assert_eq!(status, 400);
    refused(status, &hybrid, "has none to rank by");
    let (status, nothing) = search(json!({"top_k": 3})).await;
    assert_eq!(status, 400);
    refused(status, &nothing, "or search by example with similar_to");
    let (status, unknown) =
        search(json!({"similar_to": {"like": [{"chunk_id": chunk_id}, {"document_id": "no-such-note"}]}})).await;
    assert_eq!(status, 404, "{unknown}");
    refused(status, &unknown, "no document `no-such-note` is served");
    let (status, unlikes_alone) = search(json!({"similar_to": {"unlike": [{"chunk_id": chunk_id}]}})).await;
    assert_eq!(status, 400);
    refused(status, &unlikes_alone, "similar_to needs a chunk_id");
    let (status, misspelt) = search(json!({"similar_to": {"chunk": chunk_id}})).await;
    assert_eq!(status, 400);
    refused(status, &misspelt, "similar_to");
    server.stop().await;
}
