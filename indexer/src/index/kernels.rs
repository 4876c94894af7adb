//! The device behind quarry's own vector kernels in the indexer (IVF training and list
//! assignment, exact top-k for recall checks), chosen once per process: the GPU for
//! `--device auto|cuda` in a `cuda` build when one answers, else the CPU twins.

use std::sync::{Arc, OnceLock};

use quarry_kernels::VectorKernels;

use crate::embed::DeviceSpec;

static KERNELS: OnceLock<Arc<dyn VectorKernels>> = OnceLock::new();

fn pick(gpu: Option<usize>) -> Arc<dyn VectorKernels> {
    let kernels = quarry_kernels::best_available(gpu);
    tracing::info!("vector kernels (IVF training, exact top-k) on {}", kernels.device());
    kernels
}

/// Chooses the kernels' device from the run's `--device` (first call wins).
pub fn init_vector_kernels(device: &DeviceSpec) -> Arc<dyn VectorKernels> {
    KERNELS.get_or_init(|| pick(device.first_gpu())).clone()
}

/// The kernels chosen by [`init_vector_kernels`], or the best available when none was.
pub fn vector_kernels() -> Arc<dyn VectorKernels> {
    KERNELS.get_or_init(|| pick(Some(0))).clone()
}
