//! Incremental runs: a second run into the same snapshot root fetches only files whose ETag
//! changed, embeds only documents whose content changed, and publishes a delta (a new segment
//! plus tombstones) over the previous version; compaction merges what piles up. Another
//! chunker, `reuse = false`, `--publish full`, a tombstone or a damaged segment change what is
//! reused, and none of them stops the run.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use quarry_indexer::chunk::ChunkerConfig;
use quarry_indexer::embed::{BatchPolicy, Embedder, Precision};
use quarry_indexer::index::IndexOptions;
use quarry_indexer::pipeline::{
    publish_next_version, run_with_embedder, DeltaReport, ProgressMode, PublishMode, RunOptions, RunReport,
    VersionChange,
};
use quarry_indexer::snapshot::{SnapshotReader, SnapshotWriter};
use quarry_indexer::store::StoreOptions;

fn paragraph(topic: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("Sentence {i} of the note about {topic}, with details that only this note has. "))
        .collect()
}

async fn run(src: &Path, out: &str, tweak: impl FnOnce(&mut RunOptions)) -> RunReport {
    let mut options = RunOptions::new(src.to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    options.compact.max_hidden_fraction = 1.0; // compaction has its own test
    tweak(&mut options);
    run_with_embedder(options, common::embedder()).await.unwrap()
}

/// Each file's chunk texts and vectors in the latest version (live rows only), in chunk-id
/// order, so the same rows compare equal whichever segments hold them.
async fn vectors_by_file(out: &str) -> HashMap<String, (Vec<String>, Vec<f32>)> {
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert!(reader.verify().await.unwrap().ok());
    let names: HashMap<String, String> = reader
        .read_documents()
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.doc_id, d.file_name))
        .collect();
    let (chunks, embeddings) = reader.read_chunks().await.unwrap();
    let mut rows_by_file: HashMap<String, Vec<usize>> = HashMap::new();
    for (row, chunk) in chunks.iter().enumerate() {
        rows_by_file.entry(names[&chunk.doc_id].clone()).or_default().push(row);
    }
    rows_by_file
        .into_iter()
        .map(|(name, mut rows)| {
            rows.sort_by(|&a, &b| chunks[a].chunk_id.cmp(&chunks[b].chunk_id));
            let texts = rows.iter().map(|&row| chunks[row].text.clone()).collect();
            let vectors = rows.iter().flat_map(|&row| embeddings.row(row).to_vec()).collect();
            (name, (texts, vectors))
        })
        .collect()
}

fn stage_items(report: &RunReport, stage: &str) -> u64 {
    report.stages.iter().find(|s| s.stage == stage).unwrap().items
}

fn embed_stage_tokens(report: &RunReport) -> u64 {
    stage_items(report, "embed")
}

fn delta(report: &RunReport) -> &DeltaReport {
    report.delta.as_ref().expect("a delta over the previous version")
}

async fn latest(out: &str) -> quarry_indexer::snapshot::Manifest {
    SnapshotReader::open(out, &StoreOptions::default())
        .await
        .unwrap()
        .manifest()
        .clone()
}

/// Asserts each of `names` holds the embeddings of its own stored texts (not stale ones).
fn assert_fresh(by_file: &HashMap<String, (Vec<String>, Vec<f32>)>, names: &[&str]) {
    for name in names {
        let (texts, vectors) = &by_file[*name];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let fresh = common::embedder().embed(&texts).unwrap();
        for (row, stored) in vectors.chunks(fresh.dim).enumerate() {
            assert!(common::cosine(stored, fresh.row(row)) > 0.99999, "{name} row {row}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_run_publishes_only_what_changed() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(
        src.path().join("a.md"),
        format!("# Tides\n\n{}", paragraph("tides", 60)),
    )
    .unwrap();
    std::fs::write(
        src.path().join("b.md"),
        format!("# Glaciers\n\n{}", paragraph("glaciers", 8)),
    )
    .unwrap();
    std::fs::write(src.path().join("c.txt"), paragraph("volcanoes", 5)).unwrap();

    let first = run(src.path(), out, |_| {}).await;
    assert_eq!(first.reuse.from_version, None);
    assert!(first.delta.is_none(), "a first run is a full version");
    assert_eq!(embed_stage_tokens(&first), first.tokens);
    let v1 = vectors_by_file(out).await;
    let a_chunks = v1["a.md"].0.len();
    assert!(a_chunks > 1, "a.md should span several chunks");
    let first_segment = latest(out).await.segments[0].id.clone();

    // b changes, c goes away, d arrives; a is untouched (not even fetched).
    std::fs::write(
        src.path().join("b.md"),
        format!("# Glaciers\n\n{}", paragraph("glaciers and ice sheets", 8)),
    )
    .unwrap();
    std::fs::remove_file(src.path().join("c.txt")).unwrap();
    std::fs::write(src.path().join("d.md"), paragraph("deserts", 4)).unwrap();
    let second = run(src.path(), out, |_| {}).await;
    assert_eq!(second.reuse.from_version, first.version);
    assert!(second.reuse.notes.is_empty(), "{:?}", second.reuse.notes);
    let d = delta(&second);
    assert_eq!(d.base_version, first.version.clone().unwrap());
    assert_eq!(
        (
            d.files_unchanged,
            d.documents_unchanged,
            d.documents_written,
            d.documents_removed,
            d.tombstones_added
        ),
        (1, 0, 2, 1, 2),
        "{d:?}"
    );
    assert_eq!(stage_items(&second, "fetch"), 2, "a.md is not fetched");
    assert_eq!(
        (second.reuse.segments_read, second.reuse.documents),
        (1, 0),
        "b.md's segment is read; a.md's rows stay unread"
    );
    assert_eq!(
        second.reuse.rows_read,
        v1["b.md"].0.len() as u64,
        "of that segment, b.md's rows alone are decoded"
    );
    assert_eq!(second.documents_indexed, 3);
    assert!(
        embed_stage_tokens(&second) > 0 && embed_stage_tokens(&second) < second.tokens,
        "only b.md and d.md are embedded"
    );
    let manifest = latest(out).await;
    assert_eq!(manifest.segments.len(), 2);
    assert_eq!(
        manifest.segments[0].id, first_segment,
        "the first segment is kept, not rewritten"
    );
    assert_eq!(manifest.tombstones.len(), 2);
    assert!(
        manifest
            .tombstones
            .iter()
            .all(|t| t.starts_with(&format!("{first_segment}/"))),
        "{:?}",
        manifest.tombstones
    );

    let v2 = vectors_by_file(out).await;
    assert_eq!(v2.len(), 3);
    assert_eq!(v2["a.md"], v1["a.md"], "a.md's stored rows stay bit for bit");
    assert!(!v2.contains_key("c.txt"));
    assert_fresh(&v2, &["b.md", "d.md"]);
    assert_ne!(v2["b.md"].1, v1["b.md"].1);

    // Nothing changed: nothing is fetched or embedded, and the version keeps its segments.
    let third = run(src.path(), out, |_| {}).await;
    assert_eq!((delta(&third).files_unchanged, delta(&third).documents_written), (3, 0));
    assert_eq!(stage_items(&third, "fetch"), 0);
    assert_eq!(embed_stage_tokens(&third), 0);
    assert_eq!(
        (
            third.documents_indexed,
            third.chunks,
            third.tokens,
            third.reuse.segments_read
        ),
        (3, second.chunks, second.tokens, 0)
    );
    assert_eq!(latest(out).await.segments, manifest.segments);
    assert_eq!(vectors_by_file(out).await, v2);

    // A touched file (same bytes, new modification time, so a new ETag) is fetched, found
    // unchanged and left where it is.
    let file = std::fs::File::options()
        .write(true)
        .open(src.path().join("a.md"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(file);
    let touched = run(src.path(), out, |_| {}).await;
    assert_eq!(
        (
            delta(&touched).files_unchanged,
            delta(&touched).documents_unchanged,
            delta(&touched).documents_written
        ),
        (2, 0, 1),
        "{:?}",
        touched.delta
    );
    assert_eq!(
        embed_stage_tokens(&touched),
        0,
        "the touched document's embeddings are reused"
    );
    assert_eq!(touched.reuse.documents, 1);
    assert_eq!(vectors_by_file(out).await, v2);

    // Other tags change every record: every file is fetched, no embedding is computed again.
    let tagged = run(src.path(), out, |o| o.tags = vec!["nightly".into()]).await;
    assert!(
        tagged.reuse.notes.iter().any(|n| n.contains("every file is fetched")),
        "{:?}",
        tagged.reuse.notes
    );
    assert_eq!(
        (delta(&tagged).files_unchanged, delta(&tagged).documents_written),
        (0, 3)
    );
    assert_eq!(embed_stage_tokens(&tagged), 0);
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert!(reader
        .read_documents()
        .await
        .unwrap()
        .iter()
        .all(|d| d.tags == vec!["nightly".to_string()]));
    assert_eq!(vectors_by_file(out).await, v2);

    // Asked for a full version: one segment with every document, embeddings reused.
    let full = run(src.path(), out, |o| {
        o.tags = vec!["nightly".into()];
        o.publish = PublishMode::Full;
    })
    .await;
    assert!(full.delta.is_none());
    assert_eq!((full.reuse.documents, embed_stage_tokens(&full)), (3, 0));
    assert_eq!(latest(out).await.segments.len(), 1);
    assert!(latest(out).await.tombstones.is_empty());
    assert_eq!(vectors_by_file(out).await, v2);

    // Other chunk sizes: the stored chunks do not apply.
    let rechunked = run(src.path(), out, |o| {
        o.chunker = ChunkerConfig {
            max_tokens: 128,
            overlap_tokens: 16,
        }
    })
    .await;
    assert_eq!(rechunked.reuse.from_version, None);
    assert!(rechunked.delta.is_none());
    assert!(
        rechunked
            .reuse
            .notes
            .iter()
            .any(|n| n.contains("chunked with other settings")),
        "{:?}",
        rechunked.reuse.notes
    );
    assert_eq!(embed_stage_tokens(&rechunked), rechunked.tokens);

    // Asked not to reuse: a full run, without a note.
    let full = run(src.path(), out, |o| {
        o.chunker = ChunkerConfig {
            max_tokens: 128,
            overlap_tokens: 16,
        };
        o.reuse = false;
    })
    .await;
    assert_eq!(full.reuse.from_version, None);
    assert!(full.delta.is_none());
    assert!(full.reuse.notes.is_empty());
    assert_eq!(embed_stage_tokens(&full), full.tokens);
}

/// The manifest says how its vectors were computed: a run adds its own precision to those of
/// the vectors it keeps, and only when it computed any.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_record_how_their_vectors_were_computed() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("tides", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("glaciers", 6)).unwrap();
    let run_at = |embedder: Arc<dyn Embedder>, tweak: fn(&mut RunOptions)| {
        let mut options = RunOptions::new(src.path().to_str().unwrap(), out, common::model_dir());
        options.progress = ProgressMode::Quiet;
        tweak(&mut options);
        run_with_embedder(options, embedder)
    };
    let f32_embedder: Arc<dyn Embedder> = Arc::new(common::load_embedder_at(BatchPolicy::default(), Precision::F32));
    let first = run_at(f32_embedder.clone(), |_| {}).await.unwrap();
    assert_eq!(latest(out).await.model.precisions, ["cpu f32"]);
    assert_eq!(first.precisions, ["cpu f32"]);
    assert!(
        first.render_table().contains("vectors computed as  cpu f32"),
        "{}",
        first.render_table()
    );

    // The default precision (bf16 products where the CPU has AVX512-BF16, else f32 again).
    let own = common::embedder().info().precisions.clone();
    assert_eq!(own.len(), 1);
    let both: Vec<String> = if own[0] == "cpu f32" {
        own.clone()
    } else {
        vec!["cpu f32".into(), own[0].clone()]
    };
    let unchanged = run_at(common::embedder(), |_| {}).await.unwrap();
    assert_eq!(embed_stage_tokens(&unchanged), 0);
    assert_eq!(
        latest(out).await.model.precisions,
        ["cpu f32"],
        "nothing computed, nothing added"
    );
    std::fs::write(src.path().join("a.md"), paragraph("tides and currents", 6)).unwrap();
    run_at(common::embedder(), |_| {}).await.unwrap();
    assert_eq!(
        latest(out).await.model.precisions,
        both,
        "b.md's vectors kept, a.md's computed"
    );
    run_at(common::embedder(), |options| options.reuse = false)
        .await
        .unwrap();
    assert_eq!(latest(out).await.model.precisions, own, "everything computed afresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_section_embeds_only_its_own_chunks() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    // Chunks never cross a heading, so an edit touches only its section's chunks; the edit
    // below grows the section by a chunk, which moves every later chunk to a new index.
    let note = |glaciers: String| {
        format!(
            "# Tides\n\n{}\n\n# Glaciers\n\n{glaciers}\n\n# Deserts\n\n{}\n\n# Rivers\n\n{}",
            paragraph("tides", 30),
            paragraph("deserts", 30),
            paragraph("rivers", 5)
        )
    };
    std::fs::write(src.path().join("a.md"), note(paragraph("glaciers", 8))).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("volcanoes", 5)).unwrap();
    let first = run(src.path(), out, |_| {}).await;
    assert_eq!(first.reuse.changed_documents, Default::default());
    let v1 = vectors_by_file(out).await;

    std::fs::write(
        src.path().join("a.md"),
        note(paragraph("glaciers and the ice sheets they feed", 25)),
    )
    .unwrap();
    let second = run(src.path(), out, |_| {}).await;
    let v2 = vectors_by_file(out).await;
    let (old_texts, old_vectors) = &v1["a.md"];
    let (texts, vectors) = &v2["a.md"];
    assert!(
        texts.len() > old_texts.len(),
        "the edited section should take more chunks"
    );
    let dim = vectors.len() / texts.len();
    let kept: Vec<usize> = (0..texts.len()).filter(|&i| old_texts.contains(&texts[i])).collect();
    assert!(
        kept.len() >= 4 && kept.len() < texts.len(),
        "{} of {} chunk texts unchanged",
        kept.len(),
        texts.len()
    );
    let changed = second.reuse.changed_documents;
    assert_eq!(
        (changed.documents, changed.chunks),
        (1, kept.len()),
        "{:?}",
        second.reuse
    );
    assert_eq!(second.reuse.documents, 0, "a.md changed: it is not reused whole");
    // The model embedded the edited section only: fewer tokens than the chunks kept.
    let embedded = embed_stage_tokens(&second);
    assert!(
        embedded > 0 && embedded < changed.tokens,
        "embedded {embedded} tokens, kept {}",
        changed.tokens
    );
    // Each kept chunk holds its stored vector bit for bit, wherever it moved; every row
    // (kept or embedded) is its own text's embedding.
    for &i in &kept {
        let old = old_texts.iter().position(|t| *t == texts[i]).unwrap();
        assert_eq!(
            vectors[i * dim..(i + 1) * dim],
            old_vectors[old * dim..(old + 1) * dim],
            "chunk {i}"
        );
    }
    assert_fresh(&v2, &["a.md"]);
    assert_eq!(v2["b.md"], v1["b.md"]);
    assert!(
        second.render_table().contains("1 kept the stored vectors of"),
        "{}",
        second.render_table()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_documents_come_back_and_damaged_segments_force_a_full_version() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("orchards", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("harbours", 6)).unwrap();
    std::fs::write(src.path().join("c.md"), paragraph("lighthouses", 6)).unwrap();
    run(src.path(), out, |_| {}).await;
    let before = vectors_by_file(out).await;

    // Online deletes of a.md's document (by id) and of b.md's (that segment's copy): the next
    // batch run brings both back, embedded afresh, and lifts the delete by id.
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let manifest = reader.manifest().clone();
    let documents = reader.read_documents().await.unwrap();
    let id_of = |name: &str| documents.iter().find(|d| d.file_name == name).unwrap().doc_id.clone();
    let writer = SnapshotWriter::open(out, &StoreOptions::default()).unwrap();
    let first_segment = manifest.segments[0].id.clone();
    let scoped_b = format!("{first_segment}/{}", id_of("b.md"));
    let change = VersionChange {
        documents: Vec::new(),
        tombstones: vec![id_of("a.md"), scoped_b.clone()],
        embedded_chunks: 0,
    };
    publish_next_version(
        &writer,
        Some(&manifest),
        change,
        common::embedder().as_ref(),
        manifest.chunker.clone(),
        &IndexOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        vectors_by_file(out).await.len(),
        1,
        "only c.md is served after the deletes"
    );

    let after_delete = run(src.path(), out, |_| {}).await;
    assert!(
        after_delete.reuse.notes.iter().any(|n| n.contains("no file table")),
        "{:?}",
        after_delete.reuse.notes
    );
    let d = delta(&after_delete);
    assert_eq!(
        (
            d.files_unchanged,
            d.documents_unchanged,
            d.documents_written,
            d.tombstones_lifted
        ),
        (0, 1, 2, 1),
        "{d:?}"
    );
    assert_eq!(after_delete.documents_indexed, 3);
    let mut tombstones = latest(out).await.tombstones;
    tombstones.sort();
    let mut expected = vec![format!("{first_segment}/{}", id_of("a.md")), scoped_b];
    expected.sort();
    assert_eq!(
        tombstones, expected,
        "the delete by id is lifted; the old copies stay hidden"
    );
    let served = vectors_by_file(out).await;
    assert_eq!(served.len(), 3);
    assert_eq!(served["c.md"], before["c.md"]);
    assert_fresh(&served, &["a.md", "b.md"]);

    // Damage a delta run does not need to read (c.md's segment; c.md is unchanged) goes
    // unseen: its rows are not read. A full run reads them: the damaged segment's documents
    // are embedded again, the readable segment's embeddings reused.
    let chunks_file = out_dir.path().join(format!("segments/{first_segment}/chunks.parquet"));
    let mut bytes = std::fs::read(&chunks_file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&chunks_file, bytes).unwrap();
    let quiet = run(src.path(), out, |_| {}).await;
    assert_eq!(
        (delta(&quiet).files_unchanged, quiet.reuse.segments_read),
        (3, 0),
        "{:?}",
        quiet.reuse
    );
    let after_damage = run(src.path(), out, |o| o.publish = PublishMode::Full).await;
    assert!(after_damage.delta.is_none());
    assert!(
        after_damage
            .reuse
            .notes
            .iter()
            .any(|n| n.contains(first_segment.as_str()) && n.contains("checksum")),
        "{:?}",
        after_damage.reuse.notes
    );
    assert_eq!(
        after_damage.reuse.documents, 2,
        "a.md and b.md come from the readable segment"
    );
    assert_eq!(after_damage.documents_indexed, 3);
    assert_eq!(latest(out).await.segments.len(), 1);
    assert!(embed_stage_tokens(&after_damage) > 0 && embed_stage_tokens(&after_damage) < after_damage.tokens);

    // A segment file of another size than the manifest says is seen without reading it: no
    // delta builds on it; a full version is published.
    let only_segment = latest(out).await.segments[0].id.clone();
    let chunks_file = out_dir.path().join(format!("segments/{only_segment}/chunks.parquet"));
    let bytes = std::fs::read(&chunks_file).unwrap();
    std::fs::write(&chunks_file, &bytes[..bytes.len() - 1]).unwrap();
    let after_truncation = run(src.path(), out, |_| {}).await;
    assert!(after_truncation.delta.is_none());
    assert!(
        after_truncation
            .reuse
            .notes
            .iter()
            .any(|n| n.contains(only_segment.as_str()) && n.contains("the manifest says")),
        "{:?}",
        after_truncation.reuse.notes
    );
    assert!(
        after_truncation
            .reuse
            .notes
            .iter()
            .any(|n| n.contains("unreadable: publishing a full version")),
        "{:?}",
        after_truncation.reuse.notes
    );
    assert_eq!(
        (after_truncation.reuse.documents, after_truncation.documents_indexed),
        (0, 3)
    );
    assert_eq!(embed_stage_tokens(&after_truncation), after_truncation.tokens);
    assert_fresh(&vectors_by_file(out).await, &["a.md", "b.md", "c.md"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_are_compacted_once_they_pile_up() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    for name in ["a", "b", "c", "d"] {
        std::fs::write(src.path().join(format!("{name}.md")), paragraph(name, 4)).unwrap();
    }
    let at_most_two_small = |o: &mut RunOptions| o.compact.max_small_segments = 2;
    run(src.path(), out, at_most_two_small).await;
    std::fs::write(src.path().join("a.md"), paragraph("apples", 4)).unwrap();
    let second = run(src.path(), out, at_most_two_small).await;
    assert!(delta(&second).compaction.is_none());
    assert_eq!(latest(out).await.segments.len(), 2);

    // A third segment is one small segment too many: all three are merged into one.
    std::fs::write(src.path().join("b.md"), paragraph("bananas", 4)).unwrap();
    let before_merge = {
        let third = run(src.path(), out, |o| {
            o.compact.max_small_segments = 3;
        })
        .await;
        assert!(delta(&third).compaction.is_none());
        vectors_by_file(out).await
    };
    std::fs::write(src.path().join("c.md"), paragraph("cherries", 4)).unwrap();
    let fourth = run(src.path(), out, at_most_two_small).await;
    let compaction = delta(&fourth).compaction.as_ref().expect("compacted");
    assert_eq!(compaction.merged_segments.len(), 4);
    assert_eq!(delta(&fourth).segments, 1);
    let manifest = latest(out).await;
    assert_eq!(
        Some(manifest.version.clone()),
        fourth.version,
        "the report names the compacted version"
    );
    assert_eq!((manifest.segments.len(), manifest.tombstones.len()), (1, 0));
    assert_eq!(
        (manifest.counts.documents, manifest.counts.chunks as u64 > 0),
        (4, true)
    );
    let served = vectors_by_file(out).await;
    assert_eq!(served["a.md"], before_merge["a.md"]);
    assert_eq!(served["d.md"], before_merge["d.md"]);
    assert_fresh(&served, &["c.md"]);
    assert!(served["c.md"].0.iter().all(|t| t.contains("cherries")));

    // Most rows hidden (three of four documents deleted): every segment is merged at once.
    for name in ["a", "b", "c"] {
        std::fs::remove_file(src.path().join(format!("{name}.md"))).unwrap();
    }
    let pruned = run(src.path(), out, |o| o.compact.max_hidden_fraction = 0.3).await;
    assert_eq!(delta(&pruned).documents_removed, 3);
    assert!(delta(&pruned).compaction.is_some());
    let manifest = latest(out).await;
    assert_eq!(
        (
            manifest.segments.len(),
            manifest.tombstones.len(),
            manifest.counts.documents
        ),
        (1, 0, 1)
    );
    assert_eq!(vectors_by_file(out).await["d.md"], before_merge["d.md"]);
    // The next run builds on the compacted version (the file table is carried over) and fetches nothing.
    let quiet = run(src.path(), out, |_| {}).await;
    assert_eq!((delta(&quiet).files_unchanged, stage_items(&quiet, "fetch")), (1, 0));
}

/// Compaction after a delta rewrites only the segments that tombstones mostly hide; the
/// others stay as they are, however many rows are hidden across the version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_mostly_hidden_segments_are_rewritten() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    for name in ["a", "b", "c", "d", "e"] {
        std::fs::write(src.path().join(format!("{name}.md")), paragraph(name, 4)).unwrap();
    }
    let above_40_percent = |o: &mut RunOptions| o.compact.max_hidden_fraction = 0.4;
    run(src.path(), out, above_40_percent).await;
    let first = latest(out).await.segments[0].id.clone();
    assert_eq!(latest(out).await.counts.chunks, 5, "one chunk per file");
    // One of the first segment's five rows hidden: nothing is merged.
    std::fs::write(src.path().join("a.md"), paragraph("apples", 4)).unwrap();
    let second = run(src.path(), out, above_40_percent).await;
    assert!(delta(&second).compaction.is_none());
    let apples_segment = latest(out).await.segments[1].id.clone();
    // Three of its five hidden (three of eight rows in the version): that segment alone is
    // rewritten with its two live documents; the delta segments stay.
    std::fs::write(src.path().join("b.md"), paragraph("bananas", 4)).unwrap();
    std::fs::write(src.path().join("c.md"), paragraph("cherries", 4)).unwrap();
    let third = run(src.path(), out, above_40_percent).await;
    let compaction = delta(&third).compaction.as_ref().expect("compacted");
    assert_eq!(compaction.merged_segments, vec![first.clone()]);
    assert_eq!(
        (
            compaction.documents_kept,
            compaction.documents_dropped,
            compaction.new_segments.len()
        ),
        (2, 3, 1)
    );
    let manifest = latest(out).await;
    let ids: Vec<&str> = manifest.segments.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        (ids.len(), ids[0], ids[1]),
        (3, compaction.new_segments[0].as_str(), apples_segment.as_str()),
        "the rewritten segment keeps its place"
    );
    assert!(manifest.tombstones.is_empty(), "{:?}", manifest.tombstones);
    assert_eq!((manifest.counts.documents, manifest.counts.chunks), (5, 5));
    let served = vectors_by_file(out).await;
    assert_eq!(served.len(), 5);
    assert_fresh(&served, &["a.md", "b.md", "c.md", "d.md"]);
    assert!(served["c.md"].0.iter().all(|t| t.contains("cherries")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_fails_keeps_its_last_good_version() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("meadows", 6)).unwrap();
    std::fs::write(src.path().join("b.md"), paragraph("canyons", 6)).unwrap();
    let jsonl =
        |rivers: &str, deltas: &str| format!("{rivers}\n{}\n", serde_json::json!({ "_id": "deltas", "text": deltas }));
    let rivers = serde_json::json!({ "_id": "rivers", "text": paragraph("rivers", 3) }).to_string();
    std::fs::write(src.path().join("c.jsonl"), jsonl(&rivers, &paragraph("deltas", 3))).unwrap();
    run(src.path(), out, |_| {}).await;

    for publish in [PublishMode::Delta, PublishMode::Full] {
        let before = vectors_by_file(out).await;
        // b.md now fails to fetch (over the size limit) and c.jsonl no longer parses; a.md changes.
        std::fs::write(
            src.path().join("a.md"),
            paragraph(&format!("meadows and hedgerows ({publish:?})"), 6),
        )
        .unwrap();
        std::fs::write(src.path().join("b.md"), paragraph("canyons", 60)).unwrap();
        std::fs::write(src.path().join("c.jsonl"), b"\xff\xfe not json at all").unwrap();
        let report = run(src.path(), out, |o| {
            o.source_options.max_file_bytes = 4_000;
            o.publish = publish;
        })
        .await;
        assert_eq!(report.documents_failed, 2, "{:?}", report.failures);
        let mut kept = report.reuse.kept_after_failure.clone();
        kept.sort();
        assert_eq!(kept.len(), 3, "{publish:?}: {kept:?}");
        assert!(
            kept[0].ends_with("b.md") && kept[1].ends_with("c.jsonl#deltas") && kept[2].ends_with("c.jsonl#rivers"),
            "{kept:?}"
        );
        let after = vectors_by_file(out).await;
        assert_eq!(
            after["b.md"], before["b.md"],
            "{publish:?}: b.md's last good version, bit for bit"
        );
        assert_eq!(after["c.jsonl"], before["c.jsonl"]);
        assert_ne!(after["a.md"], before["a.md"], "a.md itself was indexed afresh");

        // One bad line: its document cannot be told from a deleted one, so it keeps its last
        // good version; the good line's change is indexed.
        std::fs::write(
            src.path().join("c.jsonl"),
            jsonl("{ broken", &paragraph("deltas and estuaries", 3)),
        )
        .unwrap();
        let report = run(src.path(), out, |o| {
            o.source_options.max_file_bytes = 4_000;
            o.publish = publish;
        })
        .await;
        assert!(
            report.failures.iter().any(|f| f.uri.ends_with("c.jsonl#L1")),
            "{:?}",
            report.failures
        );
        assert!(
            report
                .reuse
                .kept_after_failure
                .iter()
                .any(|uri| uri.ends_with("c.jsonl#rivers")),
            "{publish:?}: {:?}",
            report.reuse.kept_after_failure
        );
        let texts = &vectors_by_file(out).await["c.jsonl"].0;
        assert!(
            texts.iter().any(|t| t.contains("rivers")) && texts.iter().any(|t| t.contains("estuaries")),
            "{publish:?}: {texts:?}"
        );
        std::fs::write(src.path().join("c.jsonl"), jsonl(&rivers, &paragraph("deltas", 3))).unwrap();
    }

    // Asked for a full run, nothing is carried over: failures drop their documents.
    std::fs::write(src.path().join("c.jsonl"), b"\xff\xfe not json at all").unwrap();
    let full = run(src.path(), out, |o| {
        o.source_options.max_file_bytes = 4_000;
        o.reuse = false;
    })
    .await;
    assert!(full.reuse.kept_after_failure.is_empty());
    assert_eq!(full.documents_indexed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_no_document_is_not_read_again_while_unchanged() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    std::fs::write(src.path().join("a.md"), paragraph("orchards", 6)).unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(std::iter::repeat_n(0u8, 4000));
    std::fs::write(src.path().join("pic.png"), &png).unwrap();
    std::fs::write(src.path().join("empty.txt"), b"").unwrap();
    // A broken line fails an item of its file, not the file: it is read again each run.
    std::fs::write(src.path().join("c.jsonl"), "{ broken\n").unwrap();
    let first = run(src.path(), out, |_| {}).await;
    let reasons = |report: &RunReport| -> Vec<(String, String, Option<String>)> {
        let mut reasons: Vec<_> = report
            .failures
            .iter()
            .map(|f| {
                let name = f.uri.rsplit('/').next().unwrap().to_string();
                (name, f.reason.clone(), f.unchanged_since.clone())
            })
            .collect();
        reasons.sort();
        reasons
    };
    let first_reasons = reasons(&first);
    let names: Vec<&str> = first_reasons.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(names, ["c.jsonl#L1", "empty.txt", "pic.png"]);
    assert!(first_reasons.iter().all(|(.., since)| since.is_none()));

    // Unchanged: the picture and the empty file are not fetched, their failures carried over
    // as reported; the file with a broken line is read again.
    let second = run(src.path(), out, |_| {}).await;
    assert_eq!(stage_items(&second, "fetch"), 1, "only c.jsonl");
    assert_eq!(delta(&second).files_unchanged, 3);
    let second_reasons = reasons(&second);
    assert_eq!(second.documents_failed, 3);
    for ((name, reason, since), (first_name, first_reason, _)) in second_reasons.iter().zip(&first_reasons) {
        assert_eq!((name, reason), (first_name, first_reason));
        let carried = name != "c.jsonl#L1";
        assert_eq!(since.as_ref(), first.version.as_ref().filter(|_| carried), "{name}");
    }
    let pic = second.failures.iter().find(|f| f.uri.ends_with("pic.png")).unwrap();
    assert!(
        pic.reason_with_detail().ends_with(&format!(
            "(unchanged since version {}: not read again)",
            first.version.as_ref().unwrap()
        )),
        "{}",
        pic.reason_with_detail()
    );
    // Carried again by the next run, from the version before it.
    let third = run(src.path(), out, |_| {}).await;
    assert_eq!(stage_items(&third, "fetch"), 1);
    let carried = third.failures.iter().find(|f| f.uri.ends_with("empty.txt")).unwrap();
    assert_eq!(carried.unchanged_since, second.version);

    // Changed, the picture is read again: now a note, it is indexed.
    std::fs::write(src.path().join("pic.png"), paragraph("pictures", 3)).unwrap();
    let fourth = run(src.path(), out, |_| {}).await;
    assert_eq!(stage_items(&fourth, "fetch"), 2, "pic.png and c.jsonl");
    let names: Vec<String> = reasons(&fourth).into_iter().map(|(name, ..)| name).collect();
    assert_eq!(names, ["c.jsonl#L1", "empty.txt"]);
    assert!(vectors_by_file(out).await.contains_key("pic.png"));

    // Another parse signature (another document token limit) reads every file again.
    let other = run(src.path(), out, |o| o.max_document_tokens = 400_000).await;
    assert_eq!(stage_items(&other, "fetch"), 4);
    assert!(other.failures.iter().all(|f| f.unchanged_since.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_changed_line_rewrites_only_its_document() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let lines = |third: &str| -> String {
        [
            ("rivers", paragraph("rivers", 3)),
            ("lakes", paragraph("lakes", 3)),
            ("springs", paragraph(third, 3)),
        ]
        .iter()
        .map(|(id, text)| format!("{}\n", serde_json::json!({ "_id": id, "text": text })))
        .collect()
    };
    std::fs::write(src.path().join("corpus.jsonl"), lines("springs")).unwrap();
    run(src.path(), out, |_| {}).await;
    let before = latest(out).await;

    // The file's ETag changes with the one line; the other two lines stay where they are.
    std::fs::write(src.path().join("corpus.jsonl"), lines("hot springs")).unwrap();
    let report = run(src.path(), out, |_| {}).await;
    let d = delta(&report);
    assert_eq!(
        (
            d.files_unchanged,
            d.documents_unchanged,
            d.documents_written,
            d.tombstones_added
        ),
        (0, 2, 1, 1),
        "{d:?}"
    );
    let manifest = latest(out).await;
    assert_eq!(manifest.segments[0], before.segments[0]);
    assert_eq!(manifest.segments[1].documents, 1);

    // The file table holds the file's new ETag: it is not fetched again, and no segment's rows are read.
    let quiet = run(src.path(), out, |_| {}).await;
    assert_eq!(
        (
            delta(&quiet).files_unchanged,
            stage_items(&quiet, "fetch"),
            quiet.reuse.segments_read
        ),
        (1, 0, 0)
    );
    assert_eq!(
        (quiet.documents_indexed, quiet.chunks, quiet.tokens),
        (report.documents_indexed, report.chunks, report.tokens)
    );
    // A removed line hides its document and writes nothing; the night after, the file is not fetched.
    std::fs::write(
        src.path().join("corpus.jsonl"),
        lines("hot springs")
            .lines()
            .take(2)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let removed = run(src.path(), out, |_| {}).await;
    assert_eq!(
        (
            delta(&removed).files_unchanged,
            delta(&removed).documents_removed,
            delta(&removed).documents_unchanged
        ),
        (0, 1, 2),
        "{:?}",
        removed.delta
    );
    assert_eq!(removed.documents_indexed, 2);
    let after_removal = run(src.path(), out, |_| {}).await;
    assert_eq!(
        (
            delta(&after_removal).files_unchanged,
            stage_items(&after_removal, "fetch"),
            after_removal.reuse.segments_read
        ),
        (1, 0, 0)
    );
    assert_eq!(
        (
            after_removal.documents_indexed,
            after_removal.chunks,
            after_removal.tokens
        ),
        (2, removed.chunks, removed.tokens)
    );
}
