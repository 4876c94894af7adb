//! A run that fails or dies before publishing leaves LATEST, and the version it names,
//! untouched and readable; garbage collection removes only what no kept version needs.

use crate::common;

use quarry_indexer::chunk::Chunk;
use quarry_indexer::embed::Embeddings;
use quarry_indexer::index::{build_keyword_index, build_vector_index, IndexSpec};
use quarry_indexer::parse::ContentType;
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, PublishMode, RunOptions};
use quarry_indexer::snapshot::{
    collect_garbage, layout, GcOptions, Manifest, SegmentManifest, SnapshotReader, SnapshotWriter,
};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::IndexerError;

async fn publish_first_version(src: &std::path::Path, out: &str) -> String {
    std::fs::write(src.join("a.md"), "# A\n\nThe first version.").unwrap();
    let mut options = RunOptions::new(src.to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    run_with_embedder(options, common::embedder())
        .await
        .unwrap()
        .version
        .unwrap()
}

/// The names in `folder`, sorted.
fn folder_entries(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

async fn assert_latest_is(out: &str, version: &str) {
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert_eq!(reader.manifest().version, version);
    assert!(reader.verify().await.unwrap().ok());
    assert_eq!(reader.read_chunks().await.unwrap().0.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segment_written_but_never_published_is_invisible() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let v1 = publish_first_version(src.path(), out).await;

    // A second run that dies after writing its data but before its manifest and LATEST.
    let chunk = Chunk {
        chunk_id: "x-0".into(),
        doc_id: "x".into(),
        index: 0,
        text: "orphan".into(),
        page: None,
        heading_path: vec![],
        content_type: ContentType::Text,
        token_count: 1,
        start_seconds: None,
    };
    let embeddings = Embeddings {
        dim: 4,
        data: vec![1.0, 0.0, 0.0, 0.0],
    };
    let vectors = build_vector_index(&IndexSpec::Flat, 4, &embeddings.data).unwrap();
    let keyword = tempfile::tempdir().unwrap();
    build_keyword_index(keyword.path(), ["orphan"].into_iter()).unwrap();
    let writer = SnapshotWriter::open(out, &StoreOptions::default()).unwrap();
    let segment = writer
        .write_segment("seg-orphan", &[chunk], &embeddings, &[], &vectors, keyword.path())
        .await
        .unwrap();
    assert!(out_dir.path().join("segments/seg-orphan/chunks.parquet").is_file());
    assert!(!segment.checksums.is_empty());
    // On a local root the vector index is serialized beside its place and renamed into it:
    // no `.partial` stays, and the checksum is the file's.
    let segment_dir = out_dir.path().join("segments/seg-orphan");
    let names: Vec<String> = std::fs::read_dir(&segment_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".partial")), "{names:?}");
    let vectors_file = segment_dir.join("vectors.faiss");
    let recorded = &segment.checksums["segments/seg-orphan/vectors.faiss"];
    assert_eq!(
        recorded.sha256,
        quarry_indexer::snapshot::sha256_hex(&std::fs::read(&vectors_file).unwrap())
    );
    assert_eq!(recorded.bytes, std::fs::metadata(&vectors_file).unwrap().len());
    drop(writer);

    assert_latest_is(out, &v1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_keeps_the_previous_version() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let v1 = publish_first_version(src.path(), out).await;

    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("broken.pdf"), b"%PDF-1.4 garbage").unwrap();
    std::fs::write(bad.path().join("empty.md"), b"").unwrap();
    let mut options = RunOptions::new(bad.path().to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    let err = run_with_embedder(options, common::embedder()).await.unwrap_err();
    assert!(matches!(err, IndexerError::NothingToPublish(_)), "{err}");
    assert!(err.to_string().contains("2 failed"), "{err}");

    assert_latest_is(out, &v1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_below_min_recall_is_not_published() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let v1 = publish_first_version(src.path(), out).await;
    let segments_of_v1 = folder_entries(&out_dir.path().join("segments"));

    // IVF probing 1 of 16 lists misses neighbours; --min-recall 0.99 must refuse it.
    let corpus = tempfile::tempdir().unwrap();
    std::fs::write(corpus.path().join("corpus.jsonl"), common::msmarco_slice(150)).unwrap();
    let mut options = RunOptions::new(corpus.path().to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    options.index = quarry_indexer::index::IndexOptions {
        kind: quarry_indexer::index::IndexKind::IvfFlat,
        nlist: Some(16),
        nprobe: Some(1),
        ..Default::default()
    };
    options.min_recall = Some(0.99);
    match run_with_embedder(options.clone(), common::embedder()).await {
        Err(IndexerError::RecallBelowMinimum { recall, min, .. }) => assert!(recall < min, "{recall}"),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.recall_at_10)),
    }
    assert_latest_is(out, &v1).await;
    // The refused segment's row files, written while its indexes were built, are gone, and
    // so is its folder.
    assert_eq!(folder_entries(&out_dir.path().join("segments")), segments_of_v1);

    // Probing every list is exact: the same run publishes, with the measured recall in the manifest.
    options.index.nprobe = Some(16);
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let check = reader.manifest().recall_check.clone().unwrap();
    assert_eq!((check.k, check.query_source.as_str()), (10, "chunks"));
    assert_eq!(Some(check.recall), report.recall_at_10);
    assert!(check.recall >= 0.99, "{check:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_removes_only_what_no_kept_version_needs() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let root = out_dir.path();
    let v1 = publish_first_version(src.path(), out).await;
    let mut versions = vec![v1];
    for text in ["The second version.", "The third version."] {
        std::fs::write(src.path().join("a.md"), format!("# A\n\n{text}")).unwrap();
        let mut options = RunOptions::new(src.path().to_str().unwrap(), out, common::model_dir());
        options.progress = ProgressMode::Quiet;
        options.publish = PublishMode::Full; // one segment per version
        versions.push(
            run_with_embedder(options, common::embedder())
                .await
                .unwrap()
                .version
                .unwrap(),
        );
    }
    // The first version's one segment, as its manifest names it (read before gc removes it).
    let first: Manifest =
        serde_json::from_slice(&std::fs::read(root.join(layout::manifest(&versions[0]))).unwrap()).unwrap();
    let first_segment = first.segments[0].id.clone();
    // A run that has written its manifest but not yet LATEST names a segment of its own.
    let latest = SnapshotReader::open(out, &StoreOptions::default())
        .await
        .unwrap()
        .manifest()
        .clone();
    let pending = Manifest {
        version: format!("{}z", versions[2]),
        segments: vec![SegmentManifest {
            id: "seg-pending".into(),
            ..latest.segments[0].clone()
        }],
        ..latest
    };
    std::fs::create_dir_all(root.join("segments/seg-pending")).unwrap();
    std::fs::write(root.join("segments/seg-pending/chunks.parquet"), b"pending").unwrap();
    std::fs::write(
        root.join(layout::manifest(&pending.version)),
        serde_json::to_vec(&pending).unwrap(),
    )
    .unwrap();
    // And a run that died before its manifest left a segment nobody names.
    std::fs::create_dir_all(root.join("segments/seg-orphan")).unwrap();
    std::fs::write(root.join("segments/seg-orphan/chunks.parquet"), b"orphan").unwrap();

    // Everything is younger than the default minimum age: nothing goes.
    let report = collect_garbage(
        out,
        &StoreOptions::default(),
        &GcOptions {
            keep: 1,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(
        report.versions_removed.is_empty() && report.segments_removed.is_empty(),
        "{report:?}"
    );
    assert_eq!(report.too_young, 1, "the orphan is left for being young");

    // A dry run names what would go and removes nothing.
    let now = GcOptions {
        keep: 2,
        min_age: std::time::Duration::ZERO,
        dry_run: true,
    };
    let report = collect_garbage(out, &StoreOptions::default(), &now).await.unwrap();
    assert_eq!(report.versions_removed, vec![versions[0].clone()]);
    assert_eq!(
        report.segments_removed,
        vec![first_segment.clone(), "seg-orphan".to_string()]
    );
    assert!(root.join(layout::manifest(&versions[0])).is_file());

    let report = collect_garbage(out, &StoreOptions::default(), &GcOptions { dry_run: false, ..now })
        .await
        .unwrap();
    assert_eq!(report.latest, versions[2]);
    assert_eq!(
        report.versions_kept,
        vec![versions[1].clone(), versions[2].clone(), pending.version.clone()]
    );
    assert!(!root.join(layout::manifest(&versions[0])).exists());
    assert!(!root.join(layout::report(&versions[0])).exists());
    assert!(
        !root.join(layout::files(&versions[0])).exists(),
        "the file table goes with its version"
    );
    assert!(root.join(layout::files(&versions[1])).is_file());
    assert!(
        !root.join("segments").join(&first_segment).exists(),
        "the folder goes with its files"
    );
    assert!(!root.join("segments/seg-orphan").exists());
    assert!(
        root.join("segments/seg-pending/chunks.parquet").is_file(),
        "the pending version's segment stays"
    );
    assert_latest_is(out, &versions[2]).await;
    let previous = SnapshotReader::open_version(out, &versions[1], &StoreOptions::default())
        .await
        .unwrap();
    assert!(previous.verify().await.unwrap().ok(), "a kept version stays whole");

    let err = collect_garbage(
        out,
        &StoreOptions::default(),
        &GcOptions {
            keep: 0,
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("keep must be at least 1"), "{err}");
}

/// A version whose manifest no longer reads cannot be built on, but a run still replaces it:
/// the run publishes a full version over it (LATEST is checked by name only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_replaces_a_version_whose_manifest_is_unreadable() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let broken = publish_first_version(src.path(), out).await;
    std::fs::write(out_dir.path().join(layout::manifest(&broken)), b"{ not json").unwrap();
    let mut options = RunOptions::new(src.path().to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    assert!(
        report.delta.is_none()
            && report
                .reuse
                .notes
                .iter()
                .any(|n| n.contains("previous version not read")),
        "{:?}",
        report.reuse
    );
    let version = report.version.unwrap();
    assert_ne!(version, broken);
    assert_latest_is(out, &version).await;
}
