//! FAISS runs its loops on libgomp's OpenMP threads and its matrix products on OpenBLAS's
//! own threads. By default libgomp's threads spin for a while after each parallel region, on
//! the cores OpenBLAS's threads (and rayon's) need next: a flat search of 200 queries over
//! 1M rows took four times as long on 2 vCPUs (bench/RESULTS.md, "FAISS's OpenMP threads
//! spinning"). libgomp reads `OMP_WAIT_POLICY` once, when it is loaded, before `main` runs,
//! so a `quarry` started without it starts itself again, at once, with it set to `passive`.
//! A value the environment gives (`active` too) is kept as it is.

use std::os::unix::process::CommandExt;

/// The variable libgomp reads.
pub const WAIT_POLICY: &str = "OMP_WAIT_POLICY";

/// Replaces this process with the same program, arguments and environment plus
/// `OMP_WAIT_POLICY=passive` when the environment does not set the variable. Returns only
/// when it does not replace it: `None` when the variable was set, the reason when the
/// program could not be started again (the process then goes on with libgomp's default).
/// Call it first in `main`, before any thread starts.
pub fn restart_with_passive_waiting() -> Option<std::io::Error> {
    if std::env::var_os(WAIT_POLICY).is_some() {
        return None;
    }
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => return Some(error),
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| program.clone().into_os_string());
    // `exec` returns only on failure; the variable is set in the new process, so it cannot loop.
    Some(
        std::process::Command::new(&program)
            .arg0(arg0)
            .args(args)
            .env(WAIT_POLICY, "passive")
            .exec(),
    )
}
