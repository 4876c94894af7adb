//! A seeded synthetic snapshot at any size, built without an embedding pass: synthetic
//! documents (datasets::synthetic) with clustered unit vectors, indexed and published like a
//! real run and labelled with the real model, so the Searcher serves it. For latency at scale.

use std::path::Path;

use quarry_datasets::synthetic::{clustered_unit_vectors, synthetic_documents};
use quarry_indexer::chunk::{Chunk, ChunkerConfig};
use quarry_indexer::embed::{Embeddings, ModelDir};
use quarry_indexer::index::{build_keyword_index, build_vector_index, IndexOptions};
use quarry_indexer::parse::{doc_id_for, ContentType};
use quarry_indexer::snapshot::{
    new_version_id, ChunkerManifest, Counts, DocumentRecord, IndexManifest, LatestExpected, Manifest, SnapshotWriter,
};
use quarry_indexer::store::StoreOptions;

/// Writes a snapshot of `chunks` synthetic one-chunk documents into `out`.
pub async fn write_synthetic_snapshot(
    out: &Path,
    chunks: usize,
    seed: u64,
    model: &ModelDir,
    index: &IndexOptions,
) -> anyhow::Result<Manifest> {
    let dim = model.hidden_size;
    let documents = synthetic_documents(chunks, seed);
    let vectors = clustered_unit_vectors(chunks, dim, 256, seed ^ 0xABCD);
    let now = chrono::Utc::now();
    let mut rows = Vec::with_capacity(chunks);
    let mut records = Vec::with_capacity(chunks);
    for doc in &documents {
        let uri = format!("synthetic://seed-{seed}/corpus.jsonl#{}", doc.id);
        let doc_id = doc_id_for(&uri);
        rows.push(Chunk {
            chunk_id: format!("{doc_id}-0"),
            doc_id: doc_id.clone(),
            index: 0,
            text: format!("{}\n\n{}", doc.title, doc.text),
            page: None,
            heading_path: vec![doc.title.clone()],
            content_type: ContentType::Text,
            token_count: doc.text.split_whitespace().count() as u32,
            start_seconds: None,
        });
        records.push(DocumentRecord {
            doc_id,
            uri,
            file_name: "corpus.jsonl".into(),
            title: doc.title.clone(),
            source: "synthetic".into(),
            tags: vec![format!("topic-{}", doc.title.split(' ').next().unwrap_or(""))],
            content_hash: quarry_indexer::snapshot::sha256_hex(doc.text.as_bytes()),
            size: doc.text.len() as u64,
            etag: None,
            chunk_count: 1,
            // A metadata key to filter and count by: five years, a fifth of the documents each.
            metadata: format!(r#"{{"year": {}}}"#, 2020 + records.len() % 5),
            ingested_at: now,
            layers: Default::default(),
            warnings: Vec::new(),
        });
    }
    let embeddings = Embeddings { dim, data: vectors };
    let spec = index.resolve(chunks, dim)?;
    let vector_index = build_vector_index(&spec, dim, &embeddings.data)?;
    let keyword_dir = tempfile::tempdir()?;
    build_keyword_index(keyword_dir.path(), rows.iter().map(|c| c.text.as_str()))?;
    let writer = SnapshotWriter::open(out.to_str().unwrap_or_default(), &StoreOptions::default())?;
    let version = new_version_id();
    let segment = writer
        .write_segment(
            &format!("seg-{version}"),
            &rows,
            &embeddings,
            &records,
            &vector_index,
            keyword_dir.path(),
        )
        .await?;
    let manifest = Manifest {
        created_at: now,
        segments: vec![segment.manifest],
        counts: Counts {
            documents: records.len(),
            chunks: rows.len(),
            tokens: rows.iter().map(|c| c.token_count as u64).sum(),
        },
        checksums: segment.checksums,
        ..Manifest::new(
            version,
            format!("synthetic seed {seed}"),
            model.info()?,
            ChunkerManifest {
                config: ChunkerConfig::default(),
                sig: "synthetic".into(),
            },
            IndexManifest::new(spec, "cpu".into()),
        )
    };
    writer.publish(&manifest, LatestExpected::Any).await?;
    Ok(manifest)
}

/// The synthetic snapshot of `docs` one-chunk documents (an exact-search index, so it builds
/// in seconds) in `dir`, written there first when it holds none, loaded with one row in a
/// hundred tombstoned, and its Searcher with the real model. For the filter and facet
/// benchmarks at a million documents.
pub async fn searcher_with_tombstones(dir: &Path, docs: usize) -> anyhow::Result<quarry_server::Searcher> {
    use quarry_indexer::embed::{BertEmbedder, EmbedOptions};
    use quarry_indexer::index::IndexKind;
    use quarry_server::{LoadOptions, LoadedSnapshot, Searcher};
    let model = crate::model_dir()?;
    if !dir.join("LATEST").is_file() {
        let started = std::time::Instant::now();
        let index = IndexOptions {
            kind: IndexKind::Flat,
            ..IndexOptions::default()
        };
        write_synthetic_snapshot(dir, docs, 42, &model, &index).await?;
        eprintln!(
            "synthetic snapshot of {docs} documents written in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let mut snapshot = LoadedSnapshot::load(dir.to_str().unwrap_or_default(), &LoadOptions::default()).await?;
    for row in (0..snapshot.row_count()).step_by(100) {
        snapshot.tombstoned.insert(row);
    }
    Ok(Searcher::new(
        std::sync::Arc::new(snapshot),
        std::sync::Arc::new(BertEmbedder::load(&model, EmbedOptions::default())?),
    )?)
}

/// What the filter and facet benchmarks run on, from their command line: `--docs N` (default
/// 1,000,000), `--reps R` (default 5), `--snapshot DIR` (kept there; else a temporary folder).
pub struct SyntheticBench {
    pub searcher: quarry_server::Searcher,
    pub reps: usize,
    _scratch: tempfile::TempDir,
}

impl SyntheticBench {
    pub async fn from_args() -> anyhow::Result<Self> {
        use crate::arg_value as value;
        let docs: usize = value("--docs").and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
        let reps: usize = value("--reps").and_then(|v| v.parse().ok()).unwrap_or(5).max(1);
        let scratch = tempfile::tempdir()?;
        let dir = value("--snapshot")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| scratch.path().to_path_buf());
        Ok(Self {
            searcher: searcher_with_tombstones(&dir, docs).await?,
            reps,
            _scratch: scratch,
        })
    }
}
