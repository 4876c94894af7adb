//! Shell completions and man pages come from the clap definitions: they name every command
//! and option. (clap_complete's scripts still offer the hidden `parse-worker`; the man pages
//! leave it out.)

use std::process::Command;

fn quarry(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_quarry")).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "quarry {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn completions_name_every_command_and_option() {
    let bash = quarry(&["completions", "bash"]);
    assert!(bash.contains("_quarry()"), "{}", &bash[..200.min(bash.len())]);
    for word in [
        "index",
        "serve",
        "rollback",
        "--read-only",
        "--segment-chunks",
        "--fused-steps",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    assert!(quarry(&["completions", "zsh"]).starts_with("#compdef quarry"));
    assert!(quarry(&["completions", "fish"]).contains("complete -c quarry"));
    let bad = Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("invalid value 'tcsh'"));
}

#[test]
fn man_pages_for_the_binary_and_each_command() {
    let page = quarry(&["man"]);
    assert!(page.contains(".TH quarry 1"), "{}", &page[..200.min(page.len())]);
    assert!(page.contains("rollback"));
    let dir = tempfile::tempdir().unwrap();
    quarry(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    let index = std::fs::read_to_string(dir.path().join("quarry-index.1")).unwrap();
    assert!(
        index.contains(".TH quarry-index 1"),
        "{}",
        &index[..200.min(index.len())]
    );
    assert!(
        index.contains("segment\\-chunks"),
        "the index page lacks --segment-chunks"
    );
    assert!(dir.path().join("quarry-serve.1").is_file());
    assert!(!dir.path().join("quarry-parse-worker.1").exists());
}
