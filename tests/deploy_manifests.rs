//! The deployment examples in deploy/ are valid Kubernetes resources (Kubernetes' own schemas,
//! through `kubernetes-validate --strict` from .venv: scripts/python-tools.sh installs it), and
//! every option they pass to `quarry` is one the binary takes. The Slurm scripts run for real
//! with the variables Slurm sets (Slurm itself cannot run here; `sbatch` is a stand-in that
//! records what the submit script asks of it).

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
        "{} missing: run scripts/python-tools.sh (scripts/test.sh does)",
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

/// `bash SCRIPT` in the repository with the built `quarry` first on PATH (and `path_first`
/// before it), with `env` set.
fn script(name: &str, path_first: Option<&Path>, env: &[(&str, &str)]) -> std::process::Output {
    let binaries = PathBuf::from(env!("CARGO_BIN_EXE_quarry"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect::<Vec<_>>();
    path.insert(0, binaries);
    if let Some(first) = path_first {
        path.insert(0, first.to_path_buf());
    }
    Command::new("bash")
        .arg(root().join("deploy/slurm").join(name))
        .current_dir(root())
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("QUARRY_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn the_slurm_array_tasks_and_the_publish_job_publish_one_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap");
    let out = out.to_str().unwrap();
    // An array submitted as --array=1-2: the tasks are shards 0 and 1 of run 4242.
    for task in ["1", "2"] {
        let output = script(
            "nightly-index.sbatch",
            None,
            &[
                ("SLURM_ARRAY_TASK_ID", task),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
                ("SLURM_ARRAY_JOB_ID", "4242"),
                ("QUARRY_SOURCE", "datasets/sample"),
                ("QUARRY_OUT", out),
            ],
        );
        assert!(
            output.status.success(),
            "task {task}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(dir.path().join("snap/runs/4242/shard-00001.json").is_file());
    let output = script(
        "publish.sbatch",
        None,
        &[("RUN_ID", "4242"), ("SHARDS", "2"), ("QUARRY_OUT", out)],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("(run 4242, 2 shards, a full version)"), "{stdout}");
    assert!(stdout.contains("documents  8 served"), "{stdout}");
}

#[test]
fn the_submit_script_makes_the_publish_wait_for_the_whole_array() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sbatch.log");
    // The stand-in answers as `sbatch --parsable` does on a federated cluster: `<id>;<cluster>`.
    let sbatch = dir.path().join("sbatch");
    std::fs::write(
        &sbatch,
        format!(
            "#!/bin/bash\necho \"$*\" >> {log}\nn=$(wc -l < {log})\necho \"$((700 + n));main\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&sbatch)
        .status()
        .unwrap();
    let output = script("submit-nightly.sh", Some(dir.path()), &[("SHARDS", "8")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls[0].contains("--array=0-7") && calls[0].ends_with("nightly-index.sbatch"),
        "{calls:?}"
    );
    assert!(
        calls[1].contains("--dependency=afterok:701")
            && calls[1].contains("RUN_ID=701,SHARDS=8")
            && calls[1].ends_with("publish.sbatch"),
        "{calls:?}"
    );
}
