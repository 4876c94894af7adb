//! Rolling a root back to an earlier version (and forward again), listing versions, and what
//! garbage collection does with the versions a rollback abandoned.

use crate::common;

use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, PublishMode, RunOptions};
use quarry_indexer::snapshot::{
    collect_garbage, layout, list_versions, roll_back, GcOptions, Manifest, RollbackOptions, RollbackTarget,
    SnapshotReader, VersionState,
};
use quarry_indexer::store::StoreOptions;

/// Publishes a.md with `text` as a full version (one segment of its own) and returns its id.
async fn publish(src: &std::path::Path, out: &str, text: &str) -> String {
    std::fs::write(src.join("a.md"), format!("# A\n\n{text}")).unwrap();
    let mut options = RunOptions::new(src.to_str().unwrap(), out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    options.publish = PublishMode::Full;
    run_with_embedder(options, common::embedder())
        .await
        .unwrap()
        .version
        .unwrap()
}

async fn latest_text(out: &str) -> (String, String) {
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let (chunks, _) = reader.read_chunks().await.unwrap();
    (reader.manifest().version.clone(), chunks[0].text.clone())
}

async fn states(out: &str) -> Vec<(String, VersionState)> {
    list_versions(out, &StoreOptions::default())
        .await
        .unwrap()
        .versions
        .into_iter()
        .map(|v| (v.version, v.state))
        .collect()
}

fn to(target: RollbackTarget) -> RollbackOptions {
    RollbackOptions {
        target,
        verify: true,
        dry_run: false,
    }
}

fn version(id: &str) -> RollbackTarget {
    RollbackTarget::Version(id.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_serves_an_earlier_version_and_gc_drops_what_it_abandoned() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let (out, root, store) = (
        out_dir.path().to_str().unwrap(),
        out_dir.path(),
        StoreOptions::default(),
    );
    let v1 = publish(src.path(), out, "The first night.").await;
    let v2 = publish(src.path(), out, "The second night.").await;
    let v3 = publish(src.path(), out, "The third night, a bad one.").await;
    let listing = list_versions(out, &store).await.unwrap();
    assert_eq!(listing.latest, v3);
    assert_eq!(
        states(out).await,
        vec![
            (v1.clone(), VersionState::Earlier),
            (v2.clone(), VersionState::Earlier),
            (v3.clone(), VersionState::Latest)
        ]
    );
    assert!(
        listing
            .versions
            .iter()
            .all(|v| v.missing_files.is_empty() && v.segments == 1 && v.new_segments == 1 && v.documents == 1),
        "{listing:?}"
    );
    let run = listing.versions[2].run.as_ref().expect("a batch run's report");
    assert_eq!(
        (run.documents_written, run.documents_removed, run.documents_failed),
        (1, None, 0),
        "a full run: {run:?}"
    );

    // A dry run says what would happen and writes nothing.
    let report = roll_back(
        out,
        &store,
        &RollbackOptions {
            dry_run: true,
            ..to(RollbackTarget::Previous)
        },
    )
    .await
    .unwrap();
    assert_eq!(
        (report.from.as_str(), report.to.as_str(), report.abandoned.clone()),
        (v3.as_str(), v2.as_str(), vec![v3.clone()])
    );
    assert!(
        report
            .verification
            .as_ref()
            .is_some_and(|v| v.ok() && v.files_checked > 0),
        "{report:?}"
    );
    assert_eq!(latest_text(out).await.0, v3);
    assert!(!root.join("rollbacks").exists());

    // The bad night undone: LATEST names the second version, and its rows are read.
    let report = roll_back(out, &store, &to(RollbackTarget::Previous)).await.unwrap();
    assert!(
        report.changed && !report.dry_run && report.notes.is_empty(),
        "{report:?}"
    );
    let (latest, text) = latest_text(out).await;
    assert_eq!(latest, v2);
    assert!(text.ends_with("The second night."), "{text}");
    assert_eq!(states(out).await[2], (v3.clone(), VersionState::RolledBack));
    // Forward again to the abandoned version, and back: a rollback takes its target back.
    roll_back(out, &store, &to(version(&v3))).await.unwrap();
    assert_eq!(states(out).await[2], (v3.clone(), VersionState::Latest));
    roll_back(out, &store, &to(RollbackTarget::Previous)).await.unwrap();
    let unchanged = roll_back(out, &store, &to(version(&v2))).await.unwrap();
    assert!(!unchanged.changed, "{unchanged:?}");

    // The next night builds on the version rolled back to; `previous` then skips the abandoned one.
    let v4 = publish(src.path(), out, "The fourth night.").await;
    assert_eq!(
        states(out).await,
        vec![
            (v1.clone(), VersionState::Earlier),
            (v2.clone(), VersionState::Earlier),
            (v3.clone(), VersionState::RolledBack),
            (v4.clone(), VersionState::Latest)
        ]
    );
    let report = roll_back(
        out,
        &store,
        &RollbackOptions {
            dry_run: true,
            ..to(RollbackTarget::Previous)
        },
    )
    .await
    .unwrap();
    assert_eq!(report.to, v2);

    // A target whose bytes differ from its manifest, or whose files are missing, is refused.
    let first: Manifest = serde_json::from_slice(&std::fs::read(root.join(layout::manifest(&v1))).unwrap()).unwrap();
    let first_segment = &first.segments[0].id;
    let chunks_path = root.join(layout::segment_file(first_segment, layout::CHUNKS));
    let mut bytes = std::fs::read(&chunks_path).unwrap();
    bytes[10] ^= 0xff;
    std::fs::write(&chunks_path, bytes).unwrap();
    let err = roll_back(out, &store, &to(version(&v1))).await.unwrap_err().to_string();
    assert!(
        err.contains("cannot roll back") && err.contains(layout::CHUNKS),
        "{err}"
    );
    let documents = layout::segment_file(first_segment, layout::DOCUMENTS);
    std::fs::remove_file(root.join(&documents)).unwrap();
    let listing = list_versions(out, &store).await.unwrap();
    assert_eq!(listing.versions[0].missing_files, vec![documents.clone()]);
    let err = roll_back(
        out,
        &store,
        &RollbackOptions {
            verify: false,
            ..to(version(&v1))
        },
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing") && err.contains(&documents), "{err}");
    assert_eq!(latest_text(out).await.0, v4, "a refused rollback changes nothing");

    // gc: the abandoned version does not count among those kept and goes once old enough.
    let young = collect_garbage(
        out,
        &store,
        &GcOptions {
            keep: 2,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(young.versions_removed.is_empty(), "{young:?}");
    let report = collect_garbage(
        out,
        &store,
        &GcOptions {
            keep: 2,
            min_age: std::time::Duration::ZERO,
            dry_run: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(report.versions_removed, vec![v1.clone(), v3.clone()]);
    assert_eq!(report.versions_kept, vec![v2.clone(), v4.clone()]);
    assert_eq!(
        report.rollback_records_removed, 1,
        "the roll forward to v3 named only v3"
    );
    assert_eq!(std::fs::read_dir(root.join("rollbacks")).unwrap().count(), 2);
    assert_eq!(
        states(out).await,
        vec![(v2.clone(), VersionState::Earlier), (v4.clone(), VersionState::Latest)]
    );
    let err = roll_back(out, &store, &to(version(&v3))).await.unwrap_err().to_string();
    assert!(err.contains("has no version") && err.contains(&v3), "{err}");
    roll_back(out, &store, &to(RollbackTarget::Previous)).await.unwrap();
    assert_eq!(latest_text(out).await.0, v2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_with_one_version_has_nothing_to_roll_back_to() {
    let src = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let only = publish(src.path(), out, "The only night.").await;
    let err = roll_back(out, &StoreOptions::default(), &to(RollbackTarget::Previous))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no version before LATEST") && err.contains(&only), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = roll_back(
        empty.path().to_str().unwrap(),
        &StoreOptions::default(),
        &to(RollbackTarget::Previous),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("LATEST is missing"), "{err}");
}
