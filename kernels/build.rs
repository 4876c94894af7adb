//! With the `cuda` feature, compiles kernels/cuda/*.cu to PTX with nvcc (found through
//! $NVCC, $CUDA_ROOT/bin or PATH) for compute capability $CUDA_COMPUTE_CAP (default 90).
//! The PTX is embedded in the library and JIT-compiled by the driver at load. When ptxas
//! sits beside nvcc, each PTX file is also assembled for sm_$CUDA_COMPUTE_CAP here, so PTX
//! the driver would reject (a newer ISA than the toolkit's, say) fails the build, not the GPU run;
//! its register, stack and spill figures are printed as build warnings.

use std::path::PathBuf;
use std::process::Command;

const KERNELS: [&str; 7] = ["topk", "kmeans", "pool", "encoder", "attention", "detours", "gather"];
/// Headers the kernels include.
const HEADERS: [&str; 2] = ["element.cuh", "mma.cuh"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CUDA_COMPUTE_CAP");
    println!("cargo:rerun-if-env-changed=NVCC");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    for header in HEADERS {
        println!("cargo:rerun-if-changed=cuda/{header}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let nvcc = std::env::var("NVCC").ok().or_else(|| {
        let root = std::env::var("CUDA_ROOT")
            .or_else(|_| std::env::var("CUDA_PATH"))
            .ok()?;
        let path = PathBuf::from(root).join("bin/nvcc");
        path.exists().then(|| path.display().to_string())
    });
    let nvcc = nvcc.unwrap_or_else(|| "nvcc".to_string());
    let capability = std::env::var("CUDA_COMPUTE_CAP").unwrap_or_else(|_| "90".to_string());
    for kernel in KERNELS {
        let source = format!("cuda/{kernel}.cu");
        println!("cargo:rerun-if-changed={source}");
        let ptx = out.join(format!("{kernel}.ptx"));
        let status = Command::new(&nvcc)
            .args(["--ptx", "-O3", &format!("-arch=compute_{capability}"), "-o"])
            .arg(&ptx)
            .arg(&source)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {nvcc} (install the toolkit with scripts/cuda-toolkit.sh and `source .cuda/env.sh`): {e}"));
        assert!(status.success(), "{nvcc} failed on {source}");
        assemble_check(&nvcc, &ptx, &capability, &out);
    }
}

/// Assembles `ptx` with the ptxas beside `nvcc` (skipped when there is none) and prints
/// its resource report as build warnings.
fn assemble_check(nvcc: &str, ptx: &std::path::Path, capability: &str, out: &std::path::Path) {
    let ptxas = PathBuf::from(nvcc).with_file_name("ptxas");
    let ptxas = if ptxas.exists() { ptxas } else { return };
    let cubin = out.join("check.cubin");
    let output = Command::new(&ptxas)
        .args([&format!("-arch=sm_{capability}"), "-v", "-o"])
        .arg(&cubin)
        .arg(ptx)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
    let report = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "ptxas rejects {} for sm_{capability}:\n{report}",
        ptx.display()
    );
    for line in report
        .lines()
        .filter(|l| l.contains("spill") || l.contains("registers"))
    {
        println!(
            "cargo:warning={}: {}",
            ptx.file_name().unwrap_or_default().to_string_lossy(),
            line.trim().trim_start_matches("ptxas info    : ")
        );
    }
}
