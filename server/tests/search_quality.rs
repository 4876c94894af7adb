//! Retrieval quality on ../shared/datasets/msmarco-5k (43 judged queries): exact dense
//! search at nDCG@10 = 0.798 ± 0.005, HNSW at default parameters >= 0.99 × exact, and the
//! default mode at least as good as the better single lane.

#[path = "../../indexer/tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use quarry_datasets::beir::BeirDataset;
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions};
use quarry_indexer::index::IndexKind;
use quarry_server::eval::evaluate;
use quarry_server::{LoadOptions, LoadedSnapshot, SearchRequest, Searcher};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn msmarco_quality_bars() {
    let dataset_dir = common::shared_dir().join("datasets/msmarco-5k");
    let out = tempfile::tempdir().unwrap();
    let mut options = RunOptions::new(dataset_dir.to_str().unwrap(), out.path().to_str().unwrap(), common::model_dir());
    options.source_options.include = vec!["corpus.jsonl".into()];
    options.index.kind = IndexKind::Hnsw; // HNSW at its default parameters; exact search gives the flat figure
    options.progress = ProgressMode::Quiet;
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 5000);

    let loaded = LoadedSnapshot::load(out.path().to_str().unwrap(), &LoadOptions::default()).await.unwrap();
    let searcher = Searcher::new(Arc::new(loaded), common::embedder()).unwrap();
    let dataset = BeirDataset::load(&dataset_dir, "test").unwrap();
    let eval = tokio::task::spawn_blocking(move || evaluate(&searcher, &dataset)).await.unwrap().unwrap();
    for mode in &eval.modes {
        eprintln!("{:<16} nDCG@10 {:.4}  recall@100 {:.4}", mode.mode, mode.summary.ndcg_at_10, mode.summary.recall_at_100);
    }
    assert_eq!(eval.queries, 43);
    let exact = eval.mode("vector (exact)").unwrap().ndcg_at_10;
    let hnsw = eval.mode("vector").unwrap().ndcg_at_10;
    let keyword = eval.mode("keyword").unwrap().ndcg_at_10;
    let default_mode = eval.mode(SearchRequest::default().mode.as_str()).unwrap().ndcg_at_10;
    assert!((exact - 0.798).abs() <= 0.005, "exact dense nDCG@10 = {exact}");
    assert!(hnsw >= 0.99 * exact, "HNSW nDCG@10 {hnsw} < 0.99 × exact {exact}");
    assert!(keyword > 0.5, "BM25 lane nDCG@10 = {keyword}");
    assert!(default_mode >= hnsw.max(keyword) - 1e-9, "default mode nDCG@10 {default_mode} below the better lane ({hnsw} / {keyword})");
    assert!(eval.ann_recall_at_10 >= 0.95, "ANN recall@10 = {}", eval.ann_recall_at_10);
    let check = report.recall_at_10.unwrap();
    assert!(check >= 0.95, "publish-time recall check = {check}");
}
