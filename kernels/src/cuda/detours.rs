//! CAGRA's pruning by detour count on the GPU: `order_by_detours` (kernels/cuda/detours.cu),
//! one block per row, over the kNN lists copied to the device once.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels};
use crate::detours::lists_of;
use crate::error::Result;

/// The longest list the kernel takes (DETOUR_MAX_K in detours.cu); longer ones run on the
/// CPU twin.
const GPU_MAX_LIST: usize = 128;
/// Threads per row's block (DETOUR_THREADS in detours.cu).
const THREADS: u32 = 128;

impl CudaKernels {
    /// The GPU twin of [`crate::order_by_detours`].
    pub fn order_by_detours(&self, lists: &[u32], k: usize, degree: usize) -> Result<Vec<u32>> {
        let rows = lists_of(lists, k)?;
        if k > GPU_MAX_LIST || rows == 0 || degree == 0 || rows > i32::MAX as usize {
            return crate::order_by_detours(lists, k, degree);
        }
        let device_lists = self.stream.clone_htod(lists).map_err(cuda_err)?;
        let mut kept = self.stream.alloc_zeros::<u32>(rows * degree).map_err(cuda_err)?;
        let (k_arg, degree_arg) = (k as i32, degree as i32);
        let mut launch = self.stream.launch_builder(&self.order_by_detours);
        launch.arg(&device_lists).arg(&k_arg).arg(&degree_arg).arg(&mut kept);
        let config = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `device_lists` holds rows·k ids, each below `rows` or NO_NEIGHBOUR; `kept`
        // holds rows·degree; one block per row.
        unsafe { launch.launch(config) }.map_err(cuda_err)?;
        self.stream.clone_dtoh(&kept).map_err(cuda_err)
    }
}
