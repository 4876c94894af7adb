//! `quarry index --plan`: what a run would do, said without fetching, embedding or writing
//! anything, and the same as what the run then does.

use crate::common;

use std::path::Path;

use quarry_indexer::pipeline::{plan_run, run_with_embedder, ProgressMode, PublishMode, RunOptions};

fn options(src: &Path, out: &Path) -> RunOptions {
    let mut options = RunOptions::new(src.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    options.progress = ProgressMode::Quiet;
    options
}

/// The sample corpus, copied so the test can change it.
fn sample_copy(to: &Path) {
    let from = common::workspace_root().join("datasets/sample");
    for entry in walk(&from) {
        let target = to.join(entry.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &target).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path))
        } else {
            files.push(path)
        }
    }
    files
}

fn uri(src: &Path, relative: &str) -> String {
    format!("file://{}", src.join(relative).display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_says_what_the_run_then_does_and_writes_nothing() {
    let (src_dir, out_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (src, out) = (src_dir.path(), out_dir.path());
    sample_copy(src);
    let files = walk(src).len();

    let first = plan_run(&options(src, out), common::embedder()).await.unwrap();
    assert_eq!(
        (
            first.publish,
            first.previous_version.clone(),
            first.files_new.count,
            first.files_unchanged
        ),
        ("first", None, files, 0),
        "{first:?}"
    );
    assert!(
        std::fs::read_dir(out).unwrap().next().is_none(),
        "a plan writes nothing"
    );
    let version = run_with_embedder(options(src, out), common::embedder())
        .await
        .unwrap()
        .version
        .unwrap();

    let quiet = plan_run(&options(src, out), common::embedder()).await.unwrap();
    assert_eq!(
        (
            quiet.publish,
            quiet.files_unchanged,
            quiet.files_new.count,
            quiet.files_changed.count,
            quiet.files_gone.count
        ),
        ("delta", files, 0, 0, 0),
        "{quiet:?}"
    );
    assert_eq!(quiet.previous_version.as_deref(), Some(version.as_str()));

    // A night with one file new, one changed, and a file of several documents gone.
    std::fs::write(src.join("new.txt"), "A new note about glaciers and their slow retreat.").unwrap();
    let readme = std::fs::read_to_string(src.join("README.md")).unwrap();
    std::fs::write(
        src.join("README.md"),
        format!("{readme}\n\nOne more paragraph, added tonight."),
    )
    .unwrap();
    std::fs::remove_file(src.join("data/faq.jsonl")).unwrap();
    let before = (walk(out).len(), std::fs::read_to_string(out.join("LATEST")).unwrap());
    let plan = plan_run(&options(src, out), common::embedder()).await.unwrap();
    assert_eq!(plan.files_new.examples, vec![uri(src, "new.txt")]);
    assert_eq!(plan.files_changed.examples, vec![uri(src, "README.md")]);
    assert_eq!(plan.files_gone.examples, vec![uri(src, "data/faq.jsonl")]);
    assert!(
        plan.documents_gone > 1,
        "each line of the JSONL file is a document: {plan:?}"
    );
    assert_eq!(plan.files_unchanged, files - 2);
    assert_eq!(
        (walk(out).len(), std::fs::read_to_string(out.join("LATEST")).unwrap()),
        before,
        "a plan writes nothing"
    );

    let report = run_with_embedder(options(src, out), common::embedder()).await.unwrap();
    let delta = report.delta.expect("a delta run");
    assert_eq!(delta.files_unchanged, plan.files_unchanged);
    assert_eq!(delta.documents_removed as u64, plan.documents_gone);
    assert_eq!(delta.documents_written, 2, "new.txt and README.md: {delta:?}");

    // A full run fetches every file: each one the previous version knows is a changed one.
    let mut full = options(src, out);
    full.publish = PublishMode::Full;
    let plan = plan_run(&full, common::embedder()).await.unwrap();
    assert_eq!(
        (
            plan.publish,
            plan.files_unchanged,
            plan.files_changed.count,
            plan.files_new.count,
            plan.files_gone.count
        ),
        ("full", 0, walk(src).len(), 0, 0),
        "{plan:?}"
    );
}
