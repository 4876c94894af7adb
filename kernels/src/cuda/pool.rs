//! Fused mean pooling + L2 normalization on the GPU.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels};
use crate::error::{KernelError, Result};

/// Threads per text (POOL_THREADS in pool.cu).
const THREADS: u32 = 256;

impl CudaKernels {
    /// Unit-length mean of the masked token vectors of each text: `hidden` is
    /// `[rows, tokens, dim]`, `mask` `[rows, tokens]`. The GPU twin of
    /// [`crate::mean_pool`] followed by [`crate::l2_normalize`].
    pub fn mean_pool_normalize(
        &self,
        hidden: &[f32],
        mask: &[u32],
        rows: usize,
        tokens: usize,
        dim: usize,
    ) -> Result<Vec<f32>> {
        if hidden.len() != rows * tokens * dim || mask.len() != rows * tokens {
            return Err(KernelError::Input(format!(
                "mean pool: {} hidden values and {} mask values do not fit {rows} rows × {tokens} tokens × {dim} dims",
                hidden.len(),
                mask.len()
            )));
        }
        if rows == 0 || dim == 0 {
            return Ok(Vec::new());
        }
        let device_hidden = self.stream.clone_htod(hidden).map_err(cuda_err)?;
        let device_mask = self.stream.clone_htod(mask).map_err(cuda_err)?;
        let mut out = self.stream.alloc_zeros::<f32>(rows * dim).map_err(cuda_err)?;
        let (tokens_arg, dim_arg) = (tokens as i32, dim as i32);
        let mut launch = self.stream.launch_builder(&self.mean_pool_normalize);
        launch
            .arg(&device_hidden)
            .arg(&device_mask)
            .arg(&tokens_arg)
            .arg(&dim_arg)
            .arg(&mut out);
        let config = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the buffers hold the sizes checked above.
        unsafe { launch.launch(config) }.map_err(cuda_err)?;
        self.stream.clone_dtoh(&out).map_err(cuda_err)
    }
}
