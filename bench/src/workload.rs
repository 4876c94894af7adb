//! Declarative workloads (`bench/workloads/*.toml`): the dataset, model, chunker and index
//! settings, the query set, the load to apply, and which peers run beside quarry.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    pub dataset: Dataset,
    #[serde(default)]
    pub model: ModelSettings,
    #[serde(default)]
    pub chunker: ChunkerSettings,
    #[serde(default)]
    pub index: IndexSettings,
    #[serde(default)]
    pub search: SearchSettings,
    #[serde(default)]
    pub ann: AnnSettings,
    #[serde(default)]
    pub peers: PeerSettings,
    /// Repetitions of each timed measurement; the median is reported.
    #[serde(default = "one")]
    pub repetitions: usize,
}

fn one() -> usize {
    1
}

/// Where the documents (or vectors) come from.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Dataset {
    /// A BEIR folder; `limit` takes the first documents only. Judged queries give quality.
    Beir {
        path: PathBuf,
        limit: Option<usize>,
        split: Option<String>,
    },
    /// Seeded synthetic text documents, indexed through the real pipeline.
    SyntheticDocs {
        documents: usize,
        seed: u64,
        queries: Option<usize>,
    },
    /// Seeded clustered unit vectors (no embedding pass), for ANN at scale.
    SyntheticVectors {
        vectors: usize,
        clusters: usize,
        seed: u64,
        queries: Option<usize>,
    },
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    pub path: Option<PathBuf>,
    /// auto | cpu | cuda[:N]
    pub device: Option<String>,
    pub batch_tokens: Option<usize>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkerSettings {
    pub max_tokens: usize,
    pub overlap: usize,
}

impl Default for ChunkerSettings {
    fn default() -> Self {
        Self {
            max_tokens: 256,
            overlap: 32,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSettings {
    /// auto | flat | hnsw | ivf-flat | ivf-pq
    pub kind: String,
    pub m: Option<usize>,
    pub ef_construction: Option<usize>,
    pub ef_search: Option<usize>,
    pub nlist: Option<usize>,
    pub nprobe: Option<usize>,
}

impl Default for IndexSettings {
    fn default() -> Self {
        Self {
            kind: "auto".into(),
            m: None,
            ef_construction: None,
            ef_search: None,
            nlist: None,
            nprobe: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchSettings {
    pub modes: Vec<String>,
    pub concurrency: Vec<usize>,
    /// Requests per (mode, concurrency) point.
    pub requests: usize,
    /// Upper bound in seconds per point.
    pub max_seconds: f64,
    pub top_k: usize,
    /// Also measure through the HTTP server on loopback.
    pub http: bool,
    /// The HTTP server's settings, `quarry serve`'s defaults when not given: searches at once,
    /// query embedding threads, and the most queries one of their passes embeds.
    #[serde(default)]
    pub search_workers: Option<usize>,
    #[serde(default)]
    pub query_embed_threads: Option<usize>,
    #[serde(default)]
    pub query_pass_queries: Option<usize>,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            modes: vec!["vector".into(), "keyword".into(), "hybrid".into()],
            concurrency: vec![1, 8, 32],
            requests: 200,
            max_seconds: 30.0,
            top_k: 10,
            http: true,
            search_workers: None,
            query_embed_threads: None,
            query_pass_queries: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AnnSettings {
    /// efSearch values to sweep (HNSW).
    #[serde(default)]
    pub ef_search: Vec<usize>,
    /// nprobe values to sweep (IVF).
    #[serde(default)]
    pub nprobe: Vec<usize>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PeerSettings {
    /// Run faiss-cpu, hnswlib and bm25s (scripts/bench-peers.sh installs them).
    pub enabled: bool,
    /// The Python with the peers installed (default: .venv-bench/bin/python).
    pub python: Option<PathBuf>,
}

impl Workload {
    /// Reads a workload file; relative dataset paths are relative to the working directory.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let workload: Self = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        anyhow::ensure!(
            !workload.search.concurrency.is_empty() && workload.search.concurrency.iter().all(|c| *c > 0),
            "{}: search.concurrency needs positive levels",
            path.display()
        );
        for mode in &workload.search.modes {
            mode.parse::<quarry_server::Mode>()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        Ok(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_workload_loads() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                names.push(Workload::load(&path).unwrap_or_else(|e| panic!("{e:#}")).name);
            }
        }
        names.sort();
        assert!(
            names.contains(&"gpu-search".to_string()) && names.contains(&"smoke".to_string()),
            "{names:?}"
        );
    }

    #[test]
    fn a_typo_in_a_workload_is_refused_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("typo.toml");
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/smoke.toml")).unwrap();
        std::fs::write(&path, text.replace("top_k", "topk")).unwrap();
        let error = format!("{:#}", Workload::load(&path).unwrap_err());
        assert!(error.contains("typo.toml") && error.contains("topk"), "{error}");
    }
}
