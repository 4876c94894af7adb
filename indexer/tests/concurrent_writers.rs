//! Two writers into one snapshot root: a batch run, and meanwhile an upload through a server
//! (an online version), a rollback, or a stale writer. LATEST only moves from the version a
//! writer saw; a run's delta goes on top of a version built on its base, and is refused over
//! one that is not (a rollback). A batch run keeps the documents added through the API.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use quarry_indexer::chunk::{Chunker, ChunkerConfig, TokenChunker};
use quarry_indexer::error::IndexerError;
use quarry_indexer::pipeline::{
    publish_next_version, run_with_embedder, ProgressMode, RunOptions, RunReport, VersionChange,
};
use quarry_indexer::snapshot::{
    list_versions, roll_back, ChunkerManifest, LatestExpected, LatestGuard, Manifest, RollbackOptions, RollbackTarget,
    SnapshotReader, SnapshotWriter,
};
use quarry_indexer::store::{open_location, StoreOptions};

fn paragraph(topic: &str) -> String {
    (0..6)
        .map(|i| format!("Sentence {i} of the note about {topic}, with details only this note has. "))
        .collect()
}

fn write(dir: &Path, name: &str, topic: &str) {
    std::fs::write(dir.join(name), format!("# {topic}\n\n{}", paragraph(topic))).unwrap();
}

fn options(src: &Path, out: &str, after_embedding: Option<fn()>) -> RunOptions {
    let mut options = RunOptions::new(src.to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    options.compact.max_hidden_fraction = 1.0;
    options.after_embedding = after_embedding;
    options
}

/// Publishes an uploaded file (`upload://`) plus `tombstones` on top of LATEST, as a server does.
async fn upload(out: &str, name: &str, topic: &str, tombstones: Vec<String>) -> Manifest {
    upload_changing(out, &StoreOptions::default(), name, topic, tombstones).await
}

async fn upload_with(out: &str, store: &StoreOptions, name: &str, topic: &str) -> Manifest {
    upload_changing(out, store, name, topic, Vec::new()).await
}

async fn upload_changing(
    out: &str,
    store: &StoreOptions,
    name: &str,
    topic: &str,
    tombstones: Vec<String>,
) -> Manifest {
    let text = format!("# {topic}\n\n{}", paragraph(topic));
    common::publish_online(
        out,
        store,
        &format!("upload://docs/{name}/{name}"),
        name,
        &text,
        tombstones,
    )
    .await
}

/// Runs `work` to completion on a runtime of its own, on another thread (the run calls its
/// `after_embedding` hook from inside its own runtime).
fn meanwhile<F: std::future::Future<Output = ()> + Send + 'static>(work: F) {
    std::thread::spawn(move || tokio::runtime::Runtime::new().unwrap().block_on(work))
        .join()
        .unwrap();
}

/// Each live document's file name and the number of its live copies' chunks, plus every live
/// chunk text, in LATEST.
async fn live(out: &str) -> (BTreeMap<String, usize>, Vec<String>) {
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    assert!(reader.verify().await.unwrap().ok());
    let names: BTreeMap<String, String> = reader
        .read_documents()
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.doc_id, d.file_name))
        .collect();
    let (chunks, _) = reader.read_chunks().await.unwrap();
    let mut per_file = BTreeMap::new();
    for chunk in &chunks {
        *per_file.entry(names[&chunk.doc_id].clone()).or_insert(0) += 1;
    }
    (per_file, chunks.into_iter().map(|c| c.text).collect())
}

fn doc_id_of(uri: &str) -> String {
    quarry_indexer::parse::doc_id_for(uri)
}

/// What a run's hook uploads while the run works: the root, the file name and topic, and a
/// document to delete in the same change. One slot per test: tests may share a process.
type Meanwhile = Mutex<Option<(String, &'static str, &'static str, String)>>;

/// Takes what `slot` holds and uploads it, on a runtime of its own.
fn upload_from(slot: &Meanwhile) {
    let (out, name, topic, delete) = slot.lock().unwrap().take().expect("set by the test");
    meanwhile(async move {
        upload(&out, name, topic, vec![delete]).await;
    });
}

static UPLOAD_MEANWHILE: Meanwhile = Mutex::new(None);

/// The upload (and an online delete of a.md) that lands while the run embeds.
fn upload_meanwhile() {
    upload_from(&UPLOAD_MEANWHILE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delta_goes_on_top_of_an_upload_published_while_it_ran() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    for (name, topic) in [
        ("a.md", "apple orchards"),
        ("b.md", "bridge cables"),
        ("c.md", "copper mines"),
    ] {
        write(src.path(), name, topic);
    }
    let first: RunReport = run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap();
    let v1 = first.version.clone().unwrap();

    // The next night: b.md changes, c.md is gone, d.md arrives. While the run embeds, a server
    // publishes an upload and an online delete of a.md on top of v1.
    write(src.path(), "b.md", "bridge cables under repair");
    std::fs::remove_file(src.path().join("c.md")).unwrap();
    write(src.path(), "d.md", "dune grasses");
    let a_id = doc_id_of(&format!(
        "file://{}/a.md",
        std::fs::canonicalize(src.path()).unwrap().display()
    ));
    *UPLOAD_MEANWHILE.lock().unwrap() = Some((out.to_string(), "memo.md", "harbour cranes", a_id));
    let second = run_with_embedder(options(src.path(), out, Some(upload_meanwhile)), common::embedder())
        .await
        .unwrap();
    let delta = second.delta.as_ref().expect("a delta");
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let online = reader
        .manifest()
        .parent
        .clone()
        .expect("the run's version names its parent");
    assert_ne!(online, v1, "the run's version builds on the upload's");
    assert_eq!(delta.rebased_onto.as_deref(), Some(online.as_str()), "{delta:?}");
    assert_eq!(second.version.as_deref(), Some(reader.manifest().version.as_str()));
    let listing = list_versions(out, &StoreOptions::default()).await.unwrap();
    let chain: Vec<(&str, Option<&str>)> = listing
        .versions
        .iter()
        .map(|v| (v.version.as_str(), v.parent.as_deref()))
        .collect();
    assert_eq!(
        chain,
        [
            (v1.as_str(), None),
            (online.as_str(), Some(v1.as_str())),
            (listing.latest.as_str(), Some(online.as_str()))
        ],
        "versions list each one's parent"
    );

    // Both changes hold: the upload is there, a.md stays deleted (its file did not change),
    // b.md has its new copy only, c.md is gone, d.md arrived. One copy of each document.
    let (files, texts) = live(out).await;
    assert_eq!(
        files.keys().cloned().collect::<Vec<_>>(),
        ["b.md", "d.md", "memo.md"],
        "{files:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("under repair")) && !texts.iter().any(|t| t.contains("bridge cables, with")),
        "only b.md's new copy: {texts:?}"
    );
    assert_eq!(
        texts.iter().filter(|t| t.contains("harbour cranes")).count(),
        files["memo.md"]
    );

    // A quiet night later: the uploaded document stays (a batch run removes only what its
    // source no longer has), and a.md, which the source still has, comes back after its
    // online delete, as after any online delete of a source's document.
    let third = run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap();
    let delta = third.delta.as_ref().expect("a delta");
    assert_eq!(
        (
            delta.documents_written,
            delta.documents_removed,
            delta.documents_from_api,
            delta.rebased_onto.as_deref()
        ),
        (1, 0, 1, None),
        "{delta:?}"
    );
    assert_eq!(third.documents_indexed, 4);
    assert_eq!(
        live(out).await.0.keys().cloned().collect::<Vec<_>>(),
        ["a.md", "b.md", "d.md", "memo.md"]
    );
}

static UPLOAD_AND_DELETE_MEANWHILE: Meanwhile = Mutex::new(None);

/// An upload of late.md and an API delete of an earlier upload, while a full run embeds.
fn upload_and_delete_meanwhile() {
    upload_from(&UPLOAD_AND_DELETE_MEANWHILE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_version_keeps_the_documents_added_through_the_api() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    write(src.path(), "a.md", "apple orchards");
    write(src.path(), "b.md", "bridge cables");
    run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap();
    upload(out, "memo.md", "harbour cranes", Vec::new()).await;
    upload(out, "note.md", "night trains", Vec::new()).await;

    // A full run: the uploads are carried over with their stored vectors (nothing embedded for
    // them). Meanwhile late.md is uploaded and memo.md deleted through the API.
    write(src.path(), "a.md", "apple orchards in bloom");
    *UPLOAD_AND_DELETE_MEANWHILE.lock().unwrap() = Some((
        out.to_string(),
        "late.md",
        "lanterns at dusk",
        doc_id_of("upload://docs/memo.md/memo.md"),
    ));
    let mut full = options(src.path(), out, Some(upload_and_delete_meanwhile));
    full.publish = quarry_indexer::pipeline::PublishMode::Full;
    let report = run_with_embedder(full, common::embedder()).await.unwrap();
    assert!(report.delta.is_none());
    assert_eq!(
        report.reuse.api_documents_kept, 2,
        "note.md as rows, late.md carried (memo.md kept, then deleted): {:?}",
        report.reuse
    );
    assert!(report.reuse.kept_after_failure.is_empty());
    let (files, texts) = live(out).await;
    assert_eq!(
        files.keys().cloned().collect::<Vec<_>>(),
        ["a.md", "b.md", "late.md", "note.md"],
        "memo.md's delete holds: {files:?}"
    );
    assert!(texts.iter().any(|t| t.contains("in bloom")));
    assert_eq!(report.documents_indexed, 4);
    assert_eq!(report.chunks, texts.len(), "the report counts the rows LATEST serves");
    let manifest = SnapshotReader::open(out, &StoreOptions::default())
        .await
        .unwrap()
        .manifest()
        .clone();
    assert!(manifest.parent.is_none(), "a full version builds on nothing");
    let table = SnapshotReader::open(out, &StoreOptions::default())
        .await
        .unwrap()
        .read_file_table()
        .await
        .unwrap()
        .unwrap();
    assert!(
        table.files.keys().all(|uri| uri.starts_with("file://")),
        "no API document in the file table: {:?}",
        table.files.keys()
    );
}

static ROLLBACK_MEANWHILE: Mutex<Option<(String, String)>> = Mutex::new(None);

fn roll_back_meanwhile() {
    let (out, to) = ROLLBACK_MEANWHILE.lock().unwrap().take().expect("set by the test");
    meanwhile(async move {
        roll_back(
            &out,
            &StoreOptions::default(),
            &RollbackOptions {
                target: RollbackTarget::Version(to),
                verify: true,
                dry_run: false,
            },
        )
        .await
        .unwrap();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_while_a_run_works_is_not_undone_by_it() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    write(src.path(), "a.md", "apple orchards");
    let v1 = run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap()
        .version
        .unwrap();
    write(src.path(), "b.md", "bridge cables");
    let v2 = run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap()
        .version
        .unwrap();

    // The third run builds on v2; meanwhile v2 is rolled back. The run must not publish v2's
    // change again over the rollback.
    write(src.path(), "c.md", "copper mines");
    *ROLLBACK_MEANWHILE.lock().unwrap() = Some((out.to_string(), v1.clone()));
    let refused = run_with_embedder(options(src.path(), out, Some(roll_back_meanwhile)), common::embedder())
        .await
        .unwrap_err();
    match &refused {
        IndexerError::BaseReplaced { base, latest, .. } => assert_eq!((base, latest), (&v2, &v1)),
        other => panic!("expected BaseReplaced, got {other}"),
    }
    assert!(refused.to_string().contains("run again"), "{refused}");
    assert_eq!(
        SnapshotReader::latest_version(out, &StoreOptions::default())
            .await
            .unwrap(),
        v1
    );
    let manifests: HashSet<String> = std::fs::read_dir(out_dir.path().join("manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        manifests.len(),
        2,
        "the refused version left no manifest: {manifests:?}"
    );
    let tables = std::fs::read_dir(out_dir.path().join("files")).unwrap().count();
    assert_eq!(tables, 2, "nor a file table");

    // Run again: it builds on the rollback's target.
    let again = run_with_embedder(options(src.path(), out, None), common::embedder())
        .await
        .unwrap();
    assert_eq!(again.delta.as_ref().map(|d| d.base_version.as_str()), Some(v1.as_str()));
    assert_eq!(
        live(out).await.0.keys().cloned().collect::<Vec<_>>(),
        ["a.md", "b.md", "c.md"]
    );
}

/// A writer holding a stale base is refused on every kind of root; an online change goes on
/// top of what moved instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_writer_is_refused_and_an_online_change_goes_on_top() {
    let dir = tempfile::tempdir().unwrap();
    for out in [
        dir.path().to_str().unwrap().to_string(),
        "memory://concurrent-writers/root".to_string(),
    ] {
        let first = upload(&out, "one.md", "owls at night", Vec::new()).await;
        let second = upload(&out, "two.md", "tides at dawn", Vec::new()).await;
        assert_eq!(second.parent.as_deref(), Some(first.version.as_str()));
        // A stale writer (built on the first version) is refused; nothing of its is left.
        let writer = SnapshotWriter::open(&out, &StoreOptions::default()).unwrap();
        let stale = Manifest {
            version: "29990101T000000000Z-0000".into(),
            parent: Some(first.version.clone()),
            ..first.clone()
        };
        match writer.publish(&stale, LatestExpected::Is(Some(&first.version))).await {
            Err(IndexerError::LatestMoved { expected, found, .. }) => {
                assert_eq!((expected, found), (first.version.clone(), second.version.clone()))
            }
            other => panic!("{out}: expected LatestMoved, got {other:?}"),
        }
        assert!(
            SnapshotReader::open_version(&out, &stale.version, &StoreOptions::default())
                .await
                .is_err(),
            "{out}: no manifest left"
        );
        // An online change computed on the first version lands on top of the second.
        let embedder = common::embedder();
        let chunker = Arc::new(
            TokenChunker::new(
                ChunkerConfig::default(),
                embedder.tokenizer().clone(),
                &embedder.info().sha256,
            )
            .unwrap(),
        );
        let change = VersionChange {
            tombstones: vec!["some-document".into()],
            ..Default::default()
        };
        let third = publish_next_version(
            &writer,
            Some(&first),
            change,
            embedder.as_ref(),
            ChunkerManifest {
                config: chunker.config(),
                sig: chunker.signature(),
            },
            &Default::default(),
        )
        .await
        .unwrap();
        assert_eq!(third.parent.as_deref(), Some(second.version.as_str()), "{out}");
        assert_eq!(third.segments.len(), 2, "{out}: the second version's upload is kept");
        assert_eq!(
            SnapshotReader::latest_version(&out, &StoreOptions::default())
                .await
                .unwrap(),
            third.version
        );
    }
}

/// Two servers publish an upload each into one S3 root at the same time: whichever way their
/// writes interleave (LATEST is written with If-Match), both uploads are in LATEST.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_uploads_at_once_into_one_s3_root_both_land() {
    let server = common::S3Server::start("quarry-concurrent");
    let store = StoreOptions {
        s3_endpoint: Some(server.endpoint.clone()),
    };
    let out = format!("s3://{}/snapshots/shared", server.bucket);
    let first = upload_with(&out, &store, "one.md", "owls at night").await;
    for round in 0..3 {
        let (a_name, b_name) = (format!("a{round}.md"), format!("b{round}.md"));
        let (a, b) = tokio::join!(
            upload_with(&out, &store, &a_name, "tides at dawn"),
            upload_with(&out, &store, &b_name, "kites at noon")
        );
        let reader = SnapshotReader::open(&out, &store).await.unwrap();
        let latest = reader.manifest();
        assert!(
            [&a.version, &b.version].contains(&&latest.version),
            "LATEST is one of the two"
        );
        let names: HashSet<String> = reader
            .read_documents()
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.file_name)
            .collect();
        assert!(
            names.contains(&a_name) && names.contains(&b_name),
            "round {round}: {names:?}"
        );
        assert_eq!(latest.segments.len(), 3 + 2 * round, "every upload's segment is kept");
    }
    assert!(first.parent.is_none());

    // The conditional write itself: two writers read LATEST, the first writes it, the second's
    // write (If-Match with the ETag it read) is refused by S3.
    let root = open_location(&out, &store, false).unwrap();
    let (one, two) = (
        LatestGuard::acquire(&root).await.unwrap(),
        LatestGuard::acquire(&root).await.unwrap(),
    );
    let before = one.found().unwrap().to_string();
    assert_eq!(two.found(), Some(before.as_str()));
    one.point_at(&root, &first.version).await.unwrap();
    match two.point_at(&root, "29990101T000000000Z-0000").await {
        Err(IndexerError::LatestMoved { expected, .. }) => assert_eq!(expected, before),
        other => panic!("expected LatestMoved, got {other:?}"),
    }
    assert_eq!(
        SnapshotReader::latest_version(&out, &store).await.unwrap(),
        first.version
    );
    // With no LATEST at all, only one of two first writers creates it (If-None-Match).
    let fresh = open_location(&format!("s3://{}/snapshots/fresh", server.bucket), &store, false).unwrap();
    let (one, two) = (
        LatestGuard::acquire(&fresh).await.unwrap(),
        LatestGuard::acquire(&fresh).await.unwrap(),
    );
    assert_eq!((one.found(), two.found()), (None, None));
    one.point_at(&fresh, "v1").await.unwrap();
    assert!(matches!(
        two.point_at(&fresh, "v2").await,
        Err(IndexerError::LatestMoved { .. })
    ));
}
