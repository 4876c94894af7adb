//! The deployment examples in deploy/ are valid Kubernetes resources (Kubernetes' own schemas,
//! through `kubernetes-validate --strict` from .venv: scripts/s3-tools.sh installs it), and
//! every option they pass to `quarry` is one the binary takes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/kubernetes"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

fn validate(files: &[PathBuf]) -> std::process::Output {
    let validator = root().join(".venv/bin/kubernetes-validate");
    assert!(
        validator.is_file(),
        "{} missing: run scripts/s3-tools.sh (scripts/test.sh does)",
        validator.display()
    );
    Command::new(validator)
        .arg("--strict")
        .args(files)
        .output()
        .expect("run kubernetes-validate")
}

#[test]
fn the_manifests_pass_kubernetes_schemas_and_a_broken_one_does_not() {
    let files = manifests();
    let output = validate(&files);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // The validator rejects what it should: a count that is not a number, a field no resource has.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("deploy/kubernetes/search-replicas.yaml")).unwrap();
    for (name, broken) in [
        ("count.yaml", text.replace("replicas: 3", "replicas: three")),
        (
            "field.yaml",
            text.replace("  replicas: 3", "  replicas: 3\n  replicaz: 3"),
        ),
    ] {
        assert_ne!(broken, text, "{name}: the replacement must change the file");
        let path = dir.path().join(name);
        std::fs::write(&path, broken).unwrap();
        let output = validate(std::slice::from_ref(&path));
        assert!(!output.status.success(), "{name} passed");
    }
}

/// Each container's `args` (the quarry subcommand first), read from the YAML's list items.
fn container_args(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut all = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some((args_indent, args)) = &mut current {
            match line.trim_start().strip_prefix("- ") {
                Some(item) if indent >= *args_indent => {
                    args.push(item.trim_matches('"').to_string());
                    continue;
                }
                _ => all.push(current.take().unwrap().1),
            }
        }
        if line.trim_end().ends_with("args:") {
            current = Some((indent, Vec::new()));
        }
    }
    if let Some((_, args)) = current {
        all.push(args);
    }
    all
}

#[test]
fn every_option_in_the_manifests_is_one_quarry_takes() {
    let mut checked = 0;
    // Every `- --flag` line of the files, which the args reader must find.
    let written: usize = manifests()
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .filter(|l| l.trim_start().starts_with("- --"))
                .count()
        })
        .sum();
    for file in manifests() {
        for args in container_args(&file) {
            let (command, rest) = args.split_first().expect("a subcommand");
            let help = Command::new(env!("CARGO_BIN_EXE_quarry"))
                .args([command.as_str(), "--help"])
                .output()
                .unwrap();
            assert!(
                help.status.success(),
                "{}: quarry {command} --help failed",
                file.display()
            );
            let help = String::from_utf8_lossy(&help.stdout);
            for flag in rest.iter().filter(|a| a.starts_with("--")) {
                assert!(
                    help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                    "{}: `quarry {command}` has no option {flag}",
                    file.display()
                );
                checked += 1;
            }
        }
    }
    assert!(written > 0);
    assert_eq!(checked, written, "the args reader missed some options");
}
