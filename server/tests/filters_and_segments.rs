//! Filters inside both lanes (against an exact filtered scan), underfilled results,
//! several segments with tombstones, compaction of small segments into fewer, runs and deltas
//! cut into segments, model mismatch, corruption on load, and a snapshot loaded from S3
//! through the local cache; facet counts over what a search could return.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use object_store::ObjectStoreExt;
use quarry_indexer::index::{IndexKind, IndexOptions, IndexSpec};
use quarry_indexer::pipeline::{
    compact, run_with_embedder, segments_to_merge, CompactOptions, ProgressMode, PublishMode, RunOptions,
};
use quarry_indexer::snapshot::{layout, Manifest, SnapshotReader, SnapshotWriter};
use quarry_indexer::store::{open_location, StoreOptions};
use quarry_server::{Filters, LoadOptions, LoadedSnapshot, Mode, SearchRequest, Searcher, ServerError};

/// An msmarco slice with deterministic tags, sources and years in its metadata.
fn tagged_corpus(dir: &Path, docs: usize) {
    let lines: String = common::msmarco_slice(docs)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["metadata"] = serde_json::json!({ "tags": [format!("t{}", i % 5)], "year": 2020 + (i % 3) });
            format!("{value}\n")
        })
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), lines).unwrap();
}

async fn index(src: &Path, out: &Path, kind: IndexKind) {
    let mut options = RunOptions::new(src.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    options.index.kind = kind;
    options.progress = ProgressMode::Quiet;
    run_with_embedder(options, common::embedder()).await.unwrap();
}

async fn searcher(uri: &str) -> Searcher {
    let loaded = LoadedSnapshot::load(uri, &LoadOptions::default()).await.unwrap();
    Searcher::new(Arc::new(loaded), common::embedder()).unwrap()
}

/// The exact answer: every allowed chunk scored by brute force.
fn exact_filtered(searcher: &Searcher, query: &[f32], filters: &Filters, k: usize) -> Vec<String> {
    let snapshot = searcher.snapshot();
    let mut scored: Vec<(f32, usize)> = (0..snapshot.row_count())
        .filter(|&row| filters.matches(snapshot.document_of(row)))
        .map(|row| {
            (
                snapshot
                    .embedding(row)
                    .unwrap()
                    .iter()
                    .zip(query)
                    .map(|(a, b)| a * b)
                    .sum(),
                row,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(k)
        .map(|(_, row)| snapshot.chunk(row).chunk_id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_apply_inside_every_lane() {
    let src = tempfile::tempdir().unwrap();
    tagged_corpus(src.path(), 300);
    let out = tempfile::tempdir().unwrap();
    index(src.path(), out.path(), IndexKind::Hnsw).await;
    let exact_path = searcher(out.path().to_str().unwrap()).await;
    // The same snapshot with the ID-selector path through HNSW forced.
    let selector_path = searcher(out.path().to_str().unwrap()).await.with_exact_scan_max_rows(0);

    let queries = [
        "what is the weather like",
        "how to cook rice",
        "definition of a contract",
    ];
    let mut specs: Vec<Vec<&str>> = vec![
        vec!["tags=t1"],
        vec!["tags=t2,t3", "year=2021"],
        vec!["source=file", "year=2022"],
    ];
    specs.push(vec!["tags=t4", "year=2020"]);
    // Comparisons ($gte, $lt, $ne) on a metadata number.
    specs.extend([vec!["year>=2021"], vec!["year<2022", "tags=t1,t2"], vec!["year!=2021"]]);
    let mut cases: Vec<(Vec<&str>, Filters)> = specs
        .into_iter()
        .map(|spec| {
            let mut filters = Filters::default();
            spec.iter().for_each(|s| filters.add(s).unwrap());
            (spec, filters)
        })
        .collect();
    // Exclusions: a document any of them matches is left out, alone or beside a filter.
    let excluding: [(&[&str], &[&str]); 4] = [
        (&[], &["tags=t1"]),
        (&[], &["tags=t0", "year=2022"]),
        (&["year>=2021"], &["tags=t2,t3"]),
        (&["tags=t4"], &["year<2021"]),
    ];
    for (include, exclude) in excluding {
        let mut filters = Filters::default();
        include.iter().for_each(|s| filters.add(s).unwrap());
        exclude.iter().for_each(|s| filters.add_exclusion(s).unwrap());
        cases.push(([include, &["exclude:"], exclude].concat(), filters));
    }
    for query in queries {
        let vector = common::embedder().embed(&[query]).unwrap().data;
        for (spec, filters) in &cases {
            let filters = filters.clone();
            let want = exact_filtered(&exact_path, &vector, &filters, 10);
            for (name, searcher) in [("exact scan", &exact_path), ("hnsw selector", &selector_path)] {
                for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
                    let request = SearchRequest {
                        query: query.into(),
                        mode,
                        top_k: 10,
                        filters: filters.clone(),
                        ..Default::default()
                    };
                    let result = searcher.search(&request).unwrap().result;
                    let snapshot = searcher.snapshot();
                    for chunk in &result.chunks {
                        let row = snapshot.chunks().position(|c| c.chunk_id == chunk.chunk_id).unwrap();
                        assert!(
                            filters.matches(snapshot.document_of(row)),
                            "{name} {mode:?} {spec:?}: {} does not match",
                            chunk.chunk_id
                        );
                        assert!((0.0..=1.0).contains(&chunk.score));
                    }
                    if mode == Mode::Vector {
                        let got: Vec<String> = result.chunks.iter().map(|c| c.chunk_id.clone()).collect();
                        let overlap = got.iter().filter(|id| want.contains(id)).count();
                        assert_eq!(got.len(), want.len(), "{name} {spec:?}: as many as exist up to top_k");
                        assert!(
                            overlap >= want.len() * 9 / 10,
                            "{name} {spec:?}: {overlap} of {} exact hits",
                            want.len()
                        );
                        if name == "exact scan" {
                            assert_eq!(got, want, "{spec:?}: the exact path is exact");
                        }
                    }
                }
            }
        }
    }

    // A filter nothing matches: empty and underfilled; a rare one: as many as exist.
    let mut none = Filters::default();
    none.add("tags=nope").unwrap();
    let request = SearchRequest {
        query: "rice".into(),
        mode: Mode::Hybrid,
        filters: none,
        ..Default::default()
    };
    let result = exact_path.search(&request).unwrap().result;
    assert!(result.chunks.is_empty() && result.underfilled);
    let first_doc = exact_path.snapshot().documents().next().unwrap().doc_id.clone();
    let request = SearchRequest {
        query: "anything at all".into(),
        mode: Mode::Vector,
        filters: Filters {
            doc_id: vec![first_doc],
            ..Default::default()
        },
        ..Default::default()
    };
    let result = exact_path.search(&request).unwrap().result;
    assert_eq!(
        result.chunks.len(),
        exact_path.snapshot().documents().next().unwrap().chunk_count as usize
    );
    assert!(result.underfilled);
    assert_eq!(result.backend, "quarry");
    assert!(result.total_tokens > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_tombstones_model_check_and_corruption() {
    // Two runs give two segments; one manifest serves both, with one document tombstoned.
    let (a_src, b_src, a_out, b_out) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(
        a_src.path().join("gpus.md"),
        "# GPUs\n\nGraphics processors multiply matrices for vector search.",
    )
    .unwrap();
    std::fs::write(b_src.path().join("cats.md"), "# Cats\n\nCats sleep most of the day.").unwrap();
    std::fs::write(
        b_src.path().join("dogs.md"),
        "# Dogs\n\nDogs enjoy long walks in the park.",
    )
    .unwrap();
    index(a_src.path(), a_out.path(), IndexKind::Flat).await;
    index(b_src.path(), b_out.path(), IndexKind::Flat).await;
    let merged = tempfile::tempdir().unwrap();
    let mut manifests = Vec::new();
    for out in [a_out.path(), b_out.path()] {
        let reader = SnapshotReader::open(out.to_str().unwrap(), &StoreOptions::default())
            .await
            .unwrap();
        for relative in reader.manifest().checksums.keys() {
            let target = merged.path().join(relative);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(out.join(relative), target).unwrap();
        }
        manifests.push(reader.manifest().clone());
    }
    let mut manifest: Manifest = manifests[0].clone();
    manifest.version = format!("{}-merged", manifest.version);
    manifest.segments.extend(manifests[1].segments.clone());
    manifest.checksums.extend(manifests[1].checksums.clone());
    let dogs = SnapshotReader::open(b_out.path().to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap()
        .read_documents()
        .await
        .unwrap()
        .into_iter()
        .find(|d| d.file_name == "dogs.md")
        .unwrap();
    manifest.tombstones = vec![dogs.doc_id.clone()];
    let write_manifest = |manifest: &Manifest| {
        std::fs::create_dir_all(merged.path().join("manifests")).unwrap();
        std::fs::write(
            merged.path().join(layout::manifest(&manifest.version)),
            serde_json::to_vec(manifest).unwrap(),
        )
        .unwrap();
        std::fs::write(merged.path().join(layout::LATEST), &manifest.version).unwrap();
    };
    write_manifest(&manifest);

    let searcher = searcher(merged.path().to_str().unwrap()).await;
    assert_eq!(searcher.snapshot().segments.len(), 2);
    for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
        let request = SearchRequest {
            query: "dogs walks park cats graphics".into(),
            mode,
            top_k: 10,
            ..Default::default()
        };
        let files: Vec<String> = searcher
            .search(&request)
            .unwrap()
            .result
            .chunks
            .iter()
            .map(|c| c.file_name.clone())
            .collect();
        assert!(
            !files.contains(&"dogs.md".to_string()),
            "{mode:?}: tombstoned document returned: {files:?}"
        );
        if mode != Mode::Keyword {
            assert!(
                files.contains(&"gpus.md".to_string()) && files.contains(&"cats.md".to_string()),
                "{mode:?}: both segments answer: {files:?}"
            );
        }
    }

    // A snapshot embedded with other weights is refused.
    let mut foreign = manifest.clone();
    foreign.version = format!("{}-foreign", foreign.version);
    foreign.model.sha256 = "0".repeat(64);
    write_manifest(&foreign);
    let loaded = LoadedSnapshot::load(merged.path().to_str().unwrap(), &LoadOptions::default())
        .await
        .unwrap();
    match Searcher::new(Arc::new(loaded), common::embedder()) {
        Err(ServerError::ModelMismatch { snapshot_sha, .. }) => assert_eq!(snapshot_sha, "0".repeat(64)),
        other => panic!("expected a model mismatch, got {:?}", other.map(|_| ())),
    }

    // A corrupted file is named on load.
    write_manifest(&manifest);
    let victim = manifest
        .checksums
        .keys()
        .find(|k| k.ends_with("chunks.parquet"))
        .unwrap()
        .clone();
    let mut bytes = std::fs::read(merged.path().join(&victim)).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0x55;
    std::fs::write(merged.path().join(&victim), bytes).unwrap();
    match LoadedSnapshot::load(merged.path().to_str().unwrap(), &LoadOptions::default()).await {
        Err(ServerError::Corrupt { problems, .. }) => assert!(problems.contains(&victim), "{problems}"),
        other => panic!("expected a corrupt snapshot, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_snapshot_loads_through_the_version_cache() {
    let server = common::S3Server::start("quarry-search");
    let store = StoreOptions {
        s3_endpoint: Some(server.endpoint.clone()),
    };
    let snap_uri = format!("s3://{}/snap/sample", server.bucket);
    let mut options = RunOptions::new(
        common::workspace_root().join("datasets/sample").to_str().unwrap(),
        &snap_uri,
        common::model_dir(),
    );
    options.out_store = store.clone();
    options.progress = ProgressMode::Quiet;
    let report = run_with_embedder(options, common::embedder()).await.unwrap();
    let cache = tempfile::tempdir().unwrap();
    let load_options = LoadOptions {
        store: store.clone(),
        cache_dir: cache.path().to_path_buf(),
        ..Default::default()
    };
    let loaded = LoadedSnapshot::load(&snap_uri, &load_options).await.unwrap();
    assert_eq!(loaded.row_count(), report.chunks);
    let version = report.version.unwrap();
    let cached: Vec<_> = walk(cache.path())
        .into_iter()
        .filter(|p| p.ends_with(".complete"))
        .collect();
    assert_eq!(cached.len(), 1);
    assert!(cached[0].parent().unwrap().ends_with(&version));

    // The second load reads segment files from the cache: remove one from S3 to prove it.
    let root = open_location(&snap_uri, &store, false).unwrap();
    let chunks_key = loaded
        .manifest
        .checksums
        .keys()
        .find(|k| k.ends_with("chunks.parquet"))
        .unwrap();
    root.store.delete(&root.child(chunks_key)).await.unwrap();
    let again = LoadedSnapshot::load(&snap_uri, &load_options).await.unwrap();
    let searcher = Searcher::new(Arc::new(again), common::embedder()).unwrap();
    let result = searcher
        .search(&SearchRequest::new("immutable snapshots and the LATEST pointer"))
        .unwrap()
        .result;
    assert_eq!(result.chunks[0].file_name, "snapshots.html");

    // A new version that keeps that segment and adds one: the kept segment's files come from
    // the earlier cached version (the one deleted from S3 could not be downloaded), only the
    // new segment's are fetched.
    publish_upload_to(
        &snap_uri,
        &store,
        "note.txt",
        "Glaciers carve fjords over thousands of years.",
        Vec::new(),
    )
    .await;
    let third = LoadedSnapshot::load(&snap_uri, &load_options).await.unwrap();
    assert_eq!(third.segments.len(), 2);
    let searcher = Searcher::new(Arc::new(third), common::embedder()).unwrap();
    let result = searcher
        .search(&SearchRequest::new("how do glaciers shape fjords"))
        .unwrap()
        .result;
    assert_eq!(result.chunks[0].file_name, "note.txt");
    let result = searcher
        .search(&SearchRequest::new("immutable snapshots and the LATEST pointer"))
        .unwrap()
        .result;
    assert_eq!(result.chunks[0].file_name, "snapshots.html");

    // A load from a cached copy hashes its files again (only a download checks them as they
    // arrive): a file damaged in the cache is named.
    let third_version = searcher.snapshot().manifest.version.clone();
    let victim = searcher.snapshot().manifest.segments[1]
        .files
        .iter()
        .find(|f| f.ends_with("documents.parquet"))
        .unwrap()
        .clone();
    let cached_dir = walk(cache.path())
        .into_iter()
        .find(|p| p.ends_with(".complete") && p.parent().unwrap().ends_with(&third_version))
        .unwrap();
    let damaged = cached_dir.parent().unwrap().join(&victim);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[10] ^= 0xff;
    std::fs::write(&damaged, bytes).unwrap();
    match LoadedSnapshot::load(&snap_uri, &load_options).await {
        Err(ServerError::Corrupt { problems, .. }) => assert!(problems.contains(&victim), "{problems}"),
        other => panic!("expected a corrupt cached copy, got {:?}", other.map(|_| ())),
    }

    // A version whose new file is damaged in S3: the download names it, and the cache keeps
    // no part of it (no `.partial`, no file at its place, the version not marked complete).
    publish_upload_to(
        &snap_uri,
        &store,
        "tides.txt",
        "Tides follow the moon's pull on the oceans.",
        Vec::new(),
    )
    .await;
    let fourth = SnapshotReader::open(&snap_uri, &store)
        .await
        .unwrap()
        .manifest()
        .clone();
    let victim = fourth
        .segments
        .last()
        .unwrap()
        .files
        .iter()
        .find(|f| f.ends_with("chunks.parquet"))
        .unwrap()
        .clone();
    let key = root.child(&victim);
    let mut bytes = root.store.get(&key).await.unwrap().bytes().await.unwrap().to_vec();
    bytes[100] ^= 0xff;
    root.store.put(&key, bytes.into()).await.unwrap();
    let error = LoadedSnapshot::load(&snap_uri, &load_options)
        .await
        .err()
        .expect("a damaged download must not load")
        .to_string();
    assert!(error.contains(&victim) && error.contains("checksum"), "{error}");
    let leftovers: Vec<_> = walk(cache.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&fourth.version))
        .collect();
    assert!(
        leftovers
            .iter()
            .all(|p| !p.ends_with(".complete") && !p.to_string_lossy().ends_with(".partial") && !p.ends_with(&victim)),
        "{leftovers:?}"
    );

    // The next load resumes: a file already in place (put there as an interrupted download
    // would have left it; gone from S3, so it cannot be fetched again) is kept after its
    // hash is checked, and the version loads once the damaged file is mended in S3.
    let version_dir = cached_dir.parent().unwrap().parent().unwrap().join(&fourth.version);
    let kept = fourth
        .segments
        .last()
        .unwrap()
        .files
        .iter()
        .find(|f| f.ends_with("documents.parquet"))
        .unwrap()
        .clone();
    let kept_bytes = root.store.get(&root.child(&kept)).await.unwrap().bytes().await.unwrap();
    std::fs::create_dir_all(version_dir.join(&kept).parent().unwrap()).unwrap();
    std::fs::write(version_dir.join(&kept), &kept_bytes).unwrap();
    root.store.delete(&root.child(&kept)).await.unwrap();
    let mut mended = root.store.get(&key).await.unwrap().bytes().await.unwrap().to_vec();
    mended[100] ^= 0xff;
    root.store.put(&key, mended.into()).await.unwrap();
    let resumed = LoadedSnapshot::load(&snap_uri, &load_options).await.unwrap();
    let searcher = Searcher::new(Arc::new(resumed), common::embedder()).unwrap();
    let result = searcher
        .search(&SearchRequest::new("what makes the tides"))
        .unwrap()
        .result;
    assert_eq!(result.chunks[0].file_name, "tides.txt");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// One small segment per call, as online uploads make them.
async fn publish_upload(out: &str, name: &str, text: &str, tombstones: Vec<String>) -> Manifest {
    publish_upload_to(out, &StoreOptions::default(), name, text, tombstones).await
}

async fn publish_upload_to(
    out: &str,
    store: &StoreOptions,
    name: &str,
    text: &str,
    tombstones: Vec<String>,
) -> Manifest {
    common::publish_online(out, store, &format!("upload://c/{name}"), name, text, tombstones).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_serves_the_same_answers_from_fewer_segments() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let passages: Vec<serde_json::Value> = common::msmarco_slice(24)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, group) in passages.chunks(4).enumerate() {
        let text: String = group
            .iter()
            .map(|p| format!("{}\n\n", p["text"].as_str().unwrap()))
            .collect();
        publish_upload(out, &format!("upload-{i}.txt"), &text, Vec::new()).await;
    }
    // Delete upload-1 by document id; replace upload-2 (its old copy tombstoned by segment).
    let before = searcher(out).await;
    let id_of = |name: &str| {
        before
            .snapshot()
            .documents()
            .find(|d| d.file_name == name)
            .unwrap()
            .doc_id
            .clone()
    };
    let segment_of = |name: &str| {
        before
            .snapshot()
            .live_documents()
            .find(|(d, _, _)| d.file_name == name)
            .unwrap()
            .2
            .to_string()
    };
    let tombstones = vec![
        id_of("upload-1.txt"),
        format!("{}/{}", segment_of("upload-2.txt"), id_of("upload-2.txt")),
    ];
    let replaced: String = passages[8..12]
        .iter()
        .map(|p| format!("{} Revised.\n\n", p["text"].as_str().unwrap()))
        .collect();
    let manifest = publish_upload(out, "upload-2.txt", &replaced, tombstones).await;
    assert_eq!(manifest.segments.len(), 7);
    let before = searcher(out).await;
    let queries = [
        "what is the weather like",
        "how to cook rice",
        "definition of a contract",
        "Revised",
    ];
    let answers = |searcher: &Searcher| -> Vec<Vec<(String, String)>> {
        let mut all = Vec::new();
        for query in queries {
            for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
                let request = SearchRequest {
                    query: query.into(),
                    mode,
                    top_k: 8,
                    ..Default::default()
                };
                let result = searcher.search(&request).unwrap().result;
                all.push(
                    result
                        .chunks
                        .iter()
                        .map(|c| (c.file_name.clone(), c.content.clone()))
                        .collect(),
                );
            }
        }
        all
    };
    let expected = answers(&before);
    assert!(expected.iter().flatten().all(|(file, _)| file != "upload-1.txt"));
    // Raw BM25 scores too: the tombstoned rows' words weigh on nothing, before compaction as after.
    let keyword_scores = |searcher: &Searcher| -> Vec<(String, f64)> {
        let mut all = Vec::new();
        for query in queries {
            let request = SearchRequest {
                query: query.into(),
                mode: Mode::Keyword,
                top_k: 8,
                ..Default::default()
            };
            let result = searcher.search(&request).unwrap().result;
            all.extend(
                result
                    .chunks
                    .iter()
                    .map(|c| (c.content.clone(), c.metadata["keyword_score"].as_f64().unwrap())),
            );
        }
        all
    };
    let expected_scores = keyword_scores(&before);

    // Small segments are merged only once there are more than max_small_segments.
    let policy = CompactOptions {
        max_small_segments: 7,
        ..Default::default()
    };
    assert!(segments_to_merge(&manifest, &policy).is_empty());
    let merge = segments_to_merge(
        &manifest,
        &CompactOptions {
            max_small_segments: 6,
            ..policy
        },
    );
    assert_eq!(merge.len(), 7);
    let capped_dir = tempfile::tempdir().unwrap();
    copy_tree(out_dir.path(), capped_dir.path());
    let reader = SnapshotReader::open(out, &StoreOptions::default()).await.unwrap();
    let writer = SnapshotWriter::open(out, &StoreOptions::default()).unwrap();
    // Index options sized for a whole corpus (as a nightly run passes its own) do not fail a
    // small merge: it gets exact search.
    let corpus_sized = IndexOptions {
        kind: IndexKind::IvfFlat,
        nlist: Some(1024),
        ..Default::default()
    };
    let (report, compacted) = compact(
        &reader,
        &writer,
        &merge,
        &CompactOptions {
            index: corpus_sized,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.merged_segments, merge);
    assert_eq!(
        (report.chunks_kept + report.chunks_dropped, report.documents_dropped),
        (manifest.counts.chunks, 2)
    );
    assert_eq!((report.tombstones_before, report.tombstones_after), (2, 0));
    assert_eq!(compacted.segments.len(), 1);
    assert_eq!(compacted.segment_index(&compacted.segments[0]), IndexSpec::Flat);
    assert_eq!(compacted.counts.chunks, report.chunks_kept);
    assert_eq!(compacted.counts.documents, 5, "six uploads, one deleted, one replaced");
    assert!(SnapshotReader::open(out, &StoreOptions::default())
        .await
        .unwrap()
        .verify()
        .await
        .unwrap()
        .ok());

    let after = searcher(out).await;
    assert_eq!(after.snapshot().segments.len(), 1);
    assert_eq!(after.snapshot().row_count(), before.snapshot().live_rows());
    assert_eq!(
        after.snapshot().live_documents().len(),
        before.snapshot().live_documents().len()
    );
    assert_eq!(answers(&after), expected, "one merged segment answers as the seven did");
    let same_scores = |searcher: &Searcher| {
        let scores = keyword_scores(searcher);
        assert_eq!(scores.len(), expected_scores.len());
        for ((content, score), (expected_content, expected_score)) in scores.iter().zip(&expected_scores) {
            assert_eq!(content, expected_content);
            assert!(
                (score - expected_score).abs() < 1e-4 * expected_score.max(1.0),
                "BM25 {score} after compaction, {expected_score} before: {content}"
            );
        }
    };
    same_scores(&after);

    // With a segment size, consecutive segments merge until the next would take one past it:
    // every segment merged, none larger than the size unless it came so, the same answers.
    let capped_out = capped_dir.path().to_str().unwrap();
    let reader = SnapshotReader::open(capped_out, &StoreOptions::default())
        .await
        .unwrap();
    let all: Vec<String> = manifest.segments.iter().map(|s| s.id.clone()).collect();
    let capped = CompactOptions {
        max_segment_chunks: 9,
        ..Default::default()
    };
    let (report, compacted) = compact(
        &reader,
        &SnapshotWriter::open(capped_out, &StoreOptions::default()).unwrap(),
        &all,
        &capped,
    )
    .await
    .unwrap();
    assert_eq!((report.merged_segments.len(), report.tombstones_after), (7, 0));
    let new_segments: Vec<String> = compacted.segments.iter().map(|s| s.id.clone()).collect();
    assert_eq!(report.new_segments, new_segments);
    assert!((2..7).contains(&new_segments.len()), "{new_segments:?}");
    let largest_before = manifest.segments.iter().map(|s| s.chunks).max().unwrap();
    assert!(
        compacted.segments.iter().all(|s| s.chunks <= 9.max(largest_before)),
        "{:?}",
        compacted.segments
    );
    assert!(
        compacted
            .segments
            .windows(2)
            .all(|pair| pair[0].chunks + pair[1].chunks > 9),
        "a segment that fit into the one before was not merged into it: {:?}",
        compacted.segments
    );
    assert_eq!(
        compacted.segments.iter().map(|s| s.chunks).sum::<usize>(),
        report.chunks_kept
    );
    assert!(SnapshotReader::open(capped_out, &StoreOptions::default())
        .await
        .unwrap()
        .verify()
        .await
        .unwrap()
        .ok());
    let after = searcher(capped_out).await;
    assert_eq!(after.snapshot().row_count(), before.snapshot().live_rows());
    assert_eq!(
        answers(&after),
        expected,
        "{} merged segments answer as the seven did",
        new_segments.len()
    );
    same_scores(&after);
}

/// A copy of the folder `from` in `to`.
fn copy_tree(from: &Path, to: &Path) {
    for file in walk(from) {
        let target = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&file, &target).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_reads_only_the_new_segments() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let passages: Vec<String> = common::msmarco_slice(16)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for (i, group) in passages[..12].chunks(4).enumerate() {
        publish_upload(out, &format!("upload-{i}.txt"), &group.join("\n\n"), Vec::new()).await;
    }
    let first = Arc::new(LoadedSnapshot::load(out, &LoadOptions::default()).await.unwrap());
    assert_eq!((first.segments.len(), first.reused_segments), (3, 0));

    // One more upload and a delete of a document in an old segment.
    let deleted = first
        .documents()
        .find(|d| d.file_name == "upload-0.txt")
        .unwrap()
        .doc_id
        .clone();
    publish_upload(out, "upload-3.txt", &passages[12..].join("\n\n"), vec![deleted.clone()]).await;
    // Damage an old segment on disk: a reload that reads it again would refuse the version.
    let victim = out_dir
        .path()
        .join(format!("segments/{}/chunks.parquet", first.segments[1].id));
    let mut bytes = std::fs::read(&victim).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(&victim, &bytes).unwrap();
    assert!(matches!(
        LoadedSnapshot::load(out, &LoadOptions::default()).await,
        Err(ServerError::Corrupt { .. })
    ));
    let second = LoadedSnapshot::load_after(out, &LoadOptions::default(), Some(first.clone()))
        .await
        .unwrap();
    assert_eq!((second.segments.len(), second.reused_segments), (4, 3));
    for (old, new) in first.segments.iter().zip(&second.segments) {
        assert!(
            Arc::ptr_eq(&old.data, &new.data),
            "segment {} is shared (rows and indexes), not read or copied again",
            old.id
        );
    }

    // The reused version answers exactly as a fresh load of the same files does.
    bytes[middle] ^= 0x55;
    std::fs::write(&victim, &bytes).unwrap();
    let fresh = Searcher::new(
        Arc::new(LoadedSnapshot::load(out, &LoadOptions::default()).await.unwrap()),
        common::embedder(),
    )
    .unwrap();
    let reloaded = Searcher::new(Arc::new(second), common::embedder()).unwrap();
    let documents_of_rows = |s: &LoadedSnapshot| {
        (0..s.row_count())
            .map(|row| s.document_of(row).doc_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        documents_of_rows(reloaded.snapshot()),
        documents_of_rows(fresh.snapshot())
    );
    assert_eq!(reloaded.snapshot().live_rows(), fresh.snapshot().live_rows());
    for query in ["what is the weather like", "how to cook rice", passages[13].as_str()] {
        for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
            let request = SearchRequest {
                query: query.into(),
                mode,
                top_k: 10,
                ..Default::default()
            };
            let hits = |s: &Searcher| -> Vec<(String, String)> {
                s.search(&request)
                    .unwrap()
                    .result
                    .chunks
                    .iter()
                    .map(|c| (c.chunk_id.clone(), format!("{:.6}", c.score)))
                    .collect()
            };
            let got = hits(&reloaded);
            assert_eq!(got, hits(&fresh), "{mode:?} {query:?}");
            assert!(
                got.iter().all(|(id, _)| !id.starts_with(&deleted)),
                "the deleted document stays hidden"
            );
        }
    }
}

/// A reload works out a kept segment's hidden rows from the previous version's: more
/// tombstones on it, and then a version that hides fewer of its rows, give the same hidden
/// rows, keyword statistics and keyword answers as a fresh load of each version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_updates_the_hidden_rows_of_kept_segments() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let slice = common::msmarco_slice(14);
    let lines: Vec<&str> = slice.lines().collect();
    let text_of = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    publish_upload(out, "batch.jsonl", &lines[..12].join("\n"), Vec::new()).await;
    let first = Arc::new(LoadedSnapshot::load(out, &LoadOptions::default()).await.unwrap());
    let ids: Vec<String> = first.documents().map(|d| d.doc_id.clone()).collect();
    assert_eq!(ids.len(), 12);

    // Two documents of the first segment hidden, then one more; each version adds an upload.
    let two_hidden = publish_upload(out, "a.txt", &text_of(lines[12]), ids[..2].to_vec()).await;
    let second = Arc::new(
        LoadedSnapshot::load_after(out, &LoadOptions::default(), Some(first))
            .await
            .unwrap(),
    );
    publish_upload(out, "b.txt", &text_of(lines[13]), vec![ids[5].clone()]).await;
    let third = Arc::new(
        LoadedSnapshot::load_after(out, &LoadOptions::default(), Some(second.clone()))
            .await
            .unwrap(),
    );
    // Back to the version hiding two: a row of a kept segment shown again.
    let at_two_hidden = LoadOptions {
        version: Some(two_hidden.version.clone()),
        ..Default::default()
    };
    let back = Arc::new(
        LoadedSnapshot::load_after(out, &at_two_hidden, Some(third.clone()))
            .await
            .unwrap(),
    );
    assert_eq!((third.reused_segments, back.reused_segments), (2, 2));
    assert!(
        back.segments[0].hidden.rows.len() == second.segments[0].hidden.rows.len()
            && third.segments[0].hidden.rows.len() > back.segments[0].hidden.rows.len()
    );

    let query = text_of(lines[5]);
    for (reloaded, options) in [(third, LoadOptions::default()), (back, at_two_hidden)] {
        let fresh = Arc::new(LoadedSnapshot::load(out, &options).await.unwrap());
        assert_eq!(reloaded.tombstoned, fresh.tombstoned);
        for (kept, read) in reloaded.segments.iter().zip(&fresh.segments) {
            assert_eq!(kept.hidden, read.hidden, "segment {}", kept.id);
        }
        assert!(reloaded.hidden_keyword_stats().docs > 0);
        assert_eq!(reloaded.hidden_keyword_stats(), fresh.hidden_keyword_stats());
        let (reloaded_hits, fresh_hits) = (keyword_hits(reloaded, &query), keyword_hits(fresh, &query));
        assert!(!reloaded_hits.is_empty());
        assert_eq!(reloaded_hits, fresh_hits);
    }
}

/// Rows and raw BM25 scores (before any normalization) of a keyword search.
fn keyword_hits(snapshot: Arc<LoadedSnapshot>, query: &str) -> Vec<(usize, String)> {
    let searcher = Searcher::new(snapshot, common::embedder()).unwrap();
    searcher
        .keyword_lane(&query.into(), 10, None)
        .unwrap()
        .into_iter()
        .map(|hit| (hit.row, format!("{:.6}", hit.score)))
        .collect()
}

/// A full run cut into segments as it embeds (`segment_chunks`) serves what one segment does:
/// every document once, the same answers in every mode and filter, the same BM25 scores, a
/// duplicate failed alone; a nightly rerun builds on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cut_into_segments_answers_as_one_segment() {
    let src = tempfile::tempdir().unwrap();
    tagged_corpus(src.path(), 60);
    // A second copy of the first passage: the same URI, so a duplicate that must fail alone.
    let first_line = std::fs::read_to_string(src.path().join("corpus.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut corpus = std::fs::OpenOptions::new()
        .append(true)
        .open(src.path().join("corpus.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut corpus, format!("{first_line}\n").as_bytes()).unwrap();
    let (one_dir, cut_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let run = |out: &Path, segment_chunks: usize| {
        let mut options = RunOptions::new(src.path().to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
        options.progress = ProgressMode::Quiet;
        // Embedded in groups of 8 chunks; cut at 20, several segments.
        (options.embed_group, options.segment_chunks) = (Some(8), segment_chunks);
        run_with_embedder(options, common::embedder())
    };
    let one = run(one_dir.path(), quarry_indexer::pipeline::DEFAULT_SEGMENT_CHUNKS)
        .await
        .unwrap();
    let cut = run(cut_dir.path(), 20).await.unwrap();
    for report in [&one, &cut] {
        assert_eq!(
            (report.documents_indexed, report.documents_failed),
            (60, 1),
            "{report:?}"
        );
        assert!(
            report.failures[0].reason.contains("duplicate document"),
            "{:?}",
            report.failures
        );
    }
    assert_eq!((cut.chunks, cut.tokens), (one.chunks, one.tokens));

    let (one, cut) = (
        searcher(one_dir.path().to_str().unwrap()).await,
        searcher(cut_dir.path().to_str().unwrap()).await,
    );
    assert_eq!(one.snapshot().segments.len(), 1);
    let segments = cut.snapshot().segments.len();
    assert!(segments >= 3, "{segments} segments");
    // Every document is in exactly one segment.
    let mut documents: Vec<String> = cut.snapshot().documents().map(|d| d.doc_id.clone()).collect();
    documents.sort();
    let before = documents.len();
    documents.dedup();
    assert_eq!((before, documents.len()), (60, 60));

    let queries = [
        "what is the weather like",
        "how to cook rice",
        "definition of a contract",
        "symptoms of a cold",
    ];
    let answers = |searcher: &Searcher| -> Vec<Vec<(String, String, String)>> {
        let mut all = Vec::new();
        for query in queries {
            for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
                for filters in [
                    Filters::default(),
                    Filters {
                        tags: vec!["t1".into(), "t3".into()],
                        ..Default::default()
                    },
                ] {
                    let request = SearchRequest {
                        query: query.into(),
                        mode,
                        top_k: 8,
                        filters,
                        ..Default::default()
                    };
                    let result = searcher.search(&request).unwrap().result;
                    all.push(
                        result
                            .chunks
                            .iter()
                            .map(|c| {
                                (
                                    c.chunk_id.clone(),
                                    format!("{:.5}", c.score),
                                    format!(
                                        "{:.4}",
                                        c.metadata.get("keyword_score").and_then(|v| v.as_f64()).unwrap_or(0.0)
                                    ),
                                )
                            })
                            .collect(),
                    );
                }
            }
        }
        all
    };
    let expected = answers(&one);
    // Vector searches always answer (the first two of each query's six), keyword ones where words match.
    assert!(expected
        .chunks(6)
        .all(|per_query| !per_query[0].is_empty() && !per_query[1].is_empty()));
    assert!(
        expected.iter().filter(|hits| !hits.is_empty()).count() >= 18,
        "{expected:?}"
    );
    assert_eq!(answers(&cut), expected, "{segments} segments answer as one");

    // A nightly rerun over the cut version: nothing changed, nothing embedded, its segments kept.
    let mut options = RunOptions::new(
        src.path().to_str().unwrap(),
        cut_dir.path().to_str().unwrap(),
        common::model_dir(),
    );
    options.progress = ProgressMode::Quiet;
    let rerun = run_with_embedder(options, common::embedder()).await.unwrap();
    let delta = rerun.delta.as_ref().expect("a delta over the cut version");
    assert_eq!((delta.documents_written, delta.segments), (0, segments), "{rerun:?}");
    assert_eq!(
        (rerun.documents_indexed, rerun.documents_failed),
        (60, 1),
        "the duplicate fails again: {rerun:?}"
    );

    let cut_segments: Vec<String> = cut.snapshot().segments.iter().map(|s| s.id.clone()).collect();
    // Every passage edited: a delta cut into segments as it embeds answers as one new segment.
    let edited: String = std::fs::read_to_string(src.path().join("corpus.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["text"] = format!("{} Revised.", value["text"].as_str().unwrap()).into();
            format!("{value}\n")
        })
        .collect();
    std::fs::write(src.path().join("corpus.jsonl"), edited).unwrap();
    let rerun = |out: &Path, segment_chunks: usize, publish: PublishMode| {
        let mut options = RunOptions::new(src.path().to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
        (
            options.progress,
            options.publish,
            options.embed_group,
            options.segment_chunks,
        ) = (ProgressMode::Quiet, publish, Some(8), segment_chunks);
        options.compact.max_hidden_fraction = 1.0; // the replaced copies stay, hidden
        run_with_embedder(options, common::embedder())
    };
    let one_delta = rerun(
        one_dir.path(),
        quarry_indexer::pipeline::DEFAULT_SEGMENT_CHUNKS,
        PublishMode::Delta,
    )
    .await
    .unwrap();
    let cut_delta = rerun(cut_dir.path(), 20, PublishMode::Delta).await.unwrap();
    let (one_d, cut_d) = (one_delta.delta.as_ref().unwrap(), cut_delta.delta.as_ref().unwrap());
    for (report, d) in [(&one_delta, one_d), (&cut_delta, cut_d)] {
        assert_eq!(
            (
                d.documents_written,
                d.documents_unchanged,
                d.tombstones_added,
                report.documents_failed
            ),
            (60, 0, 60, 1),
            "{report:?}"
        );
    }
    assert_eq!(
        (cut_d.chunks_written, cut_delta.tokens),
        (one_d.chunks_written, one_delta.tokens)
    );
    assert_eq!(one_d.segments, 2);
    assert!(
        cut_d.segments >= segments + 3,
        "{} segments after the delta over {segments}",
        cut_d.segments
    );
    let (one, cut) = (
        searcher(one_dir.path().to_str().unwrap()).await,
        searcher(cut_dir.path().to_str().unwrap()).await,
    );
    assert_eq!(cut.snapshot().live_documents().len(), 60);
    let expected = answers(&one);
    assert!(
        cut.snapshot()
            .live_documents()
            .all(|(_, _, segment)| !cut_segments.iter().any(|old| old == segment)),
        "every live copy is the delta's"
    );
    assert_eq!(
        answers(&cut),
        expected,
        "a delta in {} segments answers as one",
        cut_d.segments - segments
    );

    // A full version with every vector reused: the stored documents flow into segments as they
    // are found, cut like embedded ones.
    let full = rerun(cut_dir.path(), 20, PublishMode::Full).await.unwrap();
    assert!(full.delta.is_none());
    assert_eq!(
        (
            full.reuse.documents,
            full.documents_indexed,
            full.documents_failed,
            full.chunks
        ),
        (60, 60, 1, one_delta.chunks),
        "{full:?}"
    );
    let embedded = full.stages.iter().find(|s| s.stage == "embed").unwrap().items;
    assert!(
        embedded < 100 && embedded * 20 < full.tokens,
        "nothing embedded but the duplicate: {full:?}"
    );
    let cut = searcher(cut_dir.path().to_str().unwrap()).await;
    assert!(
        cut.snapshot().segments.len() >= 3,
        "{} segments",
        cut.snapshot().segments.len()
    );
    assert_eq!(
        answers(&cut),
        expected,
        "a reused full version answers as the delta did"
    );
}

/// A segment that fails while the run embeds on (here its recall check, against a minimum
/// no index meets) fails the run at once, with that error, and publishes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_failing_mid_run_fails_the_run() {
    // 300 files of one passage each: they reach the embed stage in many small groups.
    let src = tempfile::tempdir().unwrap();
    for (i, line) in common::msmarco_slice(300).lines().enumerate() {
        std::fs::write(src.path().join(format!("passage-{i:03}.jsonl")), format!("{line}\n")).unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let mut options = RunOptions::new(
        src.path().to_str().unwrap(),
        out.path().to_str().unwrap(),
        common::model_dir(),
    );
    options.progress = ProgressMode::Quiet;
    // Segments of four chunks: the first is refused with most of the corpus still to embed
    // and send.
    (options.embed_group, options.segment_chunks, options.min_recall) = (Some(1), 4, Some(1.5));
    let run = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run_with_embedder(options, common::embedder()),
    );
    let error = run
        .await
        .expect("the run ends instead of waiting on its stages")
        .unwrap_err();
    assert!(error.to_string().contains("recall"), "{error}");
    assert!(!out.path().join("LATEST").exists());
}

/// The rows a filter allows, worked out row by row: every row whose document matches and that
/// no tombstone hides.
fn allowed_by_brute_force(snapshot: &LoadedSnapshot, filters: &Filters) -> Vec<u64> {
    (0..snapshot.row_count())
        .filter(|&row| !snapshot.tombstoned.contains(row) && filters.matches(snapshot.document_of(row)))
        .map(|row| row as u64)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_found_through_the_field_index_are_the_rows_that_match() {
    // 200 documents in 40 tags (each a fortieth of them: the field index's path; those of t3,
    // t13, ... of several chunks) and segments of uploads, several chunks each, one upload replacing another and one batch
    // document deleted: rows of one document spread over segments, some hidden.
    let src = tempfile::tempdir().unwrap();
    let lines: String = common::msmarco_slice(200)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["metadata"] =
                serde_json::json!({ "tags": [format!("t{}", i % 40), format!("u{}", i % 3)], "year": 2020 + (i % 3) });
            if i % 10 == 3 {
                value["text"] = serde_json::Value::String(value["text"].as_str().unwrap().repeat(8));
                // several chunks
            }
            format!("{value}\n")
        })
        .collect();
    std::fs::write(src.path().join("corpus.jsonl"), lines).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    index(src.path(), out_dir.path(), IndexKind::Flat).await;
    let out = out_dir.path().to_str().unwrap();
    let long = |topic: &str| {
        (0..40)
            .map(|i| format!("Sentence {i} about {topic} that runs on for a while to fill the window. "))
            .collect::<String>()
    };
    publish_upload(out, "a.md", &long("apples"), Vec::new()).await;
    let first = LoadedSnapshot::load(out, &LoadOptions::default()).await.unwrap();
    let deleted = first.documents().nth(7).unwrap().doc_id.clone();
    let replaced = first.documents().last().unwrap().doc_id.clone();
    publish_upload(out, "b.md", &long("bananas"), vec![deleted.clone(), replaced]).await;
    publish_upload(out, "a.md", &long("apricots"), Vec::new()).await;
    let snapshot = LoadedSnapshot::load(out, &LoadOptions::default()).await.unwrap();
    assert!(
        snapshot.segments.len() >= 3 && !snapshot.tombstoned.is_empty(),
        "{} segments",
        snapshot.segments.len()
    );
    let uploads: Vec<(String, u32)> = snapshot
        .documents()
        .filter(|d| d.source == "upload")
        .map(|d| (d.file_name.clone(), d.chunk_count))
        .collect();
    assert!(
        uploads.iter().any(|(_, chunks)| *chunks > 1),
        "an upload of several rows: {uploads:?}"
    );
    assert!(snapshot
        .documents()
        .filter(|d| d.tags.contains(&"t3".to_string()))
        .all(|d| d.chunk_count > 1));

    let ids: Vec<String> = snapshot.documents().map(|d| d.doc_id.clone()).collect();
    let mut specs: Vec<Vec<String>> = vec![
        vec![],
        vec!["tags=t3".into()],
        vec!["tags=t3,t17,t3".into()],
        vec!["tags=t5".into(), "year=2022".into()],
        vec!["tags=t1,u2".into()],
        vec!["tags=nope".into()],
        vec!["source=upload".into()],
        vec!["source=upload".into(), "file_name=a.md".into()],
        vec!["file_name=b.md,corpus.jsonl".into(), "tags=t9".into()],
        vec![format!("doc_id={deleted}")],
        vec![
            format!("doc_id={},{},{}", ids[0], ids[ids.len() - 1], ids[0]),
            "source=upload".into(),
        ],
        vec![format!("doc_id={}", ids[3]), "tags=t3".into(), "year>=2020".into()],
    ];
    specs.push(vec![format!("doc_id={}", ids[ids.len() - 2])]);
    // Filters that leave out few documents of a segment (or none): its rows less theirs.
    let all_but_three: Vec<&str> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| ![5, 6, 150].contains(i))
        .map(|(_, id)| id.as_str())
        .collect();
    specs.push(vec![format!("doc_id={}", all_but_three.join(","))]);
    specs.push(vec![
        format!("doc_id={}", all_but_three.join(",")),
        "file_name=corpus.jsonl,a.md".into(),
        "ingested_after=2000-01-01T00:00:00Z".into(),
    ]);
    specs.push(vec!["file_name=corpus.jsonl".into()]);
    specs.push(vec![
        "source=file".into(),
        "ingested_before=2999-01-01T00:00:00Z".into(),
    ]);
    specs.push(vec!["ingested_after=2000-01-01T00:00:00Z".into()]);
    specs.push(vec!["ingested_after=2999-01-01T00:00:00Z".into()]);
    // A long id list (a client's access list): the documents' ids among 20,000 that match none.
    let long_list: Vec<String> = ids
        .iter()
        .step_by(3)
        .cloned()
        .chain((0..20_000).map(|i| format!("absent{i}")))
        .collect();
    specs.push(vec![format!("doc_id={}", long_list.join(","))]);
    for spec in &specs {
        let mut filters = Filters::default();
        spec.iter().for_each(|s| filters.add(s).unwrap());
        let want = allowed_by_brute_force(&snapshot, &filters);
        for round in ["first use", "orders built"] {
            let got = filters
                .allowed_rows(&snapshot)
                .map(|rows| rows.rows())
                .unwrap_or_else(|| (0..snapshot.row_count() as u64).collect());
            assert_eq!(got, want, "{spec:?} ({round})");
        }
    }

    // Facets count the documents a search could return, against a count made row by row:
    // live rows the filter allows (and, in keyword mode, that hold a query word as the
    // highlighter reads them), each document once.
    let searcher = Searcher::new(Arc::new(snapshot), common::embedder()).unwrap();
    let snapshot = searcher.snapshot().clone();
    let names: Vec<String> = ["tags", "metadata.year", "source", "file_name"]
        .map(String::from)
        .to_vec();
    let query = "apricots weather temperature";
    for spec in &specs[..9] {
        let mut filters = Filters::default();
        spec.iter().for_each(|s| filters.add(s).unwrap());
        for mode in Mode::ALL {
            let mut counted: std::collections::BTreeMap<String, &quarry_indexer::snapshot::DocumentRecord> =
                Default::default();
            for row in 0..snapshot.row_count() {
                let document = snapshot.document_of(row);
                // Each segment's analyzer reads the query its own way (its rows' languages).
                let mut terms =
                    quarry_indexer::index::QueryTerms::of(snapshot.segment_of(row).data.keyword.analyzer(), query);
                let holds_word = mode != Mode::Keyword || !terms.spans_in(&snapshot.chunk(row).text).is_empty();
                if !snapshot.tombstoned.contains(row) && filters.matches(document) && holds_word {
                    counted.insert(document.doc_id.clone(), document);
                }
            }
            let request = SearchRequest {
                query: query.into(),
                mode,
                top_k: 3,
                filters: filters.clone(),
                facets: names.clone(),
                facet_size: 1000,
                ..Default::default()
            };
            let facets = searcher
                .search(&request)
                .unwrap()
                .result
                .facets
                .expect("facets asked for");
            for name in &names {
                let mut want: std::collections::BTreeMap<String, u64> = Default::default();
                let mut missing = 0;
                for document in counted.values() {
                    let values: Vec<serde_json::Value> = match name.as_str() {
                        "tags" => document.tags.iter().map(|t| t.as_str().into()).collect(),
                        "source" => vec![document.source.as_str().into()],
                        "file_name" => vec![document.file_name.as_str().into()],
                        _ => serde_json::from_str::<serde_json::Value>(&document.metadata)
                            .unwrap()
                            .get("year")
                            .cloned()
                            .into_iter()
                            .collect(),
                    };
                    missing += values.is_empty() as u64;
                    values.iter().for_each(|v| *want.entry(v.to_string()).or_default() += 1);
                }
                let facet = &facets[name];
                let got: std::collections::BTreeMap<String, u64> =
                    facet.values.iter().map(|v| (v.value.to_string(), v.count)).collect();
                assert_eq!(
                    (&got, facet.missing, facet.documents, facet.more_values),
                    (&want, missing, counted.len() as u64, 0),
                    "{spec:?} {mode:?} {name}"
                );
                assert!(
                    facet.values.windows(2).all(|w| w[0].count >= w[1].count),
                    "{spec:?} {mode:?} {name}: most first"
                );
            }
            if spec.is_empty() && mode == Mode::Keyword {
                assert!(
                    counted.len() > 2 && counted.len() < snapshot.live_documents().len(),
                    "the query matches some documents: {}",
                    counted.len()
                );
            }
        }
    }
    // facet_size keeps the most frequent values and says how many were left out.
    let request = SearchRequest {
        query: query.into(),
        facets: vec!["tags".into()],
        facet_size: 5,
        ..Default::default()
    };
    let tags = &searcher.search(&request).unwrap().result.facets.unwrap()["tags"];
    assert_eq!((tags.values.len(), tags.more_values), (5, 43 - 5), "{tags:?}");
    let listed: Vec<&str> = tags.values.iter().map(|v| v.value.as_str().unwrap()).collect();
    assert!(
        listed[..3].iter().all(|tag| tag.starts_with('u')),
        "the three u-tags hold the most documents: {tags:?}"
    );
    assert_eq!(
        listed[3..],
        ["t0", "t1"],
        "then the t-tags of five documents, by name: {tags:?}"
    );
}
