//! A loaded segment holds its vectors once: in its vector index (Flat, HNSW, IVF-Flat),
//! which answers the exact scans from the vectors it stores; only IVF-PQ, whose codes are
//! lossy, keeps chunks.parquet's copy. Either way the exact scans equal brute force over the
//! vectors that were written, and a vector index that does not match its chunks is refused.

use crate::common;

use std::path::Path;

use quarry_indexer::chunk::{Chunk, ChunkerConfig};
use quarry_indexer::embed::{Embeddings, ModelDir};
use quarry_indexer::index::{build_keyword_index, build_vector_index, HnswBuilder, IndexSpec, IvfTrainer};
use quarry_indexer::parse::{doc_id_for, ContentType};
use quarry_indexer::snapshot::{
    new_version_id, ChunkerManifest, Counts, DocumentRecord, IndexManifest, Manifest, SnapshotWriter,
};
use quarry_indexer::store::StoreOptions;
use quarry_server::{LoadOptions, LoadedSnapshot, ServerError};

const ROWS: usize = 1500;

/// Seeded unit vectors of the model's width.
fn unit_vectors(rows: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = common::Rng(seed);
    let mut data: Vec<f32> = (0..rows * dim)
        .map(|_| (rng.below(2001) as f32 - 1000.0) / 1000.0)
        .collect();
    for row in data.chunks_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= norm);
    }
    data
}

/// Publishes one segment of `ROWS` one-chunk documents with `vectors`, its vector index
/// built over the first `indexed_rows` of them.
async fn publish(out: &Path, spec: &IndexSpec, vectors: &Embeddings, indexed_rows: usize) {
    let model = ModelDir::open(&common::model_dir()).unwrap();
    let now = chrono::Utc::now();
    let (mut chunks, mut records) = (Vec::new(), Vec::new());
    for row in 0..ROWS {
        let uri = format!("test://vectors/{row:05}.txt");
        let doc_id = doc_id_for(&uri);
        let text = format!("document {row} about topic {}", row % 17);
        chunks.push(Chunk {
            chunk_id: format!("{doc_id}-0"),
            doc_id: doc_id.clone(),
            index: 0,
            text: text.clone(),
            page: None,
            heading_path: Vec::new(),
            content_type: ContentType::Text,
            token_count: 6,
            start_seconds: None,
        });
        records.push(DocumentRecord {
            doc_id,
            uri,
            file_name: format!("{row:05}.txt"),
            title: String::new(),
            source: "test".into(),
            tags: Vec::new(),
            content_hash: quarry_indexer::snapshot::sha256_hex(text.as_bytes()),
            size: text.len() as u64,
            etag: None,
            chunk_count: 1,
            metadata: "{}".into(),
            ingested_at: now,
            layers: Default::default(),
            warnings: Vec::new(),
        });
    }
    let index = build_vector_index(spec, vectors.dim, &vectors.data[..indexed_rows * vectors.dim]).unwrap();
    let keyword_dir = tempfile::tempdir().unwrap();
    build_keyword_index(keyword_dir.path(), chunks.iter().map(|c| c.text.as_str())).unwrap();
    let writer = SnapshotWriter::open(out.to_str().unwrap(), &StoreOptions::default()).unwrap();
    let version = new_version_id();
    let segment = writer
        .write_segment(
            &format!("seg-{version}"),
            &chunks,
            vectors,
            &records,
            &index,
            keyword_dir.path(),
        )
        .await
        .unwrap();
    let manifest = Manifest {
        segments: vec![segment.manifest],
        counts: Counts {
            documents: ROWS,
            chunks: ROWS,
            tokens: 6 * ROWS as u64,
        },
        checksums: segment.checksums,
        ..Manifest::new(
            version,
            "test".into(),
            model.info().unwrap(),
            ChunkerManifest {
                config: ChunkerConfig::default(),
                sig: "test".into(),
            },
            IndexManifest::new(spec.clone(), "cpu".into()),
        )
    };
    writer
        .publish(&manifest, quarry_indexer::snapshot::LatestExpected::Any)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_scans_read_the_vectors_the_index_holds() {
    let dim = ModelDir::open(&common::model_dir()).unwrap().hidden_size;
    let vectors = Embeddings {
        dim,
        data: unit_vectors(ROWS, dim, 0x5eed),
    };
    let queries = unit_vectors(3, dim, 0xbeef);
    let kinds = [
        (IndexSpec::Flat, false),
        (
            IndexSpec::Hnsw {
                m: 16,
                ef_construction: 40,
                ef_search: 32,
                builder: HnswBuilder::Faiss,
            },
            false,
        ),
        (
            IndexSpec::IvfFlat {
                nlist: 16,
                nprobe: 4,
                train_sample: ROWS,
                trainer: IvfTrainer::Faiss,
            },
            false,
        ),
        (
            IndexSpec::IvfFlat {
                nlist: 16,
                nprobe: 4,
                train_sample: ROWS,
                trainer: IvfTrainer::Kernels,
            },
            false,
        ),
        (
            IndexSpec::IvfPq {
                nlist: 8,
                nprobe: 2,
                pq_m: dim / 8,
                nbits: 4,
                train_sample: ROWS,
            },
            true,
        ),
    ];
    let mut rng = common::Rng(11);
    for (spec, keeps_copy) in kinds {
        let out = tempfile::tempdir().unwrap();
        publish(out.path(), &spec, &vectors, ROWS).await;
        let snapshot = LoadedSnapshot::load(out.path().to_str().unwrap(), &LoadOptions::default())
            .await
            .unwrap();
        let segment = &snapshot.segments[0].data;
        assert_eq!(segment.keeps_parquet_vectors(), keeps_copy, "{}", spec.factory());
        // Bit for bit the vectors that were written (PQ's through the Parquet copy).
        assert!(
            snapshot.all_embeddings().unwrap() == vectors.data,
            "{}: stored vectors differ from the written ones",
            spec.factory()
        );
        assert_eq!(
            snapshot.embedding(ROWS - 1).unwrap(),
            vectors.row(ROWS - 1),
            "{}",
            spec.factory()
        );
        for query in queries.chunks(dim) {
            let mut rows: Vec<u64> = (0..300).map(|_| rng.below(ROWS) as u64).collect();
            rows.sort_unstable();
            rows.dedup();
            let want = quarry_kernels::exact_top_k_in(query, &vectors.data, dim, &rows, 10);
            let got = segment.exact_top_k_in(query, &rows, 10).unwrap();
            let got: Vec<(u64, f32)> = got.iter().map(|h| (h.row, h.score)).collect();
            let want: Vec<(u64, f32)> = want.iter().map(|h| (h.row, h.score)).collect();
            assert_eq!(got, want, "{}: exact scan of a row subset", spec.factory());
        }
        let message = segment
            .exact_top_k_in(&queries[..dim], &[ROWS as u64], 1)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!("row {ROWS} of a")) && message.contains(&format!("{ROWS} rows")),
            "{}: {message}",
            spec.factory()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vector_index_that_does_not_match_its_chunks_is_refused() {
    let dim = ModelDir::open(&common::model_dir()).unwrap().hidden_size;
    let vectors = Embeddings {
        dim,
        data: unit_vectors(ROWS, dim, 0x5eed),
    };
    let out = tempfile::tempdir().unwrap();
    publish(out.path(), &IndexSpec::Flat, &vectors, ROWS - 1).await;
    let err = LoadedSnapshot::load(out.path().to_str().unwrap(), &LoadOptions::default())
        .await
        .err()
        .expect("a short vector index is refused");
    let message = err.to_string();
    assert!(matches!(err, ServerError::Corrupt { .. }), "{message}");
    assert!(
        message.contains(&format!(
            "holds {} vectors of dimension {dim} for {ROWS} chunks",
            ROWS - 1
        )),
        "{message}"
    );
}
