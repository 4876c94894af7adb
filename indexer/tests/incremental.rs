//! Incremental runs: a second run into the same snapshot root embeds only what changed and
//! reuses the stored embeddings of the rest; another chunker, `reuse = false`, a tombstone or
//! a damaged segment make it embed afresh, and none of them stops the run.

mod common;

use std::collections::HashMap;
use std::path::Path;

use quarry_indexer::chunk::ChunkerConfig;
use quarry_indexer::index::IndexOptions;
use quarry_indexer::pipeline::{publish_next_version, run_with_embedder, ProgressMode, RunOptions, RunReport, VersionChange};
use quarry_indexer::snapshot::{SnapshotReader, SnapshotWriter};
use quarry_indexer::store::StoreOptions;

fn paragraph(topic: &str, n: usize) -> String {
    (0..n).map(|i| format!("Sentence {i} of the note about {topic}, with details that only this note has. ")).collect()
}

async fn run(src: &Path, out: &str, tweak: impl FnOnce(&mut RunOptions)) -> RunReport {
    let mut options = RunOptions::new(src.to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    tweak(&mut options);
    run_with_embedder(options, common::embedder()).await.unwrap()
}

/// Each document's vectors in the latest version, by file name.
async fn vectors_by_file(out: &str) -> HashMap<String, (Vec<String>, Vec<f32>)> {
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert!(reader.verify().await.unwrap().ok());
    let names: HashMap<String, String> = reader.read_documents().await.unwrap().into_iter().map(|d| (d.doc_id, d.file_name)).collect();
    let (chunks, embeddings) = reader.read_chunks().await.unwrap();
    let mut by_file: HashMap<String, (Vec<String>, Vec<f32>)> = HashMap::new();
    for (row, chunk) in chunks.iter().enumerate() {
        let entry = by_file.entry(names[&chunk.doc_id].clone()).or_default();
        entry.0.push(chunk.text.clone());
        entry.1.extend_from_slice(embeddings.row(row));
    }
    by_file
}

fn embed_stage_tokens(report: &RunReport) -> u64 {
    report.stages.iter().find(|s| s.stage == "embed").unwrap().items
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_run_embeds_only_what_changed() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), format!("# Tides\n\n{}", paragraph("tides", 60))).unwrap();
    std::fs::write(src.path().join("b.md"), format!("# Glaciers\n\n{}", paragraph("glaciers", 8))).unwrap();
    std::fs::write(src.path().join("c.txt"), paragraph("volcanoes", 5)).unwrap();

    let first = run(src.path(), out, |_| {}).await;
    assert_eq!(first.reuse.from_version, None);
    assert_eq!(first.reuse.documents, 0);
    assert_eq!(embed_stage_tokens(&first), first.tokens);
    let v1 = vectors_by_file(out).await;
    let a_chunks = v1["a.md"].0.len();
    assert!(a_chunks > 1, "a.md should span several chunks");

    // b changes, c goes away, d arrives; a is untouched.
    std::fs::write(src.path().join("b.md"), format!("# Glaciers\n\n{}", paragraph("glaciers and ice sheets", 8))).unwrap();
    std::fs::remove_file(src.path().join("c.txt")).unwrap();
    std::fs::write(src.path().join("d.md"), paragraph("deserts", 4)).unwrap();
    let second = run(src.path(), out, |_| {}).await;
    assert_eq!(second.reuse.from_version, first.version);
    assert_eq!(second.reuse.documents, 1);
    assert_eq!(second.reuse.chunks, a_chunks);
    assert!(second.reuse.notes.is_empty(), "{:?}", second.reuse.notes);
    assert_eq!(second.documents_indexed, 3);
    assert_eq!(embed_stage_tokens(&second), second.tokens - second.reuse.tokens);
    assert!(embed_stage_tokens(&second) < second.tokens);

    let v2 = vectors_by_file(out).await;
    assert_eq!(v2["a.md"], v1["a.md"], "a.md's stored rows are carried over bit for bit");
    assert!(!v2.contains_key("c.txt"));
    // The changed and the new document carry embeddings of their new texts, not stale ones.
    for name in ["b.md", "d.md"] {
        let (texts, vectors) = &v2[name];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let fresh = common::embedder().embed(&texts).unwrap();
        for (row, stored) in vectors.chunks(fresh.dim).enumerate() {
            assert!(common::cosine(stored, fresh.row(row)) > 0.99999, "{name} row {row}");
        }
    }
    assert_ne!(v2["b.md"].1, v1["b.md"].1);

    // Nothing changed: nothing is embedded.
    let third = run(src.path(), out, |_| {}).await;
    assert_eq!(third.reuse.documents, 3);
    assert_eq!(embed_stage_tokens(&third), 0);
    assert_eq!(vectors_by_file(out).await, v2);

    // Other chunk sizes: the stored chunks do not apply.
    let rechunked = run(src.path(), out, |o| o.chunker = ChunkerConfig { max_tokens: 128, overlap_tokens: 16 }).await;
    assert_eq!(rechunked.reuse.from_version, None);
    assert!(rechunked.reuse.notes.iter().any(|n| n.contains("chunked with other settings")), "{:?}", rechunked.reuse.notes);
    assert_eq!(embed_stage_tokens(&rechunked), rechunked.tokens);

    // Asked not to reuse: a full run, without a note.
    let full = run(src.path(), out, |o| {
        o.chunker = ChunkerConfig { max_tokens: 128, overlap_tokens: 16 };
        o.reuse = false;
    })
    .await;
    assert_eq!(full.reuse.from_version, None);
    assert!(full.reuse.notes.is_empty());
    assert_eq!(embed_stage_tokens(&full), full.tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tombstones_and_damaged_segments_are_embedded_afresh() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("orchards", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("harbours", 6)).unwrap();
    std::fs::write(src.path().join("c.md"), paragraph("lighthouses", 6)).unwrap();
    run(src.path(), out, |_| {}).await;

    // Online deletes of a.md's document (by id) and of b.md's (that segment's copy): the next
    // batch run brings both back, embedded afresh.
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let manifest = reader.manifest().clone();
    let documents = reader.read_documents().await.unwrap();
    let id_of = |name: &str| documents.iter().find(|d| d.file_name == name).unwrap().doc_id.clone();
    let writer = SnapshotWriter::open(out, &StoreOptions::default()).unwrap();
    let scoped = format!("{}/{}", manifest.segments[0].id, id_of("b.md"));
    let change = VersionChange { documents: Vec::new(), tombstones: vec![id_of("a.md"), scoped] };
    publish_next_version(&writer, Some(&manifest), change, common::embedder().as_ref(), manifest.chunker.clone(), &IndexOptions::default()).await.unwrap();
    let after_delete = run(src.path(), out, |_| {}).await;
    assert_eq!(after_delete.reuse.documents, 1, "only c.md is reused");
    assert_eq!(after_delete.documents_indexed, 3);
    let published = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert!(published.manifest().tombstones.is_empty(), "a batch run starts without tombstones");

    // A damaged segment is not trusted: everything is embedded again and the run publishes.
    let segment = &published.manifest().segments[0].id;
    let chunks_file = out_dir.path().join(format!("segments/{segment}/chunks.parquet"));
    let mut bytes = std::fs::read(&chunks_file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&chunks_file, bytes).unwrap();
    let after_damage = run(src.path(), out, |_| {}).await;
    assert_eq!(after_damage.reuse.documents, 0);
    assert!(after_damage.reuse.notes.iter().any(|n| n.contains(segment.as_str()) && n.contains("checksum")), "{:?}", after_damage.reuse.notes);
    assert_eq!(after_damage.documents_indexed, 3);
    assert_eq!(embed_stage_tokens(&after_damage), after_damage.tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_fails_keeps_its_last_good_version() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("meadows", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("canyons", 6)).unwrap();
    let lines: String = ["rivers", "deltas"].iter().map(|t| format!("{}\n", serde_json::json!({ "_id": t, "text": paragraph(t, 3) }))).collect();
    std::fs::write(src.path().join("c.jsonl"), lines).unwrap();
    run(src.path(), out, |_| {}).await;
    let before = vectors_by_file(out).await;

    // b.md now fails to fetch (over the size limit) and c.jsonl no longer parses; a.md changes.
    std::fs::write(src.path().join("a.md"), paragraph("meadows and hedgerows", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("canyons", 60)).unwrap();
    std::fs::write(src.path().join("c.jsonl"), b"\xff\xfe not json at all").unwrap();
    let report = run(src.path(), out, |o| o.source_options.max_file_bytes = 4_000).await;
    assert_eq!(report.documents_failed, 2, "{:?}", report.failures);
    let mut kept = report.reuse.kept_after_failure.clone();
    kept.sort();
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(kept[0].ends_with("b.md") && kept[1].ends_with("c.jsonl#deltas") && kept[2].ends_with("c.jsonl#rivers"), "{kept:?}");
    let after = vectors_by_file(out).await;
    assert_eq!(after["b.md"], before["b.md"], "b.md's last good version, bit for bit");
    assert_eq!(after["c.jsonl"], before["c.jsonl"]);
    assert_ne!(after["a.md"], before["a.md"], "a.md itself was indexed afresh");

    // Asked for a full run, nothing is carried over: failures drop their documents.
    let full = run(src.path(), out, |o| {
        o.source_options.max_file_bytes = 4_000;
        o.reuse = false;
    })
    .await;
    assert!(full.reuse.kept_after_failure.is_empty());
    assert_eq!(full.documents_indexed, 1);
}
