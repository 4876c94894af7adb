//! Rows of a resident matrix gathered on the GPU (`gather_rows`, kernels/cuda/gather.cu),
//! and [`GpuRows`]: the graph build's k-means lists searched without leaving the GPU
//! (list_search.rs).

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels, DeviceMatrix};
use crate::error::{KernelError, Result};
use crate::resident_rows::{ListHits, ResidentRows};

/// Threads per gathered row (GATHER_THREADS in gather.cu).
const THREADS: u32 = 128;

impl CudaKernels {
    /// Rows `rows` of `matrix`, in the order given, as a new resident matrix: the GPU twin of
    /// [`crate::gather_listed_rows`].
    pub fn gather(&self, matrix: &DeviceMatrix, rows: &[u32]) -> Result<DeviceMatrix> {
        if let Some(&row) = rows.iter().find(|&&row| row as usize >= matrix.rows) {
            return Err(KernelError::Input(format!(
                "row {row} gathered from a matrix of {} rows",
                matrix.rows
            )));
        }
        let dim = matrix.dim;
        let mut out = self.stream.alloc_zeros::<f32>(rows.len() * dim).map_err(cuda_err)?;
        if !rows.is_empty() && dim > 0 {
            let device_rows = self.stream.clone_htod(rows).map_err(cuda_err)?;
            let dim_arg = dim as i32;
            let mut launch = self.stream.launch_builder(&self.gather_rows);
            launch.arg(&matrix.data).arg(&device_rows).arg(&dim_arg).arg(&mut out);
            let config = LaunchConfig {
                grid_dim: (rows.len() as u32, 1, 1),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: every row is below matrix.rows (checked above); `out` holds rows.len()·dim.
            unsafe { launch.launch(config) }.map_err(cuda_err)?;
        }
        Ok(DeviceMatrix {
            data: out,
            rows: rows.len(),
            dim,
        })
    }
}

/// A matrix resident on the GPU whose listed rows are gathered there and searched against
/// themselves: one upload of the whole matrix, then a batch of lists' row numbers a search
/// ([`CudaKernels::top_k_among_lists`]).
pub(crate) struct GpuRows<'a> {
    pub(crate) kernels: &'a CudaKernels,
    pub(crate) matrix: DeviceMatrix,
}

impl ResidentRows for GpuRows<'_> {
    fn top_k_among(&self, lists: &[&[u32]], k: usize) -> Result<ListHits> {
        self.kernels.top_k_among_lists(&self.matrix, lists, k)
    }

    fn nearest_centroids(&self, centroids: &[f32], each: usize) -> Result<Vec<u32>> {
        self.kernels.nearest_centroids(&self.matrix, centroids, each)
    }
}
