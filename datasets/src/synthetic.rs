//! Seeded synthetic corpora: text documents with topical structure (for indexing runs of
//! any size) and clustered unit vectors (for ANN scale). The same seed gives the same data.

use crate::beir::CorpusDoc;

/// splitmix64: small, fast, and identical on every platform.
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (not empty), uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

const TOPICS: &[&[&str]] = &[
    &[
        "gpu",
        "kernel",
        "memory",
        "bandwidth",
        "tensor",
        "cuda",
        "throughput",
        "batch",
        "latency",
        "cache",
    ],
    &[
        "invoice", "revenue", "quarter", "margin", "forecast", "budget", "audit", "ledger", "tax", "cost",
    ],
    &[
        "patient",
        "clinical",
        "dose",
        "trial",
        "symptom",
        "diagnosis",
        "therapy",
        "cohort",
        "protein",
        "cell",
    ],
    &[
        "contract",
        "clause",
        "liability",
        "court",
        "statute",
        "party",
        "breach",
        "license",
        "claim",
        "appeal",
    ],
    &[
        "river", "climate", "rainfall", "forest", "species", "soil", "carbon", "glacier", "drought", "ocean",
    ],
    &[
        "query", "index", "search", "ranking", "vector", "keyword", "recall", "shard", "snapshot", "segment",
    ],
];
const COMMON: &[&str] = &[
    "the", "a", "of", "and", "to", "in", "is", "for", "with", "on", "that", "by", "this", "from", "as",
];

/// `n` documents of 40-200 words, each drawn mostly from one of six topics.
pub fn synthetic_documents(n: usize, seed: u64) -> Vec<CorpusDoc> {
    let mut rng = SeededRng::new(seed);
    (0..n)
        .map(|i| {
            let topic = TOPICS[rng.below(TOPICS.len())];
            let words = 40 + rng.below(160);
            let mut text = String::new();
            for w in 0..words {
                let word = match rng.below(10) {
                    0..=3 => COMMON[rng.below(COMMON.len())],
                    4 => TOPICS[rng.below(TOPICS.len())][rng.below(10)],
                    _ => topic[rng.below(topic.len())],
                };
                text.push_str(word);
                text.push(if w % 17 == 16 { '.' } else { ' ' });
                if w % 17 == 16 {
                    text.push(' ');
                }
            }
            let title = format!("{} {} report {i}", topic[rng.below(10)], topic[rng.below(10)]);
            CorpusDoc {
                id: format!("syn-{i}"),
                title,
                text: text.trim().to_string(),
            }
        })
        .collect()
}

/// Writes `documents` synthetic documents as BEIR-style JSONL files of at most `per_file`
/// lines (`corpus-00000.jsonl`, ...) into `dir`, so a run parses them in parallel. File `f`
/// is seeded with `seed ^ f`; ids are `syn-<file>-<line>`. Returns the files written.
pub fn write_synthetic_corpus(
    dir: &std::path::Path,
    documents: usize,
    per_file: usize,
    seed: u64,
) -> std::io::Result<Vec<std::path::PathBuf>> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let per_file = per_file.max(1);
    let mut files = Vec::new();
    for (file, first) in (0..documents).step_by(per_file).enumerate() {
        let path = dir.join(format!("corpus-{file:05}.jsonl"));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for (line, doc) in synthetic_documents(per_file.min(documents - first), seed ^ file as u64)
            .into_iter()
            .enumerate()
        {
            let record =
                serde_json::json!({ "_id": format!("syn-{file}-{line}"), "title": doc.title, "text": doc.text });
            writeln!(out, "{record}")?;
        }
        out.flush()?;
        files.push(path);
    }
    Ok(files)
}

/// `n` unit vectors of `dim` dimensions around `clusters` random centres (row-major).
pub fn clustered_unit_vectors(n: usize, dim: usize, clusters: usize, seed: u64) -> Vec<f32> {
    let mut rng = SeededRng::new(seed);
    let centres = ClusterCentres::draw(clusters, dim, &mut rng);
    let mut data = Vec::with_capacity(n * dim);
    for _ in 0..n {
        centres.push_vector(&mut rng, &mut data);
    }
    data
}

/// Random centres that unit vectors are drawn around.
pub struct ClusterCentres {
    dim: usize,
    /// One row of `dim` coordinates per cluster.
    centres: Vec<f64>,
}

impl ClusterCentres {
    /// Spread of a vector around its centre, per dimension (before normalizing).
    const SPREAD: f64 = 0.35;

    /// `clusters` (at least one) standard normal centres of `dim` dimensions.
    pub fn draw(clusters: usize, dim: usize, rng: &mut SeededRng) -> Self {
        Self {
            dim,
            centres: (0..clusters.max(1) * dim).map(|_| rng.normal()).collect(),
        }
    }

    /// Appends to `out` a unit vector near a centre `rng` picks.
    pub fn push_vector(&self, rng: &mut SeededRng, out: &mut Vec<f32>) {
        let dim = self.dim;
        let centre = &self.centres[rng.below(self.centres.len() / dim.max(1)) * dim..][..dim];
        let row: Vec<f64> = centre.iter().map(|c| c + Self::SPREAD * rng.normal()).collect();
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        out.extend(row.iter().map(|x| (x / norm) as f32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_corpus_splits_into_files_with_unique_ids() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_synthetic_corpus(dir.path(), 25, 10, 3).unwrap();
        assert_eq!(files.len(), 3);
        let mut ids = std::collections::HashSet::new();
        let mut lines = 0;
        for file in &files {
            for line in std::fs::read_to_string(file).unwrap().lines() {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                assert!(!value["text"].as_str().unwrap().is_empty());
                assert!(ids.insert(value["_id"].as_str().unwrap().to_string()), "duplicate id");
                lines += 1;
            }
        }
        assert_eq!(lines, 25);
        let again = tempfile::tempdir().unwrap();
        write_synthetic_corpus(again.path(), 25, 10, 3).unwrap();
        assert_eq!(
            std::fs::read(&files[1]).unwrap(),
            std::fs::read(again.path().join("corpus-00001.jsonl")).unwrap(),
            "seeded"
        );
    }

    #[test]
    fn seeded_and_well_formed() {
        assert_eq!(synthetic_documents(5, 7), synthetic_documents(5, 7));
        assert_ne!(synthetic_documents(5, 7), synthetic_documents(5, 8));
        let docs = synthetic_documents(50, 1);
        assert!(docs.iter().all(|d| d.text.split_whitespace().count() >= 40));
        let vectors = clustered_unit_vectors(100, 16, 4, 3);
        assert_eq!(vectors.len(), 1600);
        for row in vectors.chunks(16) {
            let norm: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5);
        }
        assert_eq!(vectors, clustered_unit_vectors(100, 16, 4, 3));
    }
}
