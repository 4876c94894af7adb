//! What a search returns of its ranking: at most `max_chunks_per_document` chunks of a
//! document (its best, against a brute-force ranking, with the lanes looking deeper when one
//! document fills the first candidates), `offset` pages that are slices of one ranking, both
//! inside filters and across several collections searched as one; highlights of the query's
//! words in each result.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use quarry_indexer::chunk::ChunkerConfig;
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions};
use quarry_server::search::scope::SearchScope;
use quarry_server::{ChunkResult, Filters, LoadOptions, LoadedSnapshot, Mode, SearchRequest, Searcher, ServerError};

const QUERY: &str = "who invented the mercury thermometer and the Fahrenheit temperature scale";

/// 24 documents of four msmarco passages each, and `giant.txt`: the first passage (which
/// doc-00 also holds) forty times over, so its chunks fill the top of the ranking.
fn corpus(dir: &Path) {
    let passages: Vec<String> = common::msmarco_slice(96)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for (d, four) in passages.chunks(4).enumerate() {
        std::fs::write(dir.join(format!("doc-{d:02}.txt")), four.join("\n\n")).unwrap();
    }
    let giant: Vec<String> = (1..=40).map(|part| format!("Part {part}. {}", passages[0])).collect();
    std::fs::write(dir.join("giant.txt"), giant.join("\n\n")).unwrap();
}

async fn indexed() -> (tempfile::TempDir, Searcher) {
    let src = tempfile::tempdir().unwrap();
    corpus(src.path());
    let out = tempfile::tempdir().unwrap();
    let mut options = RunOptions::new(
        src.path().to_str().unwrap(),
        out.path().to_str().unwrap(),
        common::model_dir(),
    );
    options.chunker = ChunkerConfig {
        max_tokens: 64,
        overlap_tokens: 8,
    };
    options.progress = ProgressMode::Quiet;
    run_with_embedder(options, common::embedder()).await.unwrap();
    let searcher = searcher_of(out.path()).await;
    (out, searcher)
}

async fn searcher_of(root: &Path) -> Searcher {
    let loaded = LoadedSnapshot::load(root.to_str().unwrap(), &LoadOptions::default())
        .await
        .unwrap();
    Searcher::new(Arc::new(loaded), common::embedder()).unwrap()
}

/// Every row allowed by `filters`, scored by brute force (cosine, or BM25 normalized by the
/// best), best first.
fn brute_force(searcher: &Searcher, mode: Mode, filters: &Filters) -> Vec<(usize, f32)> {
    let snapshot = searcher.snapshot();
    let mut scored: Vec<(usize, f32)> = match mode {
        Mode::Vector => {
            let query = searcher.embed_query(QUERY).unwrap();
            (0..snapshot.row_count())
                .map(|row| {
                    (
                        row,
                        snapshot
                            .embedding(row)
                            .unwrap()
                            .iter()
                            .zip(&query)
                            .map(|(a, b)| a * b)
                            .sum::<f32>()
                            .clamp(0.0, 1.0),
                    )
                })
                .collect()
        }
        Mode::Keyword => {
            let all = searcher
                .keyword_lane(&QUERY.into(), snapshot.row_count(), None)
                .unwrap();
            let top = all[0].score;
            all.into_iter().map(|hit| (hit.row, hit.score / top)).collect()
        }
        Mode::Hybrid | Mode::Auto => unreachable!("fusions have no brute force"),
    };
    scored.retain(|&(row, _)| filters.matches(snapshot.document_of(row)));
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// The first `n` of `ranked` with at most `per_document` rows of a document: (doc_id, score).
fn collapsed(searcher: &Searcher, ranked: &[(usize, f32)], per_document: usize, n: usize) -> Vec<(String, f32)> {
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut kept = Vec::new();
    for &(row, score) in ranked {
        let doc = searcher.snapshot().document_of(row).doc_id.clone();
        let count = taken.entry(doc.clone()).or_default();
        if *count < per_document && kept.len() < n {
            *count += 1;
            kept.push((doc, score));
        }
    }
    kept
}

fn search(
    searcher: &Searcher,
    mode: Mode,
    top_k: usize,
    offset: usize,
    per_document: Option<usize>,
    filters: &Filters,
) -> Vec<ChunkResult> {
    let request = SearchRequest {
        query: QUERY.into(),
        mode,
        top_k,
        offset,
        max_chunks_per_document: per_document,
        filters: filters.clone(),
        ..Default::default()
    };
    searcher.search(&request).unwrap().result.chunks
}

fn doc_scores(chunks: &[ChunkResult]) -> Vec<(String, f32)> {
    chunks
        .iter()
        .map(|c| (c.metadata["doc_id"].as_str().unwrap().to_string(), c.score))
        .collect()
}

fn assert_same_ranking(got: &[(String, f32)], want: &[(String, f32)], what: &str) {
    assert_eq!(
        got.iter().map(|g| &g.0).collect::<Vec<_>>(),
        want.iter().map(|w| &w.0).collect::<Vec<_>>(),
        "{what}: documents in order"
    );
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.1 - w.1).abs() < 1e-4,
            "{what}: {} scored {} against {}",
            g.0,
            g.1,
            w.1
        );
    }
}

fn per_document_counts(chunks: &[ChunkResult]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for chunk in chunks {
        *counts
            .entry(chunk.metadata["doc_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_n_chunks_of_a_document_and_pages_of_one_ranking() {
    let (_out, searcher) = indexed().await;
    let none = Filters::default();
    let giant = searcher
        .snapshot()
        .documents()
        .find(|d| d.file_name == "giant.txt")
        .unwrap();
    assert!(
        giant.chunk_count >= 60,
        "the giant document has {} chunks",
        giant.chunk_count
    );
    let giant_id = giant.doc_id.clone();

    for mode in [Mode::Vector, Mode::Keyword] {
        let ranked = brute_force(&searcher, mode, &none);
        // Without a limit the giant document fills the first page: what the limit is for. The
        // first 20 candidates (a collapsed search's first pass) hold fewer than 10 documents,
        // so one per document makes the lanes look deeper.
        let plain = search(&searcher, mode, 10, 0, None, &none);
        assert!(
            per_document_counts(&plain)[&giant_id] >= 8,
            "{mode:?}: the giant document holds the first page"
        );
        assert!(
            collapsed(&searcher, &ranked[..20], 1, 10).len() < 10,
            "{mode:?}: the first 20 candidates hold 10 documents"
        );
        for per_document in [1, 3] {
            let got = search(&searcher, mode, 10, 0, Some(per_document), &none);
            assert_eq!(got.len(), 10, "{mode:?} {per_document}: top_k filled");
            assert!(per_document_counts(&got).values().all(|&n| n <= per_document));
            assert_same_ranking(
                &doc_scores(&got),
                &collapsed(&searcher, &ranked, per_document, 10),
                &format!("{mode:?} at most {per_document}"),
            );
        }
        // Pages are slices of one ranking, with and without the limit.
        for per_document in [None, Some(2)] {
            let whole = search(&searcher, mode, 21, 0, per_document, &none);
            let pages: Vec<ChunkResult> = (0..3)
                .flat_map(|page| search(&searcher, mode, 7, page * 7, per_document, &none))
                .collect();
            assert_eq!(
                pages.iter().map(|c| &c.chunk_id).collect::<Vec<_>>(),
                whole.iter().map(|c| &c.chunk_id).collect::<Vec<_>>(),
                "{mode:?} {per_document:?}: three pages of 7 are the first 21"
            );
        }
    }

    // Inside a filter: the giant and doc-00 left out, two per document of the rest.
    let filters = Filters {
        file_name: (1..24).map(|d| format!("doc-{d:02}.txt")).collect(),
        ..Filters::default()
    };
    let ranked = brute_force(&searcher, Mode::Vector, &filters);
    let got = search(&searcher, Mode::Vector, 12, 0, Some(2), &filters);
    assert_same_ranking(
        &doc_scores(&got),
        &collapsed(&searcher, &ranked, 2, 12),
        "filtered, at most 2",
    );

    // Hybrid: the limit holds and the fused scores stay best first.
    let got = search(&searcher, Mode::Hybrid, 10, 0, Some(1), &none);
    assert_eq!(got.len(), 10);
    assert!(per_document_counts(&got).values().all(|&n| n == 1));
    assert!(got.windows(2).all(|w| w[0].score >= w[1].score));

    // More per document than the corpus holds documents: what there is, underfilled; a page
    // past the end is empty.
    let request = SearchRequest {
        query: QUERY.into(),
        top_k: 30,
        max_chunks_per_document: Some(1),
        ..Default::default()
    };
    let result = searcher.search(&request).unwrap().result;
    assert_eq!((result.chunks.len(), result.underfilled), (25, true));
    let request = SearchRequest {
        query: QUERY.into(),
        top_k: 10,
        offset: 20,
        max_chunks_per_document: Some(1),
        ..Default::default()
    };
    assert_eq!(searcher.search(&request).unwrap().result.chunks.len(), 5);
    let rows = searcher.snapshot().row_count();
    let request = SearchRequest {
        query: QUERY.into(),
        top_k: 10,
        offset: rows,
        ..Default::default()
    };
    let result = searcher.search(&request).unwrap().result;
    assert!(result.chunks.is_empty() && result.underfilled);

    // Requests that cannot be served say why.
    for (request, message) in [
        (
            SearchRequest {
                query: QUERY.into(),
                max_chunks_per_document: Some(0),
                ..Default::default()
            },
            "max_chunks_per_document must be at least 1",
        ),
        (
            SearchRequest {
                query: QUERY.into(),
                top_k: 10,
                offset: 9_995,
                ..Default::default()
            },
            "offset + top_k must be at most 10000",
        ),
        (
            SearchRequest {
                query: QUERY.into(),
                offset: usize::MAX,
                ..Default::default()
            },
            "offset + top_k must be at most 10000",
        ),
        (
            SearchRequest {
                query: "é".repeat(10_001),
                ..Default::default()
            },
            "query is 10001 characters long; at most 10000",
        ),
    ] {
        match searcher.search(&request) {
            Err(ServerError::InvalidRequest(m)) => assert!(m.contains(message), "{m}"),
            other => panic!("{message}: {other:?}"),
        }
    }

    // Two collections holding the same documents: each collection's copy is a document of
    // its own, so one per document keeps both copies of each document it returns.
    let shared = Arc::new(searcher);
    let parts = vec![("a".to_string(), shared.clone()), ("b".to_string(), shared.clone())];
    let request = SearchRequest {
        query: QUERY.into(),
        top_k: 4,
        max_chunks_per_document: Some(1),
        ..Default::default()
    };
    let chunks = SearchScope::collections(&parts).search(&request).unwrap().result.chunks;
    let seen: Vec<(String, String)> = chunks
        .iter()
        .map(|c| {
            (
                c.metadata["collection"].as_str().unwrap().into(),
                c.metadata["doc_id"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(seen.len(), 4);
    assert_eq!(
        seen.iter().collect::<std::collections::HashSet<_>>().len(),
        4,
        "no copy twice: {seen:?}"
    );
    for (_, doc) in &seen {
        let collections: Vec<&str> = seen.iter().filter(|s| &s.1 == doc).map(|s| s.0.as_str()).collect();
        assert_eq!(
            collections.len(),
            2,
            "both copies of {doc} (equal scores) kept: {seen:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn highlights_mark_the_words_of_the_query() {
    let (_out, searcher) = indexed().await;
    let stems = [
        "who",
        "invent",
        "mercur",
        "thermometer",
        "fahrenheit",
        "temperatur",
        "scale",
    ];
    for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
        let request = SearchRequest {
            query: QUERY.into(),
            mode,
            top_k: 20,
            highlight: true,
            max_chunks_per_document: Some(2),
            ..Default::default()
        };
        let chunks = searcher.search(&request).unwrap().result.chunks;
        let mut marked_fahrenheit = 0;
        for chunk in &chunks {
            let chars: Vec<char> = chunk.content.chars().collect();
            let ranges: Vec<(usize, usize)> = serde_json::from_value(chunk.metadata["highlights"].clone()).unwrap();
            assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "{mode:?}: in order, apart");
            for &(from, to) in &ranges {
                let word: String = chars[from..to].iter().collect::<String>().to_lowercase();
                assert!(
                    stems.iter().any(|s| word.starts_with(s)),
                    "{mode:?}: {word:?} is not a query word"
                );
                assert!(
                    from == 0 || !chars[from - 1].is_alphanumeric(),
                    "{mode:?}: {word:?} is a whole word"
                );
                marked_fahrenheit += usize::from(word == "fahrenheit");
            }
            // Every "Fahrenheit" of the content is marked.
            let lower = chunk.content.to_lowercase();
            assert_eq!(
                ranges
                    .iter()
                    .filter(|r| chars[r.0..r.1].iter().collect::<String>().to_lowercase() == "fahrenheit")
                    .count(),
                lower.matches("fahrenheit").count(),
                "{mode:?} {}",
                chunk.content
            );
        }
        assert!(marked_fahrenheit > 0, "{mode:?}: the top results name Fahrenheit");
    }
    let plain = searcher.search(&SearchRequest::new(QUERY)).unwrap().result.chunks;
    assert!(
        plain.iter().all(|c| !c.metadata.contains_key("highlights")),
        "only when asked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_chunks_are_the_neighbours_in_the_document() {
    let (out, searcher) = indexed().await;
    let snapshot = searcher.snapshot();
    // Each document's chunks in order, read from the snapshot itself.
    let mut by_document: HashMap<String, Vec<(u32, String, String)>> = HashMap::new();
    for row in 0..snapshot.row_count() {
        let chunk = snapshot.chunk(row);
        by_document
            .entry(snapshot.document_of(row).doc_id.clone())
            .or_default()
            .push((chunk.index, chunk.chunk_id.clone(), chunk.text.clone()));
    }
    by_document.values_mut().for_each(|chunks| chunks.sort());
    let as_records = |chunks: &[(u32, String, String)]| -> serde_json::Value {
        chunks
            .iter()
            .map(|(index, id, text)| serde_json::json!({ "chunk_id": id, "chunk_index": index, "content": text }))
            .collect::<Vec<_>>()
            .into()
    };
    let (mut at_start, mut in_middle) = (0, 0);
    for mode in [Mode::Vector, Mode::Keyword] {
        let request = SearchRequest {
            query: QUERY.into(),
            mode,
            top_k: 25,
            context_chunks: 2,
            max_chunks_per_document: Some(1),
            ..Default::default()
        };
        for chunk in searcher.search(&request).unwrap().result.chunks {
            let chunks = &by_document[chunk.metadata["doc_id"].as_str().unwrap()];
            let at = chunks.iter().position(|c| c.1 == chunk.chunk_id).unwrap();
            assert_eq!(
                chunk.metadata["context_before"],
                as_records(&chunks[at.saturating_sub(2)..at]),
                "{mode:?} {}",
                chunk.chunk_id
            );
            assert_eq!(
                chunk.metadata["context_after"],
                as_records(&chunks[at + 1..(at + 3).min(chunks.len())]),
                "{mode:?} {}",
                chunk.chunk_id
            );
            at_start += usize::from(at == 0);
            in_middle += usize::from(at >= 2 && at + 2 < chunks.len());
        }
    }
    assert!(
        at_start > 0 && in_middle > 0,
        "first chunks ({at_start}) and chunks with two on each side ({in_middle}) were both checked"
    );
    let plain = searcher.search(&SearchRequest::new(QUERY)).unwrap().result.chunks;
    assert!(
        plain.iter().all(|c| !c.metadata.contains_key("context_before")),
        "only when asked"
    );

    // A tombstoned neighbour is passed over: a giant chunk with two before it loses the
    // nearer one.
    let giant = Filters {
        file_name: vec!["giant.txt".into()],
        ..Default::default()
    };
    let request = SearchRequest {
        query: QUERY.into(),
        top_k: 20,
        context_chunks: 1,
        filters: giant,
        ..Default::default()
    };
    let chunks = &by_document[&searcher
        .snapshot()
        .documents()
        .find(|d| d.file_name == "giant.txt")
        .unwrap()
        .doc_id];
    let position = |id: &str| chunks.iter().position(|c| c.1 == id).unwrap();
    let hit = searcher
        .search(&request)
        .unwrap()
        .result
        .chunks
        .into_iter()
        .find(|c| position(&c.chunk_id) >= 2)
        .unwrap();
    let at = position(&hit.chunk_id);
    common::publish_online(
        out.path().to_str().unwrap(),
        &Default::default(),
        "upload://c/note.txt",
        "note.txt",
        "An unrelated note.",
        vec![chunks[at - 1].1.clone()],
    )
    .await;
    let reloaded = searcher_of(out.path()).await;
    let again = reloaded
        .search(&request)
        .unwrap()
        .result
        .chunks
        .into_iter()
        .find(|c| c.chunk_id == hit.chunk_id)
        .unwrap();
    assert_eq!(hit.metadata["context_before"], as_records(&chunks[at - 1..at]));
    assert_eq!(
        again.metadata["context_before"],
        as_records(&chunks[at - 2..at - 1]),
        "the hidden chunk is passed over"
    );

    let request = SearchRequest {
        query: QUERY.into(),
        context_chunks: 11,
        ..Default::default()
    };
    assert!(
        matches!(searcher.search(&request), Err(ServerError::InvalidRequest(m)) if m.contains("context_chunks must be between 0 and 10"))
    );
}
