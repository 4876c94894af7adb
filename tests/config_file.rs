//! Settings files (`--config FILE`) as a user runs them: the example file in deploy/ reads for
//! both commands with every key placed on its line; a flag wins over the environment, which
//! wins over the file, which wins over the default; a key no flag has, or a value of the
//! wrong kind, stops the command naming the file, the line and the key; and a real index run
//! takes its settings from the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn quarry(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quarry"));
    command.args(args).current_dir(root());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `--flag value (source)` line `quarry config --print` shows for `flag`.
fn shown(output: &Output, flag: &str) -> String {
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
        .lines()
        .find(|line| line.split_whitespace().next() == Some(&format!("--{flag}")))
        .unwrap_or_else(|| panic!("--{flag} not listed: {}", text(&output.stdout)))
        .split_whitespace()
        .skip(1)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The line of `key =` in `text`, 1-based.
fn line_of(text: &str, key: &str) -> usize {
    text.lines().position(|l| l.starts_with(&format!("{key} ="))).unwrap() + 1
}

#[test]
fn the_example_file_reads_for_both_commands_with_each_key_on_its_line() {
    let example = "deploy/quarry.example.toml";
    let file = std::fs::read_to_string(root().join(example)).unwrap();
    let serve = quarry(&["config", "--print", "serve", "--config", example], &[]);
    assert_eq!(
        shown(&serve, "search-workers"),
        format!("8 (file {example}:{})", line_of(&file, "search-workers"))
    );
    assert_eq!(
        shown(&serve, "collection"),
        format!(
            "docs=s3://corpus-bucket/snapshots/docs (file {example}:{})",
            line_of(&file, "collection")
        )
    );
    assert_eq!(
        shown(&serve, "summaries"),
        format!("extractive (file {example}:{})", line_of(&file, "summaries")),
        "a top-level key counts for serve"
    );
    assert_eq!(shown(&serve, "drain-secs"), "30 (default)");
    let index = quarry(&["config", "--print", "index", "--config", example], &[]);
    assert_eq!(
        shown(&index, "tag"),
        format!("nightly (file {example}:{})", line_of(&file, "tag"))
    );
    assert_eq!(
        shown(&index, "summaries"),
        format!("extractive (file {example}:{})", line_of(&file, "summaries")),
        "and for index"
    );
    assert_eq!(shown(&index, "max-document-tokens").split(' ').next(), Some("500000"));
}

#[test]
fn flags_win_over_the_environment_which_wins_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("quarry.toml");
    std::fs::write(&file, "[serve]\nsearch_workers = 3\nread-only = true\n").unwrap();
    let path = file.to_str().unwrap();
    let from_file = quarry(&["config", "--print", "serve", "--config", path], &[]);
    assert_eq!(shown(&from_file, "search-workers"), format!("3 (file {path}:2)"));
    assert_eq!(shown(&from_file, "read-only"), format!("true (file {path}:3)"));
    let env = [("QUARRY_SEARCH_WORKERS", "5")];
    let from_env = quarry(&["config", "--print", "serve", "--config", path], &env);
    assert_eq!(
        shown(&from_env, "search-workers"),
        "5 (environment QUARRY_SEARCH_WORKERS)"
    );
    let from_flag = quarry(
        &["config", "--print", "serve", "--config", path, "--search-workers", "7"],
        &env,
    );
    assert_eq!(shown(&from_flag, "search-workers"), "7 (flag)");
    let named_by_env = quarry(&["config", "--print", "serve"], &[("QUARRY_CONFIG", path)]);
    assert_eq!(shown(&named_by_env, "search-workers"), format!("3 (file {path}:2)"));
}

fn refused(dir: &Path, body: &str) -> String {
    let file = dir.join("bad.toml");
    std::fs::write(&file, body).unwrap();
    let output = quarry(&["serve", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    text(&output.stderr)
}

#[test]
fn unknown_keys_and_wrong_values_name_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml").display().to_string();
    let why = refused(
        dir.path(),
        "# settings\n[serve]\naddr = \"127.0.0.1:0\"\nsearch-wrokers = 3\n",
    );
    assert!(
        why.contains(&format!(
            "{path}:4: setting `search-wrokers`: `quarry serve` has no such flag"
        )),
        "{why}"
    );
    let why = refused(dir.path(), "colour = \"blue\"\n");
    assert!(why.contains(&format!("{path}:1: setting `colour`")), "{why}");
    let why = refused(dir.path(), "[serve]\nread-only = \"yes\"\n");
    assert!(why.contains("--read-only is a switch"), "{why}");
    let why = refused(dir.path(), "[serve]\nsearch-workers = [1, 2]\n");
    assert!(why.contains("takes one value, not an array"), "{why}");
    let why = refused(dir.path(), "[serve\n");
    assert!(why.contains(&format!("settings file {path}")), "{why}");
    let why = refused(dir.path(), "[serve]\nsearch-workers = 0\n");
    assert!(
        why.contains("search-workers"),
        "the flag's own check still applies: {why}"
    );
}

#[test]
fn an_index_run_takes_its_settings_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snapshot");
    let file = dir.path().join("quarry.toml");
    std::fs::write(
        &file,
        format!(
            "[index]\nout = \"{}\"\ntag = [\"from-file\", \"nightly\"]\nsummaries = \"off\"\nprogress = \"quiet\"\njson = true\n",
            out.display()
        ),
    )
    .unwrap();
    let output = quarry(&["index", "datasets/sample", "--config", file.to_str().unwrap()], &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("`json = true` from the file: the report as JSON");
    assert!(report.is_object(), "{report}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let documents = runtime.block_on(async {
        let reader = quarry_indexer::snapshot::SnapshotReader::open(
            out.to_str().unwrap(),
            &quarry_indexer::store::StoreOptions::default(),
        )
        .await
        .unwrap();
        reader.read_documents().await.unwrap()
    });
    assert!(!documents.is_empty());
    for document in &documents {
        assert!(document.tags.contains(&"from-file".to_string()), "{:?}", document.tags);
        assert_eq!(document.layers.made_by, "none", "summaries = \"off\" from the file");
    }
}
