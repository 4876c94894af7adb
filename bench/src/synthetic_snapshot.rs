//! A seeded synthetic snapshot at any size, built without an embedding pass: synthetic
//! documents (datasets::synthetic) with clustered unit vectors, indexed and published like a
//! real run and labelled with the real model, so the Searcher serves it. For latency at scale.

use std::path::Path;

use quarry_datasets::synthetic::{clustered_unit_vectors, synthetic_documents};
use quarry_indexer::chunk::{Chunk, ChunkerConfig};
use quarry_indexer::embed::{Embeddings, ModelDir};
use quarry_indexer::index::{build_keyword_index, build_vector_index, IndexOptions};
use quarry_indexer::parse::{doc_id_for, ContentType};
use quarry_indexer::snapshot::{new_version_id, ChunkerManifest, Counts, DocumentRecord, IndexManifest, LatestExpected, Manifest, SnapshotWriter};
use quarry_indexer::store::StoreOptions;

/// Writes a snapshot of `chunks` synthetic one-chunk documents into `out`.
pub async fn write_synthetic_snapshot(out: &Path, chunks: usize, seed: u64, model: &ModelDir, index: &IndexOptions) -> anyhow::Result<Manifest> {
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
            metadata: "{}".into(),
            ingested_at: now,
        });
    }
    let embeddings = Embeddings { dim, data: vectors };
    let spec = index.resolve(chunks, dim)?;
    let vector_index = build_vector_index(&spec, dim, &embeddings.data)?;
    let keyword_dir = tempfile::tempdir()?;
    build_keyword_index(keyword_dir.path(), rows.iter().map(|c| c.text.as_str()))?;
    let writer = SnapshotWriter::open(out.to_str().unwrap_or_default(), &StoreOptions::default())?;
    let version = new_version_id();
    let segment = writer.write_segment(&format!("seg-{version}"), &rows, &embeddings, &records, &vector_index, keyword_dir.path()).await?;
    let manifest = Manifest {
        created_at: now,
        segments: vec![segment.manifest],
        counts: Counts { documents: records.len(), chunks: rows.len(), tokens: rows.iter().map(|c| c.token_count as u64).sum() },
        checksums: segment.checksums,
        ..Manifest::new(
            version,
            format!("synthetic seed {seed}"),
            model.info()?,
            ChunkerManifest { config: ChunkerConfig::default(), sig: "synthetic".into() },
            IndexManifest::new(spec, "cpu".into()),
        )
    };
    writer.publish(&manifest, LatestExpected::Any).await?;
    Ok(manifest)
}
