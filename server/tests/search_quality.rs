//! Retrieval quality on every set in ../shared/datasets. msmarco-5k (43 judged queries):
//! exact dense search at nDCG@10 = 0.798 ± 0.005, HNSW at default parameters >= 0.99 × exact.
//! On each set, the default mode (`auto`) within 0.01 of the better single lane, and at
//! least 0.79 on msmarco-5k; the keyword lane reads Japanese (jsquad-ja >= 0.80); each
//! segment records its languages and how the model reads them.

use crate::common;

use std::sync::Arc;

use quarry_datasets::beir::BeirDataset;
use quarry_indexer::index::IndexKind;
use quarry_indexer::pipeline::{
    run_with_embedder, version_readings, weak_reading_warning, ProgressMode, RunOptions, RunReport,
};
use quarry_server::search::eval::{evaluate, EvalReport};
use quarry_server::{LoadOptions, LoadedSnapshot, SearchRequest, Searcher};

/// Indexes the set's corpus (HNSW at its default parameters when `hnsw`) and evaluates every mode.
async fn indexed_and_evaluated(name: &str, hnsw: bool) -> (RunReport, EvalReport, Arc<Searcher>) {
    let dataset_dir = common::shared_dir().join("datasets").join(name);
    let out = tempfile::tempdir().unwrap();
    let mut options = RunOptions::new(
        dataset_dir.to_str().unwrap(),
        out.path().to_str().unwrap(),
        common::model_dir(),
    );
    options.source_options.include = vec!["corpus.jsonl".into()];
    if hnsw {
        options.index.kind = IndexKind::Hnsw;
    }
    options.progress = ProgressMode::Quiet;
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    let loaded = LoadedSnapshot::load(out.path().to_str().unwrap(), &LoadOptions::default())
        .await
        .unwrap();
    let searcher = Arc::new(Searcher::new(Arc::new(loaded), common::embedder()).unwrap());
    let dataset = BeirDataset::load(&dataset_dir, "test").unwrap();
    let evaluating = searcher.clone();
    let eval = tokio::task::spawn_blocking(move || evaluate(&evaluating, &dataset))
        .await
        .unwrap()
        .unwrap();
    for mode in &eval.modes {
        eprintln!(
            "{name}: {:<16} nDCG@10 {:.4}  recall@100 {:.4}",
            mode.mode, mode.summary.ndcg_at_10, mode.summary.recall_at_100
        );
    }
    (report, eval, searcher)
}

/// The default mode is `auto`, and it is within 0.01 nDCG@10 of the better single lane.
fn default_holds_to_the_better_lane(name: &str, eval: &EvalReport) -> f64 {
    assert_eq!(eval.default_mode, "auto");
    assert_eq!(SearchRequest::default().mode.as_str(), eval.default_mode);
    let vector = eval.mode("vector").unwrap().ndcg_at_10;
    let keyword = eval.mode("keyword").unwrap().ndcg_at_10;
    let default_mode = eval.mode(&eval.default_mode).unwrap().ndcg_at_10;
    assert!(
        default_mode >= vector.max(keyword) - 0.01,
        "{name}: default mode nDCG@10 {default_mode} more than 0.01 below the better lane ({vector} / {keyword})"
    );
    default_mode
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn msmarco_quality_bars() {
    let (report, eval, searcher) = indexed_and_evaluated("msmarco-5k", true).await;
    assert_eq!(report.documents_indexed, 5000);
    assert_eq!(eval.queries, 43);
    let exact = eval.mode("vector (exact)").unwrap().ndcg_at_10;
    let hnsw = eval.mode("vector").unwrap().ndcg_at_10;
    let keyword = eval.mode("keyword").unwrap().ndcg_at_10;
    assert!((exact - 0.798).abs() <= 0.005, "exact dense nDCG@10 = {exact}");
    assert!(hnsw >= 0.99 * exact, "HNSW nDCG@10 {hnsw} < 0.99 × exact {exact}");
    assert!(keyword > 0.5, "BM25 lane nDCG@10 = {keyword}");
    let default_mode = default_holds_to_the_better_lane("msmarco-5k", &eval);
    assert!(default_mode >= 0.79, "default mode nDCG@10 {default_mode} < 0.79");
    assert!(
        eval.ann_recall_at_10 >= 0.95,
        "ANN recall@10 = {}",
        eval.ann_recall_at_10
    );
    let check = report.recall_at_10.unwrap();
    assert!(check >= 0.95, "publish-time recall check = {check}");
    // English, read whole by the English model: no warning.
    let readings = version_readings(&searcher.snapshot().manifest);
    assert_eq!(readings[0].language, "eng");
    assert!(readings[0].reading.whole_share() > 0.8, "{readings:?}");
    assert_eq!(weak_reading_warning(&readings), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsquad_japanese_quality_bars() {
    let (_, eval, searcher) = indexed_and_evaluated("jsquad-ja", false).await;
    assert_eq!(eval.queries, 200);
    let keyword = eval.mode("keyword").unwrap().ndcg_at_10;
    assert!(keyword >= 0.80, "keyword lane nDCG@10 on Japanese = {keyword}");
    default_holds_to_the_better_lane("jsquad-ja", &eval);
    // Japanese, which the English model reads as single characters: measured and warned of.
    let readings = version_readings(&searcher.snapshot().manifest);
    assert_eq!(readings[0].language, "jpn");
    assert!(readings[0].reading.whole_share() < 0.5, "{readings:?}");
    let warning = weak_reading_warning(&readings).expect("a warning for a collection the model reads little of");
    assert!(
        warning.contains("Japanese") && warning.contains("vector search will be weak"),
        "{warning}"
    );
    let profile = searcher.snapshot().segments[0]
        .data
        .keyword
        .analyzer()
        .profile()
        .unwrap()
        .clone();
    assert!(profile.detected["jpn"] > 2500, "{profile:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xquadr_german_quality_bars() {
    let (_, eval, searcher) = indexed_and_evaluated("xquadr-de", false).await;
    assert_eq!(eval.queries, 200);
    default_holds_to_the_better_lane("xquadr-de", &eval);
    let readings = version_readings(&searcher.snapshot().manifest);
    assert_eq!(readings[0].language, "deu");
    assert!(
        weak_reading_warning(&readings).is_some_and(|w| w.contains("German")),
        "{readings:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cranfield_technical_quality_bars() {
    let (_, eval, _) = indexed_and_evaluated("cranfield-en", false).await;
    assert_eq!(eval.queries, 200);
    default_holds_to_the_better_lane("cranfield-en", &eval);
}
