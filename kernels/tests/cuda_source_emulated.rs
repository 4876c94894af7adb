//! CUDA kernels' source (kernels/cuda/*.cu), compiled by g++ against a small
//! emulation of CUDA's threads, barriers, warp shuffles and WMMA tiles (tests/emulated/), with
//! AddressSanitizer, run on the CPU against references. It checks the kernels' logic on a machine without a GPU, in every
//! build; the GPU parity tests check the kernels nvcc builds.

use std::path::Path;
use std::process::Command;

/// Compiles tests/emulated/`name`.cpp, runs it, and expects `verdict` in its report.
fn compile_and_run(name: &str, verdict: &str) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/emulated/{name}.cpp"));
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}_emulated"));
    // AddressSanitizer reports a read or write past a buffer (on a GPU: a fault, or silently
    // another tensor's memory); the kernels reinterpret 16-bit values as 16-byte vectors, as
    // CUDA code does, so no strict aliasing.
    let flags = [
        "-std=c++20",
        "-O1",
        "-fno-strict-aliasing",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        "-pthread",
        "-Wall",
        "-Wno-unknown-pragmas",
        "-o",
    ];
    let compile = Command::new("g++")
        .args(flags)
        .arg(&binary)
        .arg(&source)
        .output()
        .expect("g++ (scripts/setup.sh installs it)");
    assert!(
        compile.status.success(),
        "g++ failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&compile.stderr)
    );
    let run = Command::new(&binary)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", binary.display()));
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{name}: emulated kernels disagree with their references:\n{report}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(report.contains(verdict), "{name}: unexpected report: {report}");
}

#[test]
fn encoder_kernels_compute_what_their_references_do_under_emulation() {
    compile_and_run("encoder_kernels", "all values match");
}

#[test]
fn every_attention_kernel_computes_what_the_reference_does_under_emulation() {
    compile_and_run("attention_kernels", "all values match");
}

#[test]
fn top_k_selection_keeps_what_a_sort_keeps_under_emulation() {
    compile_and_run("topk_kernel", "all lists match");
}

#[test]
fn a_batch_of_lists_sorted_and_merged_on_the_device_keeps_what_a_sort_keeps_under_emulation() {
    compile_and_run("topk_lists_kernel", "all lists match");
}

#[test]
fn pruning_by_detour_count_keeps_what_the_reference_keeps_under_emulation() {
    compile_and_run("detour_kernel", "all lists match");
}

#[test]
fn pooling_k_means_and_gathering_steps_compute_what_their_references_do_under_emulation() {
    compile_and_run("vector_kernels", "all values match");
}
