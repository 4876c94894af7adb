//! k-means steps on the GPU: SGEMM scores a chunk of rows against every centroid,
//! `nearest_centroid` picks each row's best, `accumulate_clusters` adds the rows into their
//! centroid's sum. Seeding and the centroid update stay on the host, shared with the CPU twin.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels, DeviceMatrix, SCORE_BYTES};
use crate::error::{rows_of, Result};
use crate::ClusterSums;

/// Sums and counts being accumulated on the device.
struct DeviceSums {
    sums: CudaSlice<f32>,
    counts: CudaSlice<u32>,
}

impl CudaKernels {
    /// Nearest centroid and its score for every row of `data`; with `sums`, also adds each
    /// row into its centroid's sum and count.
    fn assign_into(
        &self,
        data: &DeviceMatrix,
        centroids: &[f32],
        mut sums: Option<&mut DeviceSums>,
    ) -> Result<(CudaSlice<u32>, CudaSlice<f32>)> {
        let dim = data.dim;
        let k = rows_of(centroids, dim, "centroids")?;
        let device_centroids = self.stream.clone_htod(centroids).map_err(cuda_err)?;
        let mut assignment = self.stream.alloc_zeros::<u32>(data.rows.max(1)).map_err(cuda_err)?;
        let mut best = self.stream.alloc_zeros::<f32>(data.rows.max(1)).map_err(cuda_err)?;
        let chunk_rows = (SCORE_BYTES / (4 * k.max(1))).clamp(1, data.rows.max(1));
        let mut scores = self.stream.alloc_zeros::<f32>(chunk_rows * k).map_err(cuda_err)?;
        for first_row in (0..data.rows).step_by(chunk_rows) {
            let rows_here = chunk_rows.min(data.rows - first_row);
            let rows_view = data.rows_view(first_row, rows_here);
            let mut score_view = scores.slice_mut(..rows_here * k);
            self.inner_products(
                &device_centroids.slice(..),
                k,
                &rows_view,
                rows_here,
                dim,
                &mut score_view,
            )?;
            let (rows_arg, k_arg, dim_arg) = (rows_here as i32, k as i32, dim as i32);
            let mut assignment_view = assignment.slice_mut(first_row..first_row + rows_here);
            let mut best_view = best.slice_mut(first_row..first_row + rows_here);
            {
                let mut launch = self.stream.launch_builder(&self.nearest_centroid);
                launch
                    .arg(&mut score_view)
                    .arg(&rows_arg)
                    .arg(&k_arg)
                    .arg(&mut assignment_view)
                    .arg(&mut best_view);
                let warps_per_block = 8;
                let config = LaunchConfig {
                    grid_dim: (rows_here.div_ceil(warps_per_block) as u32, 1, 1),
                    block_dim: (32 * warps_per_block as u32, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: scores hold rows_here·k values; assignment and best rows_here each.
                unsafe { launch.launch(config) }.map_err(cuda_err)?;
            }
            if let Some(sums) = sums.as_deref_mut() {
                let mut launch = self.stream.launch_builder(&self.accumulate_clusters);
                launch
                    .arg(&rows_view)
                    .arg(&mut assignment_view)
                    .arg(&rows_arg)
                    .arg(&dim_arg)
                    .arg(&mut sums.sums)
                    .arg(&mut sums.counts);
                let config = LaunchConfig::for_num_elems((rows_here * dim) as u32);
                // SAFETY: rows_view holds rows_here·dim values, sums k·dim, counts k.
                unsafe { launch.launch(config) }.map_err(cuda_err)?;
            }
        }
        Ok((assignment, best))
    }

    /// Nearest centroid and its score for every row of the resident `data`.
    pub fn assign(&self, data: &DeviceMatrix, centroids: &[f32]) -> Result<(Vec<u32>, Vec<f32>)> {
        let (assignment, best) = self.assign_into(data, centroids, None)?;
        let assignment = self.stream.clone_dtoh(&assignment).map_err(cuda_err)?;
        let best = self.stream.clone_dtoh(&best).map_err(cuda_err)?;
        Ok((assignment[..data.rows].to_vec(), best[..data.rows].to_vec()))
    }

    /// One Lloyd step over the resident `data`: the GPU twin of [`crate::cluster_sums`].
    pub fn cluster_sums(&self, data: &DeviceMatrix, centroids: &[f32]) -> Result<ClusterSums> {
        let k = rows_of(centroids, data.dim, "centroids")?;
        let mut sums = DeviceSums {
            sums: self.stream.alloc_zeros::<f32>(k * data.dim).map_err(cuda_err)?,
            counts: self.stream.alloc_zeros::<u32>(k).map_err(cuda_err)?,
        };
        let (_, best) = self.assign_into(data, centroids, Some(&mut sums))?;
        let best = self.stream.clone_dtoh(&best).map_err(cuda_err)?;
        let host_sums = self.stream.clone_dtoh(&sums.sums).map_err(cuda_err)?;
        let counts = self.stream.clone_dtoh(&sums.counts).map_err(cuda_err)?;
        Ok(ClusterSums {
            sums: host_sums.into_iter().map(f64::from).collect(),
            counts: counts.into_iter().map(|c| c as usize).collect(),
            best: best[..data.rows].to_vec(),
        })
    }
}
