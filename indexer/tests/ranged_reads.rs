//! A rerun reads a few documents' rows of a segment: of chunks.parquet only the blocks
//! holding their pages are read (from a remote root, fetched by range), each checked against
//! the manifest's block sums first. A damaged block that is read is refused; one that is not
//! read does not stop the read, and a full verification still finds it. A manifest without
//! block sums (an older build's) still reads, its file checked whole.

use std::collections::HashSet;

use object_store::{ObjectStoreExt, PutPayload};
use quarry_indexer::chunk::{Chunk, ChunkerConfig};
use quarry_indexer::embed::{Embeddings, ModelInfo, Pooling};
use quarry_indexer::index::{build_keyword_index, build_vector_index, IndexSpec};
use quarry_indexer::parse::ContentType;
use quarry_indexer::snapshot::{
    layout, new_version_id, ChunkerManifest, Counts, DocumentRecord, IndexManifest, Manifest, SnapshotReader,
    SnapshotWriter, WantedRows, BLOCK_BYTES,
};
use quarry_indexer::store::{open_location, StoreOptions};

const DIM: usize = 128;
/// Four row groups (16,384 rows each) of documents of 100 rows.
const ROWS: usize = 16_384 * 3 + 17;
const SEGMENT: &str = "seg-ranged";

/// One record per document of [`rows`].
fn records() -> Vec<DocumentRecord> {
    (0..ROWS.div_ceil(100))
        .map(|doc| DocumentRecord {
            doc_id: format!("doc-{doc}"),
            uri: format!("s3://corpus/part-{}.jsonl#{doc}", doc / 10),
            file_name: format!("part-{}.jsonl", doc / 10),
            title: format!("Document {doc}"),
            source: "s3".into(),
            tags: vec!["ranged".into()],
            content_hash: format!("{doc:064x}"),
            size: 1_000 + doc as u64,
            etag: Some(format!("etag-{}", doc / 10)),
            chunk_count: if doc == ROWS / 100 { (ROWS % 100) as u32 } else { 100 },
            metadata: "{}".into(),
            ingested_at: chrono::DateTime::from_timestamp_millis(1_700_000_000_000).unwrap(),
            layers: Default::default(),
            warnings: Vec::new(),
        })
        .collect()
}

fn rows() -> (Vec<Chunk>, Embeddings) {
    let chunks = (0..ROWS)
        .map(|row| Chunk {
            chunk_id: format!("doc-{}-{}", row / 100, row % 100),
            doc_id: format!("doc-{}", row / 100),
            index: (row % 100) as u32,
            text: format!("row {row}: {}", "some words of text ".repeat(row % 7 + 1)),
            page: None,
            heading_path: Vec::new(),
            content_type: ContentType::Text,
            token_count: 9,
            start_seconds: None,
        })
        .collect();
    (
        chunks,
        Embeddings {
            dim: DIM,
            data: (0..ROWS * DIM).map(|x| (x as f32 * 0.37).sin()).collect(),
        },
    )
}

/// Publishes one segment of [`rows`] at `root`.
async fn publish(root: &str, chunks: &[Chunk], embeddings: &Embeddings) -> Manifest {
    let vectors = build_vector_index(&IndexSpec::Flat, DIM, &embeddings.data).unwrap();
    let keyword = tempfile::tempdir().unwrap();
    build_keyword_index(keyword.path(), chunks.iter().map(|c| c.text.as_str())).unwrap();
    let writer = SnapshotWriter::open(root, &StoreOptions::default()).unwrap();
    let segment = writer
        .write_segment(SEGMENT, chunks, embeddings, &records(), &vectors, keyword.path())
        .await
        .unwrap();
    let model = ModelInfo {
        name: "test".into(),
        sha256: "test".into(),
        dim: DIM,
        max_tokens: 256,
        pooling: Pooling::Mean,
        precisions: Vec::new(),
    };
    let manifest = Manifest {
        segments: vec![segment.manifest],
        counts: Counts {
            documents: 0,
            chunks: ROWS,
            tokens: 9 * ROWS as u64,
        },
        checksums: segment.checksums,
        ..Manifest::new(
            new_version_id(),
            "test".into(),
            model,
            ChunkerManifest {
                config: ChunkerConfig::default(),
                sig: "test".into(),
            },
            IndexManifest::new(IndexSpec::Flat, "cpu".into()),
        )
    };
    writer
        .publish(&manifest, quarry_indexer::snapshot::LatestExpected::Any)
        .await
        .unwrap();
    manifest
}

/// Reads the rows of `documents` (or every row); returns the rows, their vectors and the
/// bytes read.
async fn read(root: &str, documents: Option<&HashSet<String>>) -> quarry_indexer::Result<(Vec<Chunk>, Vec<f32>, u64)> {
    let reader = SnapshotReader::open(root, &StoreOptions::default()).await?;
    let (mut chunks, mut vectors) = (Vec::new(), Vec::new());
    let keep = |doc_id: &str| documents.is_some_and(|wanted| wanted.contains(doc_id));
    let wanted = match documents {
        Some(_) => WantedRows::Where("doc_id", &keep),
        None => WantedRows::All,
    };
    let rows = reader
        .read_segment_rows_in_parts(SEGMENT, wanted, |part, part_vectors| {
            chunks.extend(part);
            vectors.extend(part_vectors.data);
            Ok(())
        })
        .await?;
    assert_eq!(rows, chunks.len() as u64);
    Ok((chunks, vectors, reader.rows_bytes_read()))
}

/// Replaces chunks.parquet at `root` with `bytes`.
async fn overwrite_chunks(root: &str, bytes: Vec<u8>) {
    let location = open_location(root, &StoreOptions::default(), false).unwrap();
    location
        .store
        .put(
            &location.child(&layout::segment_file(SEGMENT, layout::CHUNKS)),
            PutPayload::from(bytes),
        )
        .await
        .unwrap();
}

async fn chunks_file(root: &str) -> Vec<u8> {
    let reader = SnapshotReader::open(root, &StoreOptions::default()).await.unwrap();
    reader
        .get(&layout::segment_file(SEGMENT, layout::CHUNKS))
        .await
        .unwrap()
        .to_vec()
}

/// A local folder and an in-memory store (which, like S3, has no local path: its blocks are
/// fetched by range into a temporary copy).
fn roots(name: &str) -> (tempfile::TempDir, [String; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let memory = format!("memory://ranged-{name}-{}/snapshot", std::process::id());
    let local = dir.path().to_str().unwrap().to_string();
    (dir, [local, memory])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_documents_rows_are_read_from_their_blocks_alone() {
    let (chunks, embeddings) = rows();
    // One document inside the second row group, one at the end of the last, one not there.
    let documents: HashSet<String> = ["doc-200", "doc-491", "doc-9999"].map(String::from).into();
    let expected: Vec<usize> = (0..ROWS)
        .filter(|&row| documents.contains(&chunks[row].doc_id))
        .collect();
    let (_dir, roots) = roots("few");
    for root in &roots {
        let manifest = publish(root, &chunks, &embeddings).await;
        let file = &manifest.checksums[&layout::segment_file(SEGMENT, layout::CHUNKS)];
        let sums = file.blocks.as_ref().expect("chunks.parquet has block sums");
        assert_eq!(
            (sums.block_bytes, sums.sha256.len() as u64),
            (BLOCK_BYTES, file.bytes.div_ceil(BLOCK_BYTES))
        );

        let (back, vectors, bytes_read) = read(root, Some(&documents)).await.unwrap();
        assert!(
            back.iter().eq(expected.iter().map(|&row| &chunks[row])),
            "{root}: the wanted rows, in row order"
        );
        assert!(
            vectors.iter().eq(expected.iter().flat_map(|&row| embeddings.row(row))),
            "{root}: their own vectors"
        );
        assert!(
            bytes_read > 0 && bytes_read * 4 < file.bytes,
            "{root}: {bytes_read} of {} bytes read for {} of {ROWS} rows",
            file.bytes,
            expected.len()
        );

        // The records, from documents.parquet read the same way.
        let reader = SnapshotReader::open(root, &StoreOptions::default()).await.unwrap();
        let records = records();
        let outlines = reader.read_segment_outlines(SEGMENT).await.unwrap();
        assert!(
            outlines
                .iter()
                .map(|o| (&o.doc_id, &o.uri, o.chunk_count))
                .eq(records.iter().map(|r| (&r.doc_id, &r.uri, r.chunk_count))),
            "{root}"
        );
        let keep = |doc_id: &str| documents.contains(doc_id);
        let wanted = reader
            .read_segment_documents_where(SEGMENT, WantedRows::Where("doc_id", &keep))
            .await
            .unwrap();
        assert_eq!(wanted, [records[200].clone(), records[491].clone()], "{root}");
        assert!(reader.rows_bytes_read() > 0);

        let (back, vectors, bytes_read) = read(root, None).await.unwrap();
        assert!(back == chunks && vectors == embeddings.data, "{root}: every row");
        assert!(
            bytes_read <= file.bytes && bytes_read * 100 >= file.bytes * 99,
            "{root}: every row reads (about) the whole file: {bytes_read} of {}",
            file.bytes
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_block_is_refused_when_read_and_found_by_verification() {
    let (chunks, embeddings) = rows();
    let documents: HashSet<String> = ["doc-200"].map(String::from).into();
    let (_dir, roots) = roots("damaged");
    for root in &roots {
        publish(root, &chunks, &embeddings).await;
        let good = chunks_file(root).await;
        // A byte of the first row group's vectors: no page doc-200 (rows 20,000-20,099) needs.
        let metadata = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(good.clone()))
            .unwrap();
        let vectors = metadata
            .row_group(0)
            .columns()
            .iter()
            .find(|c| c.column_path().string().starts_with("embedding"))
            .unwrap();
        let (start, length) = vectors.byte_range();
        let mut damaged = good.clone();
        damaged[(start + length / 2) as usize] ^= 0x40;
        overwrite_chunks(root, damaged).await;
        let (back, _, _) = read(root, Some(&documents)).await.unwrap();
        assert_eq!(back.len(), 100, "{root}: the blocks read are intact");
        let reader = SnapshotReader::open(root, &StoreOptions::default()).await.unwrap();
        let verification = reader.verify().await.unwrap();
        assert!(
            verification
                .problems
                .iter()
                .any(|(path, _)| path.ends_with("chunks.parquet")),
            "{root}: {:?}",
            verification.problems
        );

        // A byte of the metadata at the file's end, which every read needs.
        let mut damaged = good.clone();
        let at = damaged.len() - 100;
        damaged[at] ^= 0x40;
        overwrite_chunks(root, damaged).await;
        let err = read(root, Some(&documents)).await.unwrap_err().to_string();
        assert!(
            err.contains("chunks.parquet") && err.contains("differ from the manifest's block checksum"),
            "{root}: {err}"
        );
        overwrite_chunks(root, good).await;
        assert_eq!(read(root, Some(&documents)).await.unwrap().0.len(), 100, "{root}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_without_block_sums_reads_its_file_checked_whole() {
    let (chunks, embeddings) = rows();
    let documents: HashSet<String> = ["doc-7"].map(String::from).into();
    let (_dir, roots) = roots("older");
    for root in &roots {
        let mut manifest = publish(root, &chunks, &embeddings).await;
        manifest
            .checksums
            .values_mut()
            .for_each(|checksum| checksum.blocks = None);
        manifest.version = new_version_id();
        SnapshotWriter::open(root, &StoreOptions::default())
            .unwrap()
            .publish(&manifest, quarry_indexer::snapshot::LatestExpected::Any)
            .await
            .unwrap();
        let file = &manifest.checksums[&layout::segment_file(SEGMENT, layout::CHUNKS)];
        let (back, _, bytes_read) = read(root, Some(&documents)).await.unwrap();
        assert!(back.iter().eq(chunks[700..800].iter()), "{root}");
        assert_eq!(bytes_read, file.bytes, "{root}: checked whole");
        let mut damaged = chunks_file(root).await;
        damaged[1_000] ^= 0x40;
        overwrite_chunks(root, damaged).await;
        let err = read(root, Some(&documents)).await.unwrap_err().to_string();
        assert!(err.contains("differ from the manifest's checksum"), "{root}: {err}");
    }
}
