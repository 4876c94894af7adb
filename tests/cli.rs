//! The `quarry` binary as a user runs it: index + inspect on the sample corpus, tamper
//! detection, an incremental rerun, compact and gc, `embed` over stdin, clear errors, and a run killed mid-way.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn quarry(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a benchmark command on the CPU with `--json PATH`: its output (checked to succeed)
/// and the report it wrote.
fn quarry_on_cpu_json(args: &[&str], json: &Path) -> (Output, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--device", "cpu", "--json", json.to_str().unwrap()]);
    let output = quarry(&all);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    (output, report)
}

/// `quarry index SOURCE --out OUT` (checked to succeed): its run report.
pub(crate) fn index_json(source: &str, out: &Path) -> serde_json::Value {
    let output = quarry(&[
        "index",
        source,
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn index_sample(out: &Path) -> serde_json::Value {
    index_json("datasets/sample", out)
}

#[test]
fn index_then_inspect_the_sample_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample");
    let report = index_sample(&out);
    assert_eq!(report["files_listed"], 6);
    assert_eq!(report["documents_indexed"], 8, "{report:#}");
    assert_eq!(report["documents_failed"], 0);

    let output = quarry(&["inspect", out.to_str().unwrap()]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("8 documents"), "{stdout}");
    assert!(
        stdout.contains("sha256 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        "{stdout}"
    );
    assert!(stdout.contains("checksums  OK"), "{stdout}");

    // Piped into a reader that goes away (`quarry inspect DIR | head -1`): no panic.
    let mut child = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(["inspect", out.to_str().unwrap()])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(
        !text(&output.stderr).contains("panicked") && output.status.code() != Some(101),
        "{:?}: {}",
        output.status,
        text(&output.stderr)
    );

    // Flip one byte of the keyword index: inspect names the file and fails.
    let keyword = std::fs::read_dir(out.join("segments"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("keyword");
    let victim = std::fs::read_dir(&keyword)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[0] ^= 0xFF;
    std::fs::write(&victim, bytes).unwrap();
    let output = quarry(&["inspect", out.to_str().unwrap()]);
    let stdout = text(&output.stdout);
    assert!(!output.status.success());
    assert!(stdout.contains("checksums  FAILED: 1 of"), "{stdout}");
    assert!(
        stdout.contains(victim.file_name().unwrap().to_str().unwrap()),
        "{stdout}"
    );
}

#[test]
fn a_nightly_rerun_builds_on_the_last_version_rolls_back_and_gc_keeps_latest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample");
    let first = index_sample(&out);
    assert!(first["reuse"]["from_version"].is_null(), "{first:#}");
    // Nothing changed: a delta that fetches nothing and keeps the first segment.
    let second = index_sample(&out);
    assert_eq!(second["reuse"]["from_version"], first["version"]);
    assert_eq!(second["delta"]["files_unchanged"], first["files_listed"], "{second:#}");
    assert_eq!(second["delta"]["documents_written"], 0, "{second:#}");
    assert_eq!(second["documents_indexed"], 8, "{second:#}");
    let output = quarry(&[
        "index",
        "datasets/sample",
        "--out",
        out.to_str().unwrap(),
        "--plan",
        "--json",
    ]);
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (&plan["publish"], &plan["files_unchanged"], &plan["files_new"]["count"]),
        (
            &serde_json::json!("delta"),
            &first["files_listed"],
            &serde_json::json!(0)
        ),
        "{plan:#}"
    );
    let output = quarry(&["index", "datasets/sample", "--out", out.to_str().unwrap(), "--plan"]);
    assert!(
        text(&output.stdout).contains("would publish a delta version on"),
        "{}",
        text(&output.stdout)
    );
    let output = quarry(&[
        "index",
        "datasets/sample",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--publish",
        "full",
    ]);
    let full: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(full["delta"].is_null(), "{full:#}");
    assert_eq!(full["reuse"]["documents"], 8, "{full:#}");
    let output = quarry(&[
        "index",
        "datasets/sample",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--reuse",
        "off",
    ]);
    let third: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(third["reuse"]["from_version"].is_null(), "{third:#}");

    // Back to the full version, and forward again.
    let output = quarry(&["versions", out.to_str().unwrap(), "--json"]);
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let states: Vec<&str> = listing["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["earlier", "earlier", "earlier", "latest"], "{listing:#}");
    let parents: Vec<&serde_json::Value> = listing["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["parent"])
        .collect();
    assert_eq!(
        parents,
        [
            &serde_json::Value::Null,
            &first["version"],
            &serde_json::Value::Null,
            &serde_json::Value::Null
        ],
        "only the delta builds on a version: {listing:#}"
    );
    let output = quarry(&["rollback", out.to_str().unwrap(), "--dry-run"]);
    assert!(
        text(&output.stdout).contains(&format!(
            "would move from {} to {}",
            third["version"].as_str().unwrap(),
            full["version"].as_str().unwrap()
        )),
        "{}",
        text(&output.stdout)
    );
    let output = quarry(&["rollback", out.to_str().unwrap(), "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (&report["to"], &report["abandoned"]),
        (&full["version"], &serde_json::json!([third["version"]])),
        "{report:#}"
    );
    let output = quarry(&["versions", out.to_str().unwrap()]);
    assert!(
        text(&output.stdout).lines().last().unwrap().contains("rolled back"),
        "{}",
        text(&output.stdout)
    );
    let output = quarry(&[
        "rollback",
        out.to_str().unwrap(),
        "--to",
        third["version"].as_str().unwrap(),
        "--no-verify",
    ]);
    assert!(
        output.status.success() && text(&output.stdout).contains("not verified"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["rollback", out.to_str().unwrap(), "--to", "no-such-version"]);
    assert!(
        !output.status.success() && text(&output.stderr).contains("has no version `no-such-version`"),
        "{}",
        text(&output.stderr)
    );

    let output = quarry(&["gc", out.to_str().unwrap(), "--keep", "1", "--min-age", "0", "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["versions_removed"].as_array().unwrap().len(), 3, "{report:#}");
    assert_eq!(report["versions_kept"], serde_json::json!([third["version"]]));
    assert_eq!(std::fs::read_dir(out.join("segments")).unwrap().count(), 1);
    let output = quarry(&["inspect", out.to_str().unwrap()]);
    assert!(
        text(&output.stdout).contains("checksums  OK")
            && text(&output.stdout).contains("parent     none: a full version"),
        "{}",
        text(&output.stdout)
    );

    // One segment and no tombstones: compaction has nothing to do and publishes nothing.
    let output = quarry(&["compact", out.to_str().unwrap(), "--all", "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["version"].is_null(), "{report:#}");

    let output = quarry(&["gc", out.to_str().unwrap(), "--min-age", "1w"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("not an age such as"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn embed_reads_jsonl_and_keeps_the_order() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(["embed", "--group", "2"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let texts = [
        "GPUs multiply matrices.",
        "a much longer sentence about keyword search and dense retrieval working together",
        "GPUs multiply matrices.",
    ];
    let mut stdin = child.stdin.take().unwrap();
    for t in texts {
        writeln!(stdin, "{}", serde_json::json!({ "text": t })).unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let rows: Vec<Vec<f64>> = text(&output.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.len() == 384));
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    assert!(dot(&rows[0], &rows[2]) > 0.99999, "same text, same vector");
    assert!(dot(&rows[0], &rows[1]) < 0.9, "different texts in order");

    let mut child = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .arg("embed")
        .current_dir(root())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"text\": \"ok\"}\n{\"txt\": 1}\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("stdin line 2: expected an object with a string field \"text\""),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn clear_errors_for_bad_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    #[cfg(not(feature = "cuda"))]
    {
        let output = quarry(&["index", "datasets/sample", "--out", out, "--device", "cuda"]);
        assert!(!output.status.success());
        assert!(
            text(&output.stderr).contains("built without CUDA support"),
            "{}",
            text(&output.stderr)
        );
    }
    let output = quarry(&["index", "no/such/folder", "--out", out]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("no/such/folder"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["inspect", out]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("(LATEST is missing)")
            && text(&output.stderr).contains("no published snapshot at"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["index", "datasets/sample", "--out", out, "--model", "/nonexistent"]);
    assert!(
        text(&output.stderr).contains("missing config.json"),
        "{}",
        text(&output.stderr)
    );
    // FAISS crashed on an HNSW graph without links, and failed its first search on zero lists.
    for (kind, option, message) in [
        ("hnsw", "--hnsw-m", "--hnsw-m 0: must be at least 2"),
        ("ivf-flat", "--nlist", "--nlist 0: must be at least 1"),
    ] {
        let output = quarry(&["index", "datasets/sample", "--out", out, "--index", kind, option, "0"]);
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        assert!(text(&output.stderr).contains(message), "{}", text(&output.stderr));
    }
    let output = quarry(&["serve", "--query-pass-queries", "0"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "refused while parsing, before any model or port: {}",
        text(&output.stderr)
    );
    assert!(
        text(&output.stderr).contains("'--query-pass-queries <QUERY_PASS_QUERIES>': must be at least 1"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["serve", "--api-key", "hunter2", "--model", "/nonexistent"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("--api-key: a key of 7 characters is too short (at least 16)"),
        "refused before the model loads: {}",
        text(&output.stderr)
    );
    assert!(!text(&output.stderr).contains("hunter2"), "the key is not echoed");
    assert!(!dir.path().join("LATEST").exists(), "nothing was published");
}

/// Local names as they are, and symlinks out of the source folder skipped with the reason
/// (a file anyone can link into the folder is not copied into the index).
#[test]
fn local_names_index_as_they_are_and_symlinks_out_of_the_folder_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (source, outside) = (dir.path().join("docs"), dir.path().join("outside.txt"));
    std::fs::create_dir(&source).unwrap();
    std::fs::write(&outside, "the neighbour's private notes").unwrap();
    for name in ["café.txt", "100%.txt", "a#b.txt"] {
        std::fs::write(source.join(name), format!("harbour log kept in {name}")).unwrap();
    }
    std::os::unix::fs::symlink(&outside, source.join("h.txt")).unwrap();
    let report = index_json(source.to_str().unwrap(), &dir.path().join("out"));
    assert_eq!(
        (
            report["documents_indexed"].as_u64(),
            report["documents_failed"].as_u64()
        ),
        (Some(3), Some(0)),
        "{report}"
    );
    let skipped = report["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["uri"].as_str().unwrap().ends_with("/h.txt")
            && s["reason"].as_str().unwrap().contains("outside the source folder")),
        "{skipped:?}"
    );
}

/// A step that fails after LATEST moved (here: writing the run report where it cannot be
/// written) does not pass for "nothing published": the run exits 3 and says what it published.
#[test]
fn a_failure_after_publishing_exits_3_naming_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample");
    let report = dir.path().join("no-such-folder").join("report.json");
    let output = quarry(&[
        "index",
        "datasets/sample",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let version = printed["version"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(out.join("LATEST")).unwrap().trim(), version);
    assert!(
        printed["failed_after_publishing"]
            .as_str()
            .unwrap()
            .contains("could not be written to"),
        "{printed}"
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "error: published {version}, but the run report could not be written to"
        )),
        "{stderr}"
    );
}

#[test]
fn a_run_killed_before_publishing_leaves_latest_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap");
    let first = index_sample(&out);
    let latest_before = std::fs::read_to_string(out.join("LATEST")).unwrap();
    assert_eq!(latest_before.trim(), first["version"].as_str().unwrap());

    // 5,000 passages take minutes to embed on a CPU; the kill lands long before publishing.
    let corpus = root().parent().unwrap().join("shared/datasets/msmarco-5k");
    let mut child = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args([
            "index",
            corpus.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--progress",
            "log",
        ])
        .current_dir(root())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut line = String::new();
    while !line.contains(" to fetch (") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0 && Instant::now() < deadline,
            "the run never started"
        );
    }
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(std::fs::read_to_string(out.join("LATEST")).unwrap(), latest_before);
    let output = quarry(&["inspect", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output.stdout));
    assert!(text(&output.stdout).contains(first["version"].as_str().unwrap()));
}

/// A tiny BEIR folder over the sample corpus's topics.
fn tiny_beir(dir: &Path) {
    std::fs::create_dir_all(dir.join("qrels")).unwrap();
    let corpus = [
        (
            "d1",
            "GPUs",
            "Graphics processors run thousands of threads and speed up matrix multiplication.",
        ),
        ("d2", "Cats", "Cats sleep for most of the day and hunt at dawn."),
        (
            "d3",
            "BM25",
            "BM25 ranks documents by term frequency and inverse document frequency.",
        ),
        (
            "d4",
            "Bread",
            "Knead the dough, let it rise, then bake it in a hot oven.",
        ),
    ];
    let lines: String = corpus
        .iter()
        .map(|(id, t, x)| format!("{}\n", serde_json::json!({"_id": id, "title": t, "text": x})))
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), lines).unwrap();
    std::fs::write(dir.join("queries.jsonl"), "{\"_id\": \"q1\", \"text\": \"how do graphics cards accelerate math\"}\n{\"_id\": \"q2\", \"text\": \"how to bake bread\"}\n").unwrap();
    std::fs::write(
        dir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td4\t1\n",
    )
    .unwrap();
}

#[test]
fn a_transcripts_hits_say_where_in_the_recording_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    // A meeting of 60 cues of 20 s each, said without a pause: one paragraph, many chunks. The
    // paragraph as the transcript reads it, and each cue's byte range in it, for the check.
    let (mut vtt, mut paragraph, mut cues) = ("WEBVTT\n\n".to_string(), String::new(), Vec::new());
    for n in 0..60u32 {
        let topic = if n == 41 {
            "the zanzibar ferry's new timetable"
        } else {
            "the tide tables"
        };
        let line = format!("Item {n} of the harbour board: the pilots reported on {topic} and the quay.");
        let clock = |s: u32| format!("{:02}:{:02}:{:02}.000", s / 3600, s / 60 % 60, s % 60);
        vtt.push_str(&format!(
            "{}\n{} --> {}\n{line}\n\n",
            n + 1,
            clock(20 * n),
            clock(20 * n + 20)
        ));
        if !paragraph.is_empty() {
            paragraph.push(' ');
        }
        cues.push((paragraph.len()..paragraph.len() + line.len(), 20 * n));
        paragraph.push_str(&line);
    }
    std::fs::write(source.join("board meeting.vtt"), vtt).unwrap();
    let snap = dir.path().join("snap");
    index_json(source.to_str().unwrap(), &snap);
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "zanzibar ferry",
        "--mode",
        "keyword",
        "--json",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let chunks = result["chunks"].as_array().unwrap();
    let top = chunks
        .iter()
        .find(|c| c["content"].as_str().unwrap().contains("zanzibar"))
        .unwrap();
    // The hit starts where the cue its first words are in starts, and says so in its citation.
    let start = paragraph
        .find(top["content"].as_str().unwrap())
        .expect("the chunk is the transcript's text");
    let said = cues.iter().find(|(range, _)| range.contains(&start)).unwrap().1;
    assert!((20 * 30..=20 * 41).contains(&said), "{said}");
    assert_eq!(top["metadata"]["start_seconds"], said, "{top}");
    assert_eq!(
        top["display_citation"],
        format!("board meeting.vtt, {}:{:02}", said / 60, said % 60),
        "{top}"
    );
    assert_eq!(top["page_number"], serde_json::Value::Null);
    // Every chunk of the recording has a time, the first none after its words.
    assert!(
        chunks.iter().all(|c| c["metadata"]["start_seconds"].is_u64()),
        "{result}"
    );
    // A quoted phrase and an excluded word; plain syntax reads them as text.
    let zanzibar_in = |syntax: &str| {
        let output = quarry(&[
            "search",
            snap.to_str().unwrap(),
            "\"harbour board\" -zanzibar",
            "--query-syntax",
            syntax,
            "--json",
        ]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let chunks = result["chunks"].as_array().unwrap().clone();
        assert!(!chunks.is_empty(), "{result}");
        chunks
            .iter()
            .any(|c| c["content"].as_str().unwrap().contains("zanzibar"))
    };
    assert!(!zanzibar_in("simple"));
    assert!(zanzibar_in("plain"));
    // A prefix and a misspelt word find zanzibar in the keyword lane; as typed they find
    // nothing, but for typo tolerance (on by default) reading the misspelt word as zanzibar.
    let keyword_hits_with = |query: &str, more: &[&str]| {
        let mut args = vec!["search", snap.to_str().unwrap(), query, "--mode", "keyword", "--json"];
        args.extend(more);
        let output = quarry(&args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let chunks = result["chunks"].as_array().unwrap().clone();
        let found = chunks
            .iter()
            .any(|c| c["content"].as_str().unwrap().contains("zanzibar"));
        (chunks.len(), found)
    };
    let keyword_hits = |query: &str| keyword_hits_with(query, &[]);
    assert!(keyword_hits("zanz*").1);
    assert!(keyword_hits("zanizbar~").1);
    assert_eq!(keyword_hits("zanz"), (0, false));
    assert_eq!(keyword_hits("zanizbar"), (1, true));
    assert_eq!(keyword_hits_with("zanizbar", &["--no-typo-tolerance"]), (0, false));
    // --suggest: the table opens with the query its unknown words corrected, which typo
    // tolerance has read so too ("did you mean" without it).
    let search = |query: &str, more: &[&str]| {
        let mut args = vec!["search", snap.to_str().unwrap(), query, "--suggest"];
        args.extend(more);
        let output = quarry(&args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let table = search("Zanizbar fery", &[]);
    let corrected = "Zanzibar ferry  (Zanizbar -> Zanzibar, fery -> ferry)\n";
    assert!(
        table.starts_with(&format!("including results for: {corrected}")),
        "{table}"
    );
    let table = search("Zanizbar fery", &["--no-typo-tolerance"]);
    assert!(table.starts_with(&format!("did you mean: {corrected}")), "{table}");
    let table = search("zanzibar ferry", &[]);
    assert!(
        !table.contains("did you mean") && !table.contains("including"),
        "every word is held"
    );
}

#[test]
fn search_and_eval_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let beir = dir.path().join("beir");
    tiny_beir(&beir);
    let snap = dir.path().join("snap");
    let output = quarry(&[
        "index",
        beir.to_str().unwrap(),
        "--include",
        "corpus.jsonl",
        "--out",
        snap.to_str().unwrap(),
        "--progress",
        "quiet",
        "--min-recall",
        "0.95",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));

    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "baking bread in an oven",
        "--json",
        "--top-k",
        "2",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["backend"], "quarry");
    assert_eq!(result["success"], true);
    assert_eq!(result["mode"], "auto", "the default mode");
    let top = &result["chunks"][0];
    for field in [
        "chunk_id",
        "content",
        "score",
        "file_name",
        "page_number",
        "display_citation",
        "content_type",
        "metadata",
    ] {
        assert!(top.get(field).is_some(), "golden record lacks {field}: {top}");
    }
    assert_eq!(top["display_citation"], "corpus.jsonl#d4");
    assert_eq!(top["content_type"], "text");

    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "cats",
        "--mode",
        "keyword",
        "--filter",
        "doc_id=nope",
    ]);
    assert!(output.status.success());
    assert!(
        text(&output.stdout).contains("0 results (keyword mode; fewer than top_k = 10 matched)"),
        "{}",
        text(&output.stdout)
    );
    // Highlights in the table, the second page numbered on from the first.
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "bake bread in the oven",
        "--highlight",
        "--top-k",
        "1",
        "--offset",
        "1",
        "--max-chunks-per-document",
        "1",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.lines().nth(1).is_some_and(|l| l.trim_start().starts_with("2 ")),
        "{stdout}"
    );
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "bake bread in the oven",
        "--highlight",
        "--top-k",
        "1",
    ]);
    assert!(
        text(&output.stdout).contains("[bake] it in a hot [oven]"),
        "{}",
        text(&output.stdout)
    );
    let exclude = format!("doc_id={}", top["metadata"]["doc_id"].as_str().unwrap());
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "baking bread in an oven",
        "--json",
        "--top-k",
        "1",
        "--exclude",
        &exclude,
    ]);
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        result["chunks"][0]["display_citation"]
            .as_str()
            .is_some_and(|c| c != "corpus.jsonl#d4"),
        "{result}"
    );
    // More like a chunk: ranked by its embedding, its document left out unless asked for.
    let bread_chunk = top["chunk_id"].as_str().unwrap();
    let like = |extra: &[&str]| {
        let mut args = vec![
            "search",
            snap.to_str().unwrap(),
            "--similar-to-chunk",
            bread_chunk,
            "--json",
        ];
        args.extend_from_slice(extra);
        let output = quarry(&args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let result = like(&[]);
    assert_eq!(result["mode"], "vector", "{result}");
    let chunks = result["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 3, "every other document: {result}");
    assert!(
        chunks
            .iter()
            .all(|c| c["metadata"]["doc_id"] != top["metadata"]["doc_id"]),
        "{result}"
    );
    let result = like(&["--include-source"]);
    assert_eq!(result["chunks"][0]["chunk_id"], bread_chunk, "{result}");
    // Two examples: both documents left out; an unlike example steers away from its own.
    let nearest = chunks[0]["metadata"]["doc_id"].as_str().unwrap().to_string();
    let result = like(&["--similar-to-document", &nearest]);
    let docs: Vec<&str> = result["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["doc_id"].as_str().unwrap())
        .collect();
    assert!(docs.len() == 2 && !docs.contains(&nearest.as_str()), "{result}");
    let result = like(&["--unlike-document", &nearest, "--include-source"]);
    assert_eq!(result["chunks"][0]["chunk_id"], bread_chunk, "{result}");
    let output = quarry(&["search", snap.to_str().unwrap(), "--unlike-chunk", bread_chunk]);
    assert!(
        !output.status.success()
            && text(&output.stderr).contains("give --similar-to-chunk or --similar-to-document as well"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["search", snap.to_str().unwrap(), "--similar-to-chunk", bread_chunk]);
    assert!(
        text(&output.stdout).contains("3 results (vector mode")
            && text(&output.stdout).contains(" ms finding the example + "),
        "{}",
        text(&output.stdout)
    );
    let output = quarry(&["search", snap.to_str().unwrap(), "--similar-to-document", "nope"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("no document `nope` is served"),
        "{}",
        text(&output.stderr)
    );
    // Facet counts under the table: keyword mode counts the documents holding a query word.
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "sleeping cats rank documents",
        "--mode",
        "keyword",
        "--facet",
        "file_name",
        "--facet",
        "tags",
    ]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("file_name (2 documents):\n        2  corpus.jsonl\n"),
        "{stdout}"
    );
    assert!(stdout.contains("tags (2 documents):\n        2  (none)\n"), "{stdout}");
    let output = quarry(&[
        "search",
        snap.to_str().unwrap(),
        "cats",
        "--facet",
        "file_name",
        "--json",
    ]);
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["facets"]["file_name"]["values"],
        serde_json::json!([{ "value": "corpus.jsonl", "count": 4 }]),
        "{result}"
    );
    let output = quarry(&["search", snap.to_str().unwrap(), "cats", "--facet", "doc_id"]);
    assert!(
        !output.status.success() && text(&output.stderr).contains("cannot count `doc_id`"),
        "{}",
        text(&output.stderr)
    );
    let output = quarry(&["search", snap.to_str().unwrap(), "x", "--top-k", "0"]);
    assert!(
        text(&output.stderr).contains("top_k must be between 1 and 1000"),
        "{}",
        text(&output.stderr)
    );

    let json = dir.path().join("eval.json");
    let output = quarry(&[
        "eval",
        snap.to_str().unwrap(),
        "--dataset",
        beir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    for mode in ["vector", "vector (exact)", "keyword", "hybrid", "auto (default)"] {
        assert!(stdout.contains(mode), "{stdout}");
    }
    let output: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(output["default_mode"], "auto");
    let report = &output["datasets"][0];
    assert_eq!(report["dataset"], "beir");
    assert_eq!(report["queries"], 2);
    let vector = report["modes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == "vector")
        .unwrap();
    assert_eq!(vector["summary"]["mrr_at_10"], 1.0, "{report:#}");
    assert_eq!(report["ann_recall_at_10"], 1.0);
    // Without a snapshot, each dataset is indexed into the work folder first, and a run file per mode is written.
    let runs = dir.path().join("runs");
    let work = dir.path().join("work");
    let output = quarry(&[
        "eval",
        "--dataset",
        beir.to_str().unwrap(),
        "--dataset",
        beir.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--runs",
        runs.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("beir") && l.contains("auto (default)"))
            .count(),
        2,
        "{stdout}"
    );
    assert!(work.join("beir/LATEST").is_file());
    let run = std::fs::read_to_string(runs.join("beir.auto.trec")).unwrap();
    let first = run.lines().next().unwrap().split_whitespace().collect::<Vec<_>>();
    assert_eq!(
        (first[0], first[1], first[3], first.len()),
        ("q1", "Q0", "1", 6),
        "{run}"
    );
    let output = quarry(&[
        "eval",
        snap.to_str().unwrap(),
        "--dataset",
        beir.to_str().unwrap(),
        "--dataset",
        beir.to_str().unwrap(),
    ]);
    assert!(
        !output.status.success() && text(&output.stderr).contains("give one --dataset with it"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn bench_smoke_workload_writes_its_results() {
    let out = tempfile::tempdir().unwrap();
    let output = quarry(&[
        "bench",
        "bench/workloads/smoke.toml",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let json = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("results JSON");
    let results: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(results["workload"], "smoke");
    assert_eq!(results["indexing"]["documents"], 60);
    let load = results["load"].as_array().unwrap();
    assert_eq!(load.len(), 3 * 2 * 2, "modes x concurrency levels x (in-process, http)");
    assert!(
        load.iter()
            .all(|p| p["failed"] == 0 && p["completed"] == 16 && p["qps"].as_f64().unwrap() > 0.0),
        "{load:?}"
    );
    let ann = results["ann"].as_array().unwrap();
    assert_eq!(
        ann.iter().map(|p| p["value"].as_u64().unwrap()).collect::<Vec<_>>(),
        [8, 32, 128]
    );
    assert!(ann
        .iter()
        .all(|p| (0.0..=1.0).contains(&p["recall_at_10"].as_f64().unwrap())));
    let quality = &results["quality"]["modes"];
    assert!(
        quality
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["mode"] == "vector" && m["summary"]["ndcg_at_10"].as_f64().unwrap() > 0.5),
        "{quality}"
    );
    let written: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let stem = written
        .iter()
        .find(|n| n.ends_with(".json"))
        .unwrap()
        .trim_end_matches(".json")
        .to_string();
    assert!(stem.ends_with("-smoke"), "{stem}");
    let summary = std::fs::read_to_string(out.path().join(format!("{stem}.md"))).unwrap();
    assert!(
        summary.contains("## Search load") && summary.contains("## ANN recall"),
        "{summary}"
    );
    for plot in ["recall_qps", "latency_cdf", "stage_throughput"] {
        let svg = std::fs::read_to_string(out.path().join(format!("{stem}-{plot}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && (svg.contains("polyline") || svg.contains("<rect")),
            "{plot}"
        );
    }
}

#[test]
fn kernel_and_embedding_benchmarks_report_what_they_measured() {
    let out = tempfile::tempdir().unwrap();
    let kernels_json = out.path().join("kernels.json");
    let (output, report) = quarry_on_cpu_json(
        &[
            "bench-kernels",
            "--rows",
            "3000",
            "--dim",
            "32",
            "--batches",
            "1,8",
            "--nlist",
            "16",
            "--train-sample",
            "2000",
            "--bandwidth-gbs",
            "10",
            "--fp32-tflops",
            "1",
        ],
        &kernels_json,
    );
    assert_eq!(report["device"], "cpu");
    let top_k = report["top_k"].as_array().unwrap();
    assert_eq!(
        top_k.iter().map(|t| t["batch"].as_u64().unwrap()).collect::<Vec<_>>(),
        [1, 8]
    );
    // 3000 × 32 × 4 bytes at 10 GB/s: one query batch per 38.4 µs.
    assert!((top_k[0]["roof_qps"].as_f64().unwrap() - 10e9 / (3000.0 * 32.0 * 4.0)).abs() < 1e-6);
    // 2 × 3000 × 32 operations a query at 1 TFLOP/s, whatever the batch.
    let compute_roof = 1e12 / (2.0 * 3000.0 * 32.0);
    assert!(
        top_k
            .iter()
            .all(|t| (t["compute_roof_qps"].as_f64().unwrap() - compute_roof).abs() < 1e-6),
        "{top_k:?}"
    );
    let ivf = report["ivf"].as_array().unwrap();
    assert_eq!(ivf.len(), 2, "kernels build and the FAISS baseline");
    assert!(
        ivf.iter()
            .all(|b| b["recall_at_10"].as_f64().unwrap() > 0.5 && b["total_secs"].as_f64().unwrap() > 0.0),
        "{ivf:?}"
    );
    assert!(text(&output.stdout).contains("| quarry kernels on cpu + FAISS add_core |"));
    assert!(text(&output.stdout).contains("| fraction of the lower roof |"));

    // Above the graph build's exact size, so its kNN lists come from the k-means split.
    let hnsw_json = out.path().join("hnsw.json");
    let (output, report) = quarry_on_cpu_json(
        &[
            "bench-hnsw-build",
            "--rows",
            "10000",
            "--dim",
            "32",
            "--clusters",
            "64",
            "--hnsw-m",
            "8",
            "--ef-construction",
            "40",
            "--ef-search",
            "16,64",
            "--queries",
            "100",
            "--graph-variants",
            "2:detours,3:neighbourhood",
        ],
        &hnsw_json,
    );
    let builds = report["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 3, "two graph builds and FAISS's: {builds:?}");
    assert_eq!(builds[1]["graph"]["memberships"], 3, "{builds:?}");
    assert_eq!(builds[1]["graph"]["prune"], "neighbourhood", "{builds:?}");
    assert!(builds[2]["graph"].is_null(), "{builds:?}");
    assert!(
        builds[1]["base_links"].as_f64().unwrap() < builds[0]["base_links"].as_f64().unwrap(),
        "the heuristic keeps fewer links than CAGRA's pruning: {builds:?}"
    );
    for build in builds {
        let sweep = build["sweep"].as_array().unwrap();
        assert_eq!(
            sweep.iter().map(|p| p["value"].as_u64().unwrap()).collect::<Vec<_>>(),
            [16, 64]
        );
        assert!(build["build_secs"].as_f64().unwrap() > 0.0);
        assert!(sweep[1]["recall_at_10"].as_f64().unwrap() > 0.8, "{build}");
    }
    assert!(
        text(&output.stderr).contains("by the graph build on cpu"),
        "{}",
        text(&output.stderr)
    );
    assert!(text(&output.stdout).contains("| quarry graph build (kNN lists on cpu) |"));
    assert!(text(&output.stdout)
        .contains("| quarry graph build (kNN lists on cpu; 3 lists a row, neighbourhood pruning) |"));
    assert!(text(&output.stdout).contains("FAISS's build time / the graph build's (2:detours):"));
    // Each graph build's QPS against FAISS's at the same recall, one per efSearch; none for
    // FAISS's own.
    assert!(builds[2]["qps_over_faiss_at_equal_recall"]
        .as_array()
        .unwrap()
        .is_empty());
    for build in &builds[..2] {
        let ratios = build["qps_over_faiss_at_equal_recall"].as_array().unwrap();
        assert_eq!(ratios.len(), 2, "{build}");
        assert!(
            ratios.iter().all(|r| r.is_null() || r.as_f64().unwrap() > 0.0),
            "{build}"
        );
    }
    assert!(text(&output.stdout)
        .contains("quarry graph build (kNN lists on cpu): QPS / FAISS's at the same recall@10, efSearch 16 "));

    // A published snapshot's own embeddings, some rows held out as the queries.
    let snapshot = out.path().join("sample");
    let indexed = index_sample(&snapshot);
    let chunks = indexed["chunks"].as_u64().unwrap();
    let (_, report) = quarry_on_cpu_json(
        &[
            "bench-hnsw-build",
            "--snapshot",
            snapshot.to_str().unwrap(),
            "--hnsw-m",
            "8",
            "--ef-search",
            "64",
            "--queries",
            "5",
        ],
        &hnsw_json,
    );
    assert_eq!(report["queries"], 5, "{report}");
    assert_eq!(
        report["rows"].as_u64().unwrap() + 5,
        chunks,
        "every row indexed or held out"
    );
    assert_eq!(report["dim"], 384, "the model's vectors");
    assert!(
        report["vectors"].as_str().unwrap().contains("embeddings of"),
        "{report}"
    );
    for build in report["builds"].as_array().unwrap() {
        assert!(build["sweep"][0]["recall_at_10"].as_f64().unwrap() > 0.9, "{build}");
    }

    let embed_json = out.path().join("embed.json");
    let output = quarry(&[
        "bench-embed",
        "--device",
        "cpu",
        "--chunks",
        "8",
        "--repetitions",
        "1",
        "--cpu-lanes",
        "1",
        "--calls",
        "3",
        "--json",
        embed_json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&embed_json).unwrap()).unwrap();
    assert_eq!(result["chunks"], 8);
    assert_eq!(result["spread_lengths"], false);
    assert_eq!(result["real_tokens"], 8 * 256, "every text fills the 256-token window");
    let rate = result["tokens_per_sec"].as_f64().unwrap();
    assert!((result["fraction_of_roof"].as_f64().unwrap() - rate / 34e6).abs() < 1e-9);
    // The texts as calls of 3 (3 + 3 + 2), one by one and streamed, each timed.
    let calls = &result["calls"];
    assert_eq!(
        (calls["chunks_per_call"].as_u64(), calls["calls"].as_u64()),
        (Some(3), Some(3)),
        "{calls}"
    );
    for (secs, rate) in [
        ("one_by_one_secs", "one_by_one_tokens_per_sec"),
        ("streamed_secs", "streamed_tokens_per_sec"),
    ] {
        let (secs, rate) = (calls[secs].as_f64().unwrap(), calls[rate].as_f64().unwrap());
        assert!(
            secs > 0.0 && (rate * secs - 8.0 * 256.0).abs() < 1e-6 * rate * secs,
            "{calls}"
        );
    }
    assert!(text(&output.stdout).contains("| 3 | 3 |"), "{}", text(&output.stdout));
}

#[test]
fn gen_corpus_writes_a_corpus_that_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let output = quarry(&[
        "gen-corpus",
        "--documents",
        "30",
        "--per-file",
        "12",
        "--out",
        corpus.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(std::fs::read_dir(&corpus).unwrap().count(), 3);
    let snapshot = dir.path().join("snap");
    let output = quarry(&[
        "index",
        corpus.to_str().unwrap(),
        "--out",
        snapshot.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--device",
        "cpu",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["documents_indexed"], 30, "{report}");
    assert_eq!(report["documents_failed"], 0, "{report}");
    // Every stage after embedding is in the report, over every chunk.
    let stage = |name: &str| {
        report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stage"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no `{name}` stage: {report}"))
    };
    for name in ["keyword index", "vector index", "write segment"] {
        assert_eq!(stage(name)["items"], report["chunks"], "{name}: {report}");
    }
    assert!(stage("recall check")["items"].as_u64().unwrap() > 0, "{report}");
    // The run's peak memory: at least the model's 90 MB of weights when embedding ended, and
    // never less over the whole run.
    let (embed_peak, peak) = (
        report["embed_peak_rss_mib"].as_f64().unwrap(),
        report["peak_rss_mib"].as_f64().unwrap(),
    );
    assert!(embed_peak > 90.0 && peak >= embed_peak, "{report}");

    // The same run with seeded vectors in place of the model: the same documents, chunks and
    // tokens through every other stage, and the vectors' indexes built and checked.
    let seeded = dir.path().join("seeded");
    let output = quarry(&[
        "bench-pipeline",
        corpus.to_str().unwrap(),
        "--out",
        seeded.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--index",
        "hnsw",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bench: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for field in ["documents_indexed", "chunks", "tokens", "documents_failed"] {
        assert_eq!(bench[field], report[field], "{field}: {bench}");
    }
    assert_eq!(
        (bench["device"].as_str().unwrap(), bench["index"].as_str().unwrap()),
        ("seeded vectors (no model)", "HNSW32,Flat"),
        "{bench}"
    );
    assert!(
        bench["recall_at_10"].as_f64().unwrap() > 0.9 && bench["peak_rss_mib"].as_f64().unwrap() > 0.0,
        "{bench}"
    );

    // The same with HNSW's links from the graph build: recorded as such, checked, and
    // searched by this (CPU) build as any HNSW file.
    let graph = dir.path().join("seeded-graph");
    let output = quarry(&[
        "bench-pipeline",
        corpus.to_str().unwrap(),
        "--out",
        graph.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--index",
        "hnsw",
        "--hnsw-builder",
        "graph",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // Its file written straight from the links, not read into memory: the recall check
    // searched it mapped from the file, as `search` below does.
    for logged in ["by the graph build on cpu", "its file written in"] {
        assert!(text(&output.stderr).contains(logged), "{}", text(&output.stderr));
    }
    let bench: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(bench["index"], "HNSW32,Flat", "{bench}");
    assert!(bench["recall_at_10"].as_f64().unwrap() > 0.9, "{bench}");
    let output = quarry(&["inspect", graph.to_str().unwrap(), "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let inspected: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        inspected["manifest"]["index"]["params"]["builder"], "graph",
        "{inspected}"
    );
    let output = quarry(&[
        "search",
        graph.to_str().unwrap(),
        "harbour tides",
        "--mode",
        "vector",
        "--top-k",
        "3",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("3 results (vector mode)"),
        "{}",
        text(&output.stdout)
    );

    // The CPU-stage benchmark parses and chunks what the run did: the same chunks and tokens.
    let json = dir.path().join("cpu-stages.json");
    let output = quarry(&[
        "bench-cpu-stages",
        "--corpus",
        corpus.to_str().unwrap(),
        "--threads",
        "1,2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stages: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let stages = stages.as_array().unwrap();
    assert_eq!(
        stages
            .iter()
            .map(|s| s["threads"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2]
    );
    for measured in stages {
        assert_eq!(
            (&measured["documents"], &measured["chunks"], &measured["chunk_tokens"]),
            (&report["documents_indexed"], &report["chunks"], &report["tokens"]),
            "{measured}"
        );
        assert!(
            measured["parse_chunk_secs"].as_f64().unwrap() > 0.0
                && measured["cpu_tokens_per_sec"].as_f64().unwrap() > 0.0,
            "{measured}"
        );
        assert_eq!(
            measured["untokenized_chunks"], 0,
            "the chunker hands every chunk's model ids on: {measured}"
        );
        assert!(
            measured["keyword_index_secs"].as_f64().unwrap() > 0.0
                && measured["write_segment_secs"].as_f64().unwrap() > 0.0,
            "{measured}"
        );
    }
    assert!(text(&output.stdout).contains("| threads |"));
}

/// `--progress json` writes JSON lines on stderr, the last one saying the run's stages are
/// done with the counts the run report gives.
#[test]
fn json_progress_ends_with_the_run_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample");
    let output = quarry(&[
        "index",
        "datasets/sample",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "json",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stderr = text(&output.stderr);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "progress")
        .collect();
    let last = lines.last().unwrap_or_else(|| panic!("no progress line in {stderr}"));
    assert!(lines.iter().rev().skip(1).all(|l| l["done"] == false), "{lines:?}");
    assert_eq!(last["done"], true, "{last}");
    assert_eq!(
        (&last["files"], &last["fetched"], &last["parsed"]),
        (
            &report["files_listed"],
            &report["files_listed"],
            &report["files_listed"]
        ),
        "{last}"
    );
    assert_eq!(
        (&last["chunks"], &last["embedded"], &last["failed"], &last["warned"]),
        (
            &report["chunks"],
            &report["chunks"],
            &report["documents_failed"],
            &report["documents_warned"]
        ),
        "{last}"
    );
}
