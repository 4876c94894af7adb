//! A nightly run sharded over an array job, against a real S3 API (moto_server on loopback):
//! three `quarry index --shards 3` processes at once, each told its shard by
//! JOB_COMPLETION_INDEX as a Kubernetes Indexed Job tells it, then `quarry publish`. The
//! merged version must answer as a one-process run of the same source does; a second night
//! with one file changed writes only that file's documents; a third, during which a server's
//! upload lands, is put on top of the upload's version; a shard killed mid-run keeps the run
//! from publishing until it is run again, and nothing is lost or duplicated.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use object_store::{ObjectStoreExt, PutPayload};
use quarry_indexer::pipeline::shard_of;
use quarry_indexer::store::{open_location, StoreOptions};
use quarry_server::{LoadOptions, LoadedSnapshot, Mode, SearchRequest, Searcher};

const SHARDS: usize = 3;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `quarry ARGS` against the loopback S3, with `env` set.
fn quarry(s3: &common::S3Server, args: &[&str], env: &[(&str, String)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quarry"));
    command
        .args(args)
        .current_dir(root())
        .env("QUARRY_S3_ENDPOINT", &s3.endpoint)
        .env("QUARRY_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (*k, v.clone())));
    command
}

fn succeeded(output: Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output.stdout)))
}

/// `quarry index SOURCE --out OUT --shards 3` as shard `shard` of run `run_id` (told by
/// JOB_COMPLETION_INDEX and QUARRY_RUN_ID, as a Kubernetes Indexed Job's pod is), plus `more`.
fn shard_command(s3: &common::S3Server, paths: (&str, &str), run_id: &str, shard: usize, more: &[&str]) -> Command {
    let (source, out) = paths;
    let mut args = vec!["index", source, "--out", out, "--shards", "3", "--progress", "quiet"];
    args.extend_from_slice(more);
    quarry(
        s3,
        &args,
        &[
            ("JOB_COMPLETION_INDEX", shard.to_string()),
            ("QUARRY_RUN_ID", run_id.to_string()),
        ],
    )
}

/// Runs shards `shards` of run `run_id` at once, each as its own process; their reports.
fn run_shards(
    s3: &common::S3Server,
    source: &str,
    out: &str,
    run_id: &str,
    shards: &[usize],
) -> Vec<serde_json::Value> {
    let children: Vec<Child> = shards
        .iter()
        .map(|&shard| {
            shard_command(s3, (source, out), run_id, shard, &["--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| succeeded(child.wait_with_output().unwrap()))
        .collect()
}

fn index_one_process(s3: &common::S3Server, source: &str, out: &str) -> serde_json::Value {
    succeeded(
        quarry(
            s3,
            &["index", source, "--out", out, "--json", "--progress", "quiet"],
            &[],
        )
        .output()
        .unwrap(),
    )
}

fn publish(s3: &common::S3Server, out: &str, run_id: &str) -> Output {
    quarry(
        s3,
        &["publish", out, "--run-id", run_id, "--shards", "3", "--json"],
        &[],
    )
    .output()
    .unwrap()
}

async fn put(s3: &common::S3Server, uri: &str, files: &[(String, String)]) {
    let store = StoreOptions {
        s3_endpoint: Some(s3.endpoint.clone()),
    };
    let location = open_location(uri, &store, false).unwrap();
    for (name, body) in files {
        location
            .store
            .put(&location.child(name), PutPayload::from(body.clone().into_bytes()))
            .await
            .unwrap();
    }
}

/// One markdown file per msmarco passage.
fn passage_files(n: usize) -> Vec<(String, String)> {
    common::msmarco_slice(n)
        .lines()
        .map(|line| {
            let passage: serde_json::Value = serde_json::from_str(line).unwrap();
            let id = passage["_id"].as_str().unwrap();
            (
                format!("p/{id}.md"),
                format!("# Passage {id}\n\n{}", passage["text"].as_str().unwrap()),
            )
        })
        .collect()
}

async fn searcher(s3: &common::S3Server, uri: &str) -> Searcher {
    let options = LoadOptions {
        store: StoreOptions {
            s3_endpoint: Some(s3.endpoint.clone()),
        },
        cache_dir: tempfile::tempdir().unwrap().keep(),
        ..Default::default()
    };
    let loaded = LoadedSnapshot::load(uri, &options).await.unwrap();
    Searcher::new(Arc::new(loaded), common::embedder()).unwrap()
}

/// The live documents' ids and the live chunks' (id, text).
fn contents(searcher: &Searcher) -> (BTreeSet<String>, BTreeSet<(String, String)>) {
    let snapshot = searcher.snapshot();
    let documents = snapshot.live_documents().map(|(d, _, _)| d.doc_id.clone()).collect();
    let chunks = (0..snapshot.row_count())
        .filter(|&row| !snapshot.tombstoned.contains(row))
        .map(|row| {
            let chunk = snapshot.chunk(row);
            (chunk.chunk_id.clone(), chunk.text.clone())
        })
        .collect();
    (documents, chunks)
}

const QUERIES: [&str; 6] = [
    "what is the weather like",
    "how long to cook rice",
    "definition of a contract",
    "symptoms of the flu",
    "population of the city",
    "cost of a new roof",
];

/// The top 10 of each query in vector and keyword mode: (chunk id, score).
fn answers(searcher: &Searcher) -> Vec<Vec<(String, f32)>> {
    let mut all = Vec::new();
    for query in QUERIES {
        for mode in [Mode::Vector, Mode::Keyword] {
            let request = SearchRequest {
                query: query.into(),
                mode,
                top_k: 10,
                ..Default::default()
            };
            let result = searcher.search(&request).unwrap().result;
            all.push(result.chunks.into_iter().map(|c| (c.chunk_id, c.score)).collect());
        }
    }
    all
}

/// The same chunks in the same order with the same scores (within float noise: the shards
/// embed in other batches); chunks whose scores tie may swap.
fn assert_same_answers(sharded: &[Vec<(String, f32)>], single: &[Vec<(String, f32)>]) {
    for (query, (got, want)) in sharded.iter().zip(single).enumerate() {
        assert_eq!(got.len(), want.len(), "query {query}: {got:?} vs {want:?}");
        for ((got_id, got_score), (want_id, want_score)) in got.iter().zip(want) {
            assert!(
                (got_score - want_score).abs() < 1e-4,
                "query {query}: {got:?} vs {want:?}"
            );
            if got_id != want_id {
                let tied = want
                    .iter()
                    .filter(|(_, s)| (s - want_score).abs() < 1e-4)
                    .any(|(id, _)| id == got_id);
                assert!(tied, "query {query}: {got:?} vs {want:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_shards_publish_what_one_process_would_and_a_second_night_writes_only_what_changed() {
    let s3 = common::S3Server::start("quarry-shards");
    let bucket = &s3.bucket;
    let (source, sharded, single) = (
        format!("s3://{bucket}/src"),
        format!("s3://{bucket}/sharded"),
        format!("s3://{bucket}/single"),
    );
    let mut files = passage_files(100);
    put(&s3, &source, &files).await;

    // Night 1: three shards at once, each its own part of the files.
    let reports = run_shards(&s3, &source, &sharded, "night-1", &[0, 1, 2]);
    let listed: Vec<u64> = reports.iter().map(|r| r["files_listed"].as_u64().unwrap()).collect();
    assert_eq!(listed.iter().sum::<u64>(), 100, "{listed:?}");
    assert!(listed.iter().all(|&n| n > 10), "a hash spreads the files: {listed:?}");
    for (shard, report) in reports.iter().enumerate() {
        assert_eq!(report["version"], serde_json::Value::Null, "a shard publishes nothing");
        assert_eq!(report["shard"]["shard"], shard);
    }
    // No shard moved LATEST: until the publish there is no version.
    let versions = quarry(&s3, &["versions", &sharded], &[]).output().unwrap();
    assert!(!versions.status.success(), "{}", text(&versions.stdout));

    let published = succeeded(publish(&s3, &sharded, "night-1"));
    assert_eq!(published["documents"], 100, "{published:#}");
    assert_eq!(published["segments_added"], 3);
    // A second publish of the same run publishes nothing more.
    let again = succeeded(publish(&s3, &sharded, "night-1"));
    assert_eq!(
        (&again["already_published"], &again["version"]),
        (&serde_json::json!(true), &published["version"])
    );

    index_one_process(&s3, &source, &single);
    let (merged, one) = (searcher(&s3, &sharded).await, searcher(&s3, &single).await);
    assert_eq!(merged.snapshot().manifest.run_id.as_deref(), Some("night-1"));
    assert_eq!(contents(&merged), contents(&one));
    assert_same_answers(&answers(&merged), &answers(&one));

    // Night 2: one file in a hundred changed; its shard alone embeds, and only its document.
    let changed = 37;
    files[changed]
        .1
        .push_str("\n\nRevised: glaciers carve fjords over thousands of years.");
    put(&s3, &source, &files[changed..=changed]).await;
    let owner = shard_of(&format!("{source}/{}", files[changed].0), SHARDS);
    let reports = run_shards(&s3, &source, &sharded, "night-2", &[0, 1, 2]);
    for (shard, report) in reports.iter().enumerate() {
        let delta = &report["delta"];
        let written = u64::from(shard == owner);
        assert_eq!(delta["base_version"], published["version"], "{report:#}");
        assert_eq!(delta["documents_written"], written, "shard {shard}: {delta:#}");
        assert_eq!(
            delta["files_unchanged"].as_u64().unwrap() + written,
            report["files_listed"].as_u64().unwrap(),
            "shard {shard}: only the changed file is fetched: {delta:#}"
        );
    }
    let second = succeeded(publish(&s3, &sharded, "night-2"));
    assert_eq!(
        (&second["documents"], &second["documents_written"]),
        (&100.into(), &1.into()),
        "{second:#}"
    );
    index_one_process(&s3, &source, &single);
    let (merged, one) = (searcher(&s3, &sharded).await, searcher(&s3, &single).await);
    assert_eq!(
        merged.snapshot().manifest.parent,
        published["version"].as_str().map(String::from)
    );
    let (documents, chunks) = contents(&merged);
    assert!(chunks.iter().any(|(_, text)| text.contains("glaciers carve fjords")));
    assert_eq!((documents, chunks), contents(&one));
    assert_same_answers(&answers(&merged), &answers(&one));

    // Night 3: another file changed, and a server's upload lands while the shards run; the
    // publish puts the run's change on top of the upload's version, and both stay.
    let changed = 5;
    files[changed]
        .1
        .push_str("\n\nRevised: the tide tables were corrected.");
    put(&s3, &source, &files[changed..=changed]).await;
    let reports = run_shards(&s3, &source, &sharded, "night-3", &[0, 1, 2]);
    let written: u64 = reports
        .iter()
        .map(|r| r["delta"]["documents_written"].as_u64().unwrap())
        .sum();
    assert_eq!(written, 1);
    let store = StoreOptions {
        s3_endpoint: Some(s3.endpoint.clone()),
    };
    let upload = common::publish_online(
        &sharded,
        &store,
        "upload://docs/f1/note.md",
        "note.md",
        "Volcanic ash grounded flights across the region.",
        Vec::new(),
    )
    .await;
    let third = succeeded(publish(&s3, &sharded, "night-3"));
    assert_eq!(
        third["rebased_onto"].as_str(),
        Some(upload.version.as_str()),
        "{third:#}"
    );
    let merged = searcher(&s3, &sharded).await;
    let manifest = &merged.snapshot().manifest;
    assert_eq!(manifest.parent.as_deref(), Some(upload.version.as_str()));
    assert_eq!(manifest.run_id.as_deref(), Some("night-3"));
    let (documents, chunks) = contents(&merged);
    assert_eq!(documents.len(), 101, "the upload and every source document");
    assert!(chunks
        .iter()
        .any(|(_, text)| text.contains("tide tables were corrected")));
    assert!(chunks.iter().any(|(_, text)| text.contains("Volcanic ash")));
    // The changed file's old copy is hidden: its opening words are in one live chunk only.
    let opening: String = files[changed].1.lines().nth(2).unwrap().chars().take(40).collect();
    assert_eq!(
        chunks.iter().filter(|(_, text)| text.contains(&opening)).count(),
        1,
        "{opening}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_shard_keeps_the_run_unpublished_until_it_is_run_again() {
    let s3 = common::S3Server::start("quarry-shard-kill");
    let bucket = &s3.bucket;
    let (source, out) = (format!("s3://{bucket}/src"), format!("s3://{bucket}/snap"));
    let mut files = passage_files(30);
    // A large file on shard 1, so that its run is still embedding when it is killed.
    let big = (0..)
        .map(|n| format!("big-{n}.jsonl"))
        .find(|name| shard_of(&format!("{source}/{name}"), SHARDS) == 1)
        .unwrap();
    files.push((big, common::msmarco_slice(1500)));
    put(&s3, &source, &files).await;

    let paths = (source.as_str(), out.as_str());
    let mut killed = shard_command(&s3, paths, "night-1", 1, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        killed.try_wait().unwrap().is_none(),
        "shard 1 ended before it could be killed"
    );
    killed.kill().unwrap();
    killed.wait().unwrap();

    // The other shards finish and would publish the run, but shard 1 has no record.
    for shard in [0, 2] {
        let output = shard_command(&s3, paths, "night-1", shard, &["--publish-when-complete"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains("waiting for shard 1"),
            "{}",
            text(&output.stderr)
        );
    }
    let refused = publish(&s3, &out, "night-1");
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("shard 1 of 3 has not finished")
            && text(&refused.stderr).contains("nothing was published"),
        "{}",
        text(&refused.stderr)
    );
    assert!(!quarry(&s3, &["versions", &out], &[]).output().unwrap().status.success());

    // The scheduler runs shard 1 again; finishing last, it publishes the run.
    let output = shard_command(&s3, paths, "night-1", 1, &["--publish-when-complete", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let merged = searcher(&s3, &out).await;
    let (documents, chunks) = contents(&merged);
    assert_eq!(documents.len(), 30 + 1500, "nothing lost");
    assert_eq!(merged.snapshot().live_rows(), chunks.len(), "nothing duplicated");
    assert_eq!(merged.snapshot().manifest.segments.len(), 3);
}

#[test]
fn gc_keeps_the_segments_of_a_run_that_may_still_publish() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap");
    let out = out.to_str().unwrap();
    let local = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_quarry"))
            .args(args)
            .current_dir(root())
            .env("QUARRY_LOG", "warn")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", text(&output.stderr));
        text(&output.stdout)
    };
    let gc =
        || -> serde_json::Value { serde_json::from_str(&local(&["gc", out, "--min-age", "0", "--json"])).unwrap() };
    local(&["index", "datasets/sample", "--out", out, "--progress", "quiet"]);
    for shard in ["0", "1", "2"] {
        local(&[
            "index",
            "datasets/sample",
            "--out",
            out,
            "--publish",
            "full",
            "--shards",
            "3",
            "--shard",
            shard,
            "--run-id",
            "night-2",
            "--progress",
            "quiet",
        ]);
    }
    // The run's segments are named by no version yet: gc keeps them, and the run still publishes.
    // (Which shard gets which file hangs on the files' paths: a shard may have none, and no segment.)
    let recorded: usize = (0..3)
        .map(|shard| {
            let record = dir.path().join(format!("snap/runs/night-2/shard-{shard:05}.json"));
            let record: serde_json::Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
            record["manifest"]["segments"].as_array().unwrap().len()
        })
        .sum();
    assert!(recorded >= 1);
    let report = gc();
    assert_eq!(report["segments_of_pending_runs"], recorded, "{report:#}");
    assert_eq!(report["segments_removed"], serde_json::json!([]), "{report:#}");
    local(&["publish", out, "--run-id", "night-2", "--shards", "3"]);
    let inspect = local(&["inspect", out]);
    assert!(inspect.contains("checksums  OK"), "{inspect}");
    // Once published, the run's records go; the first version's segment too (keep 1).
    let dir_runs = dir.path().join("snap/runs/night-2");
    let report: serde_json::Value =
        serde_json::from_str(&local(&["gc", out, "--min-age", "0", "--keep", "1", "--json"])).unwrap();
    assert_eq!(report["runs_removed"], serde_json::json!(["night-2"]), "{report:#}");
    assert_eq!(report["segments_removed"].as_array().unwrap().len(), 1, "{report:#}");
    assert!(!dir_runs.join("shard-00000.json").exists());
    assert!(local(&["inspect", out]).contains("checksums  OK"));
}

#[test]
fn the_published_run_lists_every_shards_failures_and_files_read_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    let files: [(&str, Vec<u8>); 4] = [
        ("whole.txt", b"Pilots board inbound ships at the outer buoy.".to_vec()),
        (
            "notes.md",
            b"# Tides\n\nThe harbour dries at low water springs.".to_vec(),
        ),
        (
            "partial.pdf",
            common::pdf_files::pdf_with_a_page_it_cannot_read("Harbour dues"),
        ),
        ("broken.json", b"{\"text\": \"cut off".to_vec()),
    ];
    for (name, bytes) in &files {
        std::fs::write(source.join(name), bytes).unwrap();
    }
    let (source, out) = (source.to_str().unwrap(), dir.path().join("snap"));
    let out = out.to_str().unwrap();
    let output = |args: &[&str], env: &[(&str, String)]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_quarry"))
            .args(args)
            .current_dir(root())
            .env("QUARRY_LOG", "warn")
            .envs(env.iter().map(|(k, v)| (*k, v.clone())))
            .output()
            .unwrap()
    };
    let run = |args: &[&str], env: &[(&str, String)]| succeeded(output(args, env));
    let owner = |name: &str| shard_of(&format!("file://{source}/{name}"), SHARDS);
    for shard in 0..SHARDS {
        let shard_run = output(
            &[
                "index",
                source,
                "--out",
                out,
                "--shards",
                "3",
                "--progress",
                "json",
                "--json",
            ],
            &[
                ("JOB_COMPLETION_INDEX", shard.to_string()),
                ("QUARRY_RUN_ID", "night-1".to_string()),
            ],
        );
        let stderr = text(&shard_run.stderr);
        let report = succeeded(shard_run);
        let mine = usize::from(owner("partial.pdf") == shard);
        assert_eq!(report["documents_warned"], mine, "shard {shard}: {report:#}");
        // The scheduler's progress lines count them too.
        let last = stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .rfind(|v| v["event"] == "progress")
            .unwrap_or_else(|| panic!("no progress line in {stderr}"));
        assert_eq!(last["warned"], mine, "shard {shard}: {last}");
    }
    let published = run(&["publish", out, "--run-id", "night-1", "--shards", "3", "--json"], &[]);
    assert_eq!(
        (
            &published["documents"],
            &published["documents_failed"],
            &published["documents_warned"]
        ),
        (&3.into(), &1.into(), &1.into()),
        "{published:#}"
    );
    let summaries = published["shard_summaries"].as_array().unwrap();
    let first_warning = summaries[owner("partial.pdf")]["first_warning"].as_str().unwrap();
    assert!(
        first_warning.contains("partial.pdf — page 2 of 2: text could not be extracted"),
        "{first_warning}"
    );
    assert!(summaries[owner("broken.json")]["first_failure"]
        .as_str()
        .unwrap()
        .contains("broken.json — "));

    // The version's stored report lists them as a one-process run's would.
    let version = published["version"].as_str().unwrap();
    let stored: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("snap/reports").join(format!("{version}.json"))).unwrap(),
    )
    .unwrap();
    let names = |key: &str| -> Vec<String> {
        stored[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("failures"), ["broken.json"], "{stored:#}");
    assert_eq!(names("warnings"), ["partial.pdf"], "{stored:#}");
    assert!(stored["warnings"][0]["warning"]
        .as_str()
        .unwrap()
        .ends_with("); it was left out"));
    assert!(stored.get("notes").is_none(), "{stored:#}");

    // `quarry versions` counts them.
    let listing = run(&["versions", out, "--json"], &[]);
    let counts = &listing["versions"][0]["run"];
    assert_eq!(
        (&counts["documents_failed"], &counts["documents_warned"]),
        (&1.into(), &1.into()),
        "{listing:#}"
    );
}
