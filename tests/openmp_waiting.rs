//! `quarry` started without `OMP_WAIT_POLICY` starts itself again with it set to `passive`
//! (libgomp reads it only when loaded: `src/openmp_waiting.rs`), keeping its arguments, its
//! input and output and its exit status; a value the environment gives is kept.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn quarry() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quarry"));
    command.env_remove("OMP_WAIT_POLICY");
    command
}

/// The NUL-separated entries of a `/proc/PID/` file.
fn proc_entries(pid: u32, file: &str) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|entry| !entry.is_empty())
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}

/// Waits until the running process `pid`'s environment holds `entry` (true), or 30 s pass.
fn environment_comes_to_hold(pid: u32, entry: &str) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if proc_entries(pid, "environ").iter().any(|e| e == entry) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_process_started_without_the_wait_policy_runs_with_passive_waiting_and_its_arguments() {
    // The parse worker waits on its input: the running process can be looked at.
    let mut worker = quarry()
        .arg("parse-worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = worker.id();
    assert!(
        environment_comes_to_hold(pid, "OMP_WAIT_POLICY=passive"),
        "environment: {:?}",
        proc_entries(pid, "environ")
    );
    assert_eq!(proc_entries(pid, "cmdline")[1..], ["parse-worker"]);
    // Its input is still the pipe: closing it ends the worker, as it does a first start.
    drop(worker.stdin.take());
    assert!(worker.wait().unwrap().success());

    // Output and exit status come from the process started again.
    let version = quarry().arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("quarry "));
    let missing = quarry()
        .args(["inspect", "/nonexistent/quarry-snapshot"])
        .output()
        .unwrap();
    assert_eq!(
        missing.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    assert!(!String::from_utf8_lossy(&missing.stderr).contains("could not start again"));
}

#[test]
fn a_wait_policy_the_environment_gives_is_kept() {
    let mut worker = quarry()
        .arg("parse-worker")
        .env("OMP_WAIT_POLICY", "active")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = worker.id();
    // Let a restart, were there one, happen before looking.
    std::thread::sleep(Duration::from_millis(500));
    let environment = proc_entries(pid, "environ");
    assert!(
        environment.iter().any(|e| e == "OMP_WAIT_POLICY=active"),
        "{environment:?}"
    );
    assert!(
        !environment.iter().any(|e| e == "OMP_WAIT_POLICY=passive"),
        "{environment:?}"
    );
    // Closing its input ends the worker.
    drop(worker.stdin.take());
    assert!(worker.wait().unwrap().success());
}
