//! Each document's layers (seed 003's L0 abstract and L1 overview), made at ingest by the
//! extractive summarizer on real corpora (msmarco-5k in English, JSQuAD in Japanese):
//! sentences of their own documents, the same on every run, kept by a delta run for the
//! documents it leaves alone, and made for every document once a run turns them on.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions, RunReport};
use quarry_indexer::snapshot::{DocumentRecord, SnapshotReader};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::summary::Summaries;

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

async fn index(source: &Path, out: &Path, summaries: Summaries) -> RunReport {
    let mut options = RunOptions::new(source.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    options.progress = ProgressMode::Quiet;
    options.summarizer = summaries.summarizer().expect("a built-in summarizer");
    run_with_embedder(options, common::embedder()).await.unwrap()
}

async fn documents(out: &Path) -> HashMap<String, DocumentRecord> {
    let reader = SnapshotReader::open(out.to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let documents = reader.read_documents().await.unwrap();
    documents.into_iter().map(|d| (d.uri.clone(), d)).collect()
}

/// The corpus lines' texts by their `_id`.
fn texts_by_id(jsonl: &str) -> HashMap<String, String> {
    jsonl
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                value["_id"].as_str().unwrap().to_string(),
                value["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn layers_are_sentences_of_their_documents_and_survive_a_delta_run() {
    let english = common::msmarco_slice(150);
    let japanese: String = std::fs::read_to_string(common::shared_dir().join("datasets/jsquad-ja/corpus.jsonl"))
        .unwrap()
        .lines()
        .take(40)
        .map(|l| format!("{l}\n"))
        .collect();
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("msmarco.jsonl"), &english).unwrap();
    std::fs::write(source.path().join("jsquad.jsonl"), &japanese).unwrap();
    std::fs::write(
        source.path().join("note.md"),
        "# Night runs\n\nThe nightly run indexes every changed file. Unchanged files keep their segments.\n",
    )
    .unwrap();
    let texts: HashMap<String, String> = texts_by_id(&english)
        .into_iter()
        .chain(texts_by_id(&japanese))
        .collect();

    let out = tempfile::tempdir().unwrap();
    let first = index(source.path(), out.path(), Summaries::Extractive).await;
    assert_eq!(first.documents_indexed, 191, "{:#?}", first.failures);
    let stored = documents(out.path()).await;
    let mut japanese_abstracts = 0;
    for document in stored.values() {
        let layers = &document.layers;
        assert!(!layers.abstract_text.is_empty(), "{} has no abstract", document.uri);
        assert!(
            layers.overview.contains(&layers.abstract_text),
            "{}: the overview holds the abstract: {layers:?}",
            document.uri
        );
        let Some((_, id)) = document.uri.split_once('#') else {
            continue;
        };
        let text = collapse(&texts[id]);
        assert!(
            text.contains(&layers.abstract_text),
            "{}: the abstract is a sentence of the document: {:?}",
            document.uri,
            layers.abstract_text
        );
        if id.starts_with("jsquad") {
            assert!(
                layers.abstract_text.ends_with('。'),
                "{}: {:?}",
                document.uri,
                layers.abstract_text
            );
            japanese_abstracts += 1;
        }
    }
    assert_eq!(japanese_abstracts, 40);
    let note = stored.values().find(|d| d.uri.ends_with("note.md")).unwrap();
    assert_eq!(note.layers.abstract_text, "The nightly run indexes every changed file.");

    // Deterministic: another root, the same layers.
    let again = tempfile::tempdir().unwrap();
    index(source.path(), again.path(), Summaries::Extractive).await;
    let layers_of = |docs: &HashMap<String, DocumentRecord>| -> HashMap<String, String> {
        docs.values()
            .map(|d| {
                (
                    d.doc_id.clone(),
                    format!("{}\n{}", d.layers.abstract_text, d.layers.overview),
                )
            })
            .collect()
    };
    assert_eq!(layers_of(&documents(again.path()).await), layers_of(&stored));

    // The next night only note.md changes: the others keep their records, layers included.
    std::fs::write(
        source.path().join("note.md"),
        "# Night runs\n\nA delta run writes only what changed. Everything else stays where it was.\n",
    )
    .unwrap();
    let second = index(source.path(), out.path(), Summaries::Extractive).await;
    let delta = second.delta.as_ref().expect("a delta run");
    assert_eq!((delta.files_unchanged, delta.documents_written), (2, 1), "{delta:?}");
    let after = documents(out.path()).await;
    for (uri, document) in &stored {
        if !uri.ends_with("note.md") {
            assert_eq!(after[uri].layers, document.layers, "{uri}");
        }
    }
    let note = after.values().find(|d| d.uri.ends_with("note.md")).unwrap();
    assert_eq!(note.layers.abstract_text, "A delta run writes only what changed.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_without_summaries_stores_none_and_the_next_one_with_them_writes_every_document() {
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("msmarco.jsonl"), common::msmarco_slice(30)).unwrap();
    let out = tempfile::tempdir().unwrap();
    index(source.path(), out.path(), Summaries::Off).await;
    assert!(documents(out.path())
        .await
        .values()
        .all(|d| d.layers.abstract_text.is_empty() && d.layers.overview.is_empty()));
    // Another summarizer is another parse signature: no record is left without layers.
    let report = index(source.path(), out.path(), Summaries::Extractive).await;
    let written = report
        .delta
        .as_ref()
        .map_or(report.documents_indexed, |d| d.documents_written);
    assert_eq!(written, 30, "{:?}", report.delta);
    assert!(documents(out.path())
        .await
        .values()
        .all(|d| !d.layers.abstract_text.is_empty()));
}
