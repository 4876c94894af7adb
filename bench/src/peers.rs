//! Runs the Python peers (bench/peers/peers.py) on the same vectors, index file, texts and
//! queries as quarry, in the same run, and reads their results.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use quarry_indexer::index::{ExactTruth, IndexSpec};
use serde::{Deserialize, Serialize};

use crate::ann_sweep::SweepPoint;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct PeerResults {
    pub faiss: Option<FaissPeer>,
    pub hnswlib: Option<HnswlibPeer>,
    pub bm25s: Option<Bm25sPeer>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaissPeer {
    pub version: String,
    pub sweep: Vec<SweepPoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HnswlibPeer {
    pub build_secs: f64,
    pub sweep: Vec<SweepPoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bm25sPeer {
    pub version: String,
    pub index_secs: f64,
    pub qps: f64,
    pub ndcg_at_10: Option<f64>,
}

/// (chunk text, document id) pairs for BM25, the queries and their judgements.
pub type PeerTexts = (
    Vec<(String, String)>,
    Vec<(String, String)>,
    Option<HashMap<String, HashMap<String, i32>>>,
);

/// What the peers get.
pub struct PeerInput<'a> {
    pub python: PathBuf,
    pub work: &'a Path,
    pub base: &'a [f32],
    pub queries: &'a [f32],
    pub dim: usize,
    /// Exact search's answers, which recall@10 is counted against (ties included).
    pub truth: &'a ExactTruth,
    pub faiss_index: &'a Path,
    pub spec: &'a IndexSpec,
    pub sweep_values: &'a [usize],
    /// (chunk text, document id) for BM25, with the query texts and judgements.
    pub texts: Option<PeerTexts>,
    pub repetitions: usize,
}

fn write_f32(path: &Path, data: &[f32]) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for x in data {
        file.write_all(&x.to_le_bytes())?;
    }
    file.flush()
}

fn write_jsonl(path: &Path, rows: impl Iterator<Item = serde_json::Value>) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for row in rows {
        writeln!(file, "{row}")?;
    }
    file.flush()
}

/// Writes the inputs and runs the peers script.
pub fn run(input: PeerInput<'_>) -> anyhow::Result<PeerResults> {
    let dir = input.work.join("peers");
    std::fs::create_dir_all(&dir)?;
    write_f32(&dir.join("base.f32"), input.base)?;
    write_f32(&dir.join("queries.f32"), input.queries)?;
    let (parameter, hnsw) = match input.spec {
        IndexSpec::Hnsw { m, ef_construction, .. } => (
            "efSearch",
            Some(serde_json::json!({ "m": m, "ef_construction": ef_construction })),
        ),
        IndexSpec::IvfFlat { .. } | IndexSpec::IvfPq { .. } => ("nprobe", None),
        IndexSpec::Flat => ("none", None),
    };
    let mut meta = serde_json::json!({
        "dim": input.dim,
        "repetitions": input.repetitions,
        "base": dir.join("base.f32"),
        "queries": dir.join("queries.f32"),
        "truth": input.truth.true_neighbours(),
        "kth_scores": input.truth.kth_scores(),
        "tie_tolerance": quarry_indexer::index::TIE_TOLERANCE,
        "scores_exactly": input.spec.scores_exactly(),
        "recall_k": crate::ann_sweep::RECALL_K,
        "faiss_index": input.faiss_index,
        "sweep_parameter": parameter,
        "sweep_values": input.sweep_values,
        "hnsw": hnsw,
    });
    if let Some((texts, queries, qrels)) = &input.texts {
        write_jsonl(
            &dir.join("texts.jsonl"),
            texts
                .iter()
                .map(|(text, doc)| serde_json::json!({ "text": text, "doc": doc })),
        )?;
        write_jsonl(
            &dir.join("query_texts.jsonl"),
            queries
                .iter()
                .map(|(id, text)| serde_json::json!({ "id": id, "text": text })),
        )?;
        meta["texts"] = serde_json::json!(dir.join("texts.jsonl"));
        meta["query_texts"] = serde_json::json!(dir.join("query_texts.jsonl"));
        meta["qrels"] = serde_json::to_value(qrels)?;
    }
    std::fs::write(dir.join("meta.json"), serde_json::to_vec(&meta)?)?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers/peers.py");
    let output = std::process::Command::new(&input.python)
        .arg(&script)
        .arg(dir.join("meta.json"))
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "running {} (install the peers with scripts/bench-peers.sh): {e}",
                input.python.display()
            )
        })?;
    anyhow::ensure!(
        output.status.success(),
        "peers failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(serde_json::from_slice(&output.stdout)?)
}
