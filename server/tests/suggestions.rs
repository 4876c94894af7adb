//! "Did you mean" over real HTTP (`"suggest": true`): a query's words that no live row of the
//! collections searched holds come back corrected to the index's nearest word, as its rows
//! write it and in the case they were typed in; words some row holds, words the query marks,
//! short words, words with digits, stop words of any language read and typing errors at a
//! word's first letter are left alone, and so are words of the embedding model's vocabulary;
//! a deleted document's words are no correction; several collections searched together
//! count their rows together. Typo tolerance (the default): the keyword lane reads each
//! word no live row holds as its correction too.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::http_common::{marked_words, options, result_files as files, TestServer};

/// The suggestion's query and its corrections as `word -> suggestion (edits, rows)`.
fn suggested(result: &Value) -> Option<(String, Vec<String>)> {
    let suggestion = result.get("suggestion")?;
    let corrections = suggestion["corrections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} -> {} ({}, {})",
                c["word"].as_str().unwrap(),
                c["suggestion"].as_str().unwrap(),
                c["edits"],
                c["rows"]
            )
        })
        .collect();
    Some((suggestion["query"].as_str().unwrap().to_string(), corrections))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_no_row_holds_are_corrected_to_the_nearest_word_the_rows_write() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    server.create_collections(&["notes", "garden"]).await;
    // Two uploads: two segments.
    server
        .upload_texts_completed(
            "notes",
            &[
                ("hydrogen.txt", "Hydrogen buses refuel at the depot every night."),
                ("tanks.txt", "The tanks hold hydrogen under pressure."),
                ("river.txt", "The banks of the river flood in spring."),
                ("roof.txt", "A tank of water stands on the roof."),
                ("wall.txt", "Fuel tanks line the depot wall."),
                ("task.txt", "Each task has an owner."),
                ("vent.txt", "Ventilation keeps the engine room cool."),
                ("lamp.txt", "The amber lamp glows at night."),
                (
                    "garten.txt",
                    "Die Kinder spielen im Garten hinter dem Haus, aber es regnet.",
                ),
                ("campus.txt", "The university opened a new library."),
            ],
        )
        .await;
    server
        .upload_texts_completed(
            "notes",
            &[
                ("lenders.txt", "Two banks lend to the harbour board."),
                ("hydrangea.txt", "Hydrangeas bloom blue in acid soil."),
                ("zeppelin.txt", "A zeppelin floated over the harbour at dawn."),
            ],
        )
        .await;
    server
        .upload_texts_completed("garden", &[("roses.txt", "Hydrangea and rose beds line the path.")])
        .await;
    let search = |body: Value| server.api.search_ok("notes", body);

    // Each misspelt word corrected; the typed case kept (a capital first, all capitals).
    let result = search(json!({"query": "Hydorgen bsues REFEUL", "suggest": true, "mode": "keyword"})).await;
    assert_eq!(
        suggested(&result),
        Some((
            "Hydrogen buses REFUEL".to_string(),
            vec![
                "Hydorgen -> Hydrogen (1, 2)".to_string(),
                "bsues -> buses (1, 1)".to_string(),
                "REFEUL -> REFUEL (1, 1)".to_string(),
            ]
        )),
        "{result}"
    );
    // The same in every mode; only when asked.
    for mode in ["vector", "hybrid", "auto"] {
        let result = search(json!({"query": "hydorgen", "suggest": true, "mode": mode})).await;
        assert_eq!(suggested(&result).unwrap().0, "hydrogen", "{mode}: {result}");
    }
    let result = search(json!({"query": "hydorgen", "mode": "keyword"})).await;
    assert!(result.get("suggestion").is_none(), "{result}");
    // Words some row holds are left alone: no suggestion at all.
    let result = search(json!({"query": "hydrogen buses at dawn", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");

    // The index holds the stem `tank`: the correction is the word its rows write nearest to
    // the word typed (tanks for tnaks; tank for tnak, though two rows write tanks and one tank).
    let result = search(json!({"query": "tnaks", "suggest": true})).await;
    assert_eq!(suggested(&result).unwrap().1, ["tnaks -> tanks (1, 3)"], "{result}");
    let result = search(json!({"query": "tnak", "suggest": true})).await;
    assert_eq!(suggested(&result).unwrap().1, ["tnak -> tank (1, 3)"], "{result}");
    // Two words a typing error away: the one more rows hold (tank: three rows, task: one).
    let result = search(json!({"query": "taks", "suggest": true})).await;
    assert_eq!(suggested(&result).unwrap().1, ["taks -> tanks (1, 3)"], "{result}");
    // A word no row holds a typing error from words that begin otherwise (banks, tanks) is
    // not corrected: a typing error at a word's first letter is not looked for.
    let result = search(json!({"query": "vanks", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");
    // A word of the model's vocabulary no row holds is a word, not a typing error (floor is
    // one error from flood, and the model reads it as one token).
    let result = search(json!({"query": "floor", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");
    // A stop word of a language the collection reads (aber, in the German note) is no
    // unknown word, though no English row holds `aber` (amber is one error away).
    let result = search(json!({"query": "aber", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");
    // An error in the part of a word its stemmer takes off hides the stem (ventilaton is not
    // read as ventil, ventilation's stem): the stem is found from the word's first letters.
    let result = search(json!({"query": "Ventilaton", "suggest": true})).await;
    assert_eq!(
        suggested(&result).unwrap().1,
        ["Ventilaton -> Ventilation (1, 1)"],
        "{result}"
    );
    // A stem near the word's stem written farther from it than the word's length allows:
    // none (univers is one error from unvers, university four from unverse; flood is one
    // from flod, and two from flods, where a word of five characters allows one).
    for query in ["unverse", "flods"] {
        let result = search(json!({"query": query, "suggest": true})).await;
        assert!(result.get("suggestion").is_none(), "{query}: {result}");
    }
    let result = search(json!({"query": "flodo", "suggest": true})).await;
    assert_eq!(suggested(&result).unwrap().1, ["flodo -> flood (1, 1)"], "{result}");

    // Marked words are left as they are; the rest of the query is kept as written.
    let result = search(json!({
        "query": "\"hydorgen bsues\" -refeul zepelin* tnaks~ hydrnageas",
        "suggest": true
    }))
    .await;
    assert_eq!(
        suggested(&result).unwrap().0,
        "\"hydrogen buses\" -refeul zepelin* tnaks~ hydrangeas",
        "{result}"
    );
    // Plain syntax: every word is text.
    let result = search(json!({"query": "hydorgen -refeul", "suggest": true, "query_syntax": "plain"})).await;
    assert_eq!(suggested(&result).unwrap().0, "hydrogen -refuel", "{result}");
    // Short words, words with digits and CJK text are not corrected.
    let result = search(json!({"query": "bsu hydorgen2 東京タワ", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");

    // Several collections as one: their rows count together, and the nearest written form
    // is found in either (hydrangea, one error, is the garden's; the notes write hydrangeas).
    let (status, together) = server
        .post("/v1/search", json!({"query": "hydrangae", "suggest": true}))
        .await;
    assert_eq!(status, 200, "{together}");
    assert_eq!(
        suggested(&together).unwrap().1,
        ["hydrangae -> hydrangea (1, 2)"],
        "{together}"
    );
    let result = search(json!({"query": "hydrangae", "suggest": true})).await;
    assert_eq!(
        suggested(&result).unwrap().1,
        ["hydrangae -> hydrangeas (2, 1)"],
        "{result}"
    );

    // A deleted document's words are no correction, and its words no longer count as known.
    let result = search(json!({"query": "zeppelni", "suggest": true})).await;
    assert_eq!(suggested(&result).unwrap().0, "zeppelin", "{result}");
    let (status, deleted) = server
        .delete(
            "/v1/collections/notes/documents",
            Some(json!({ "file_ids": ["zeppelin.txt"] })),
        )
        .await;
    assert_eq!(status, 200, "{deleted}");
    let gone = search(json!({"query": "zeppelin", "mode": "keyword"})).await;
    assert_eq!(gone["chunks"].as_array().unwrap().len(), 0, "deleted: {gone}");
    let result = search(json!({"query": "zeppelni", "suggest": true})).await;
    assert!(result.get("suggestion").is_none(), "{result}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyword_lane_reads_a_word_no_row_holds_as_its_correction() {
    let data = tempfile::tempdir().unwrap();
    let notes = [
        ("hydrogen.txt", "Hydrogen buses refuel at the depot every night."),
        ("river.txt", "The banks of the river flood in spring."),
        ("roof.txt", "A tank of water stands on the roof."),
        ("lamp.txt", "The amber lamp glows at night."),
    ];
    let server = TestServer::start_with_texts(data.path(), "notes", &notes).await;
    let search = |body: Value| server.api.search_ok("notes", body);

    // Keyword mode: the misspelt words find the rows of their corrections, marked as such.
    let body = json!({"query": "Hydorgen bsues", "mode": "keyword", "highlight": true});
    let result = search(body.clone()).await;
    assert_eq!(files(&result), ["hydrogen.txt"], "{result}");
    assert_eq!(marked_words(&result), ["Hydrogen", "buses"], "{result}");
    // Without typo tolerance the keyword lane finds no row.
    let mut strict = body.clone();
    strict["typo_tolerance"] = json!(false);
    assert_eq!(files(&search(strict).await), Vec::<String>::new());
    // A word some row holds is not widened (night: lamp.txt and hydrogen.txt, not roof.txt).
    let result = search(json!({"query": "nigth roof", "mode": "keyword"})).await;
    assert_eq!(files(&result), ["hydrogen.txt", "lamp.txt", "roof.txt"], "{result}");
    // A word of the model's vocabulary is read as typed (floor, one error from flood).
    let result = search(json!({"query": "floor", "mode": "keyword"})).await;
    assert_eq!(files(&result), Vec::<String>::new(), "{result}");
    // A phrase is still matched as typed.
    let result = search(json!({"query": "\"hydorgen buses\"", "mode": "keyword"})).await;
    assert_eq!(files(&result), Vec::<String>::new(), "{result}");

    // The vector lane also reads the query with its corrections: a row's cosine is the best
    // of the typed reading's and the corrected one's (`Hydrogen buses`).
    let cosines = |result: &Value| -> HashMap<String, f64> {
        result["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["file_name"].as_str().unwrap().to_string(),
                    c["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let every_row = |query: &str, tolerant: bool| json!({"query": query, "mode": "vector", "top_k": 10, "typo_tolerance": tolerant});
    let tolerant = search(every_row("Hydorgen bsues", true)).await;
    let typed = cosines(&search(every_row("Hydorgen bsues", false)).await);
    let corrected = cosines(&search(every_row("Hydrogen buses", true)).await);
    assert_eq!(tolerant["chunks"][0]["file_name"], "hydrogen.txt", "{tolerant}");
    assert!(
        corrected["hydrogen.txt"] > typed["hydrogen.txt"],
        "{corrected:?} {typed:?}"
    );
    for (file, cosine) in cosines(&tolerant) {
        let best = typed[&file].max(corrected[&file]);
        assert!(
            (cosine - best).abs() < 1e-5,
            "{file}: {cosine} for the best of {typed:?} and {corrected:?}"
        );
    }

    // `auto`: the model reads the corrected query whole and weighs the vector lane as for
    // `Hydrogen buses`; the keyword lane finds the corrections' rows.
    let result = search(json!({"query": "Hydorgen bsues"})).await;
    let right = search(json!({"query": "Hydrogen buses"})).await;
    assert_eq!(result["chunks"][0]["file_name"], "hydrogen.txt", "{result}");
    let weight = |result: &Value| result["chunks"][0]["metadata"]["auto_vector_weight"].clone();
    assert_eq!(weight(&result), weight(&right), "{result}");
    // Without typo tolerance no row holds a word of the query: the keyword lane finds nothing
    // and the vector lane takes its weight, so the rows score their cosine (a weight of 0,
    // from the model's reading, would score every row 0 and any min_score would drop them).
    let result = search(json!({"query": "Hydorgen bsues", "typo_tolerance": false, "min_score": 0.1})).await;
    let chunks = result["chunks"].as_array().unwrap();
    assert!(chunks.len() > 1, "{result}");
    for chunk in chunks {
        let (score, cosine) = (chunk["score"].as_f64().unwrap(), &chunk["metadata"]["vector_score"]);
        assert!(
            score > 0.1 && (score - cosine.as_f64().unwrap()).abs() < 1e-6,
            "{result}"
        );
        assert_eq!(chunk["metadata"]["auto_vector_weight"], 1.0, "{result}");
    }
    server.stop().await;
}
