//! k-means steps on the GPU: SGEMM scores a chunk of rows against every centroid,
//! `nearest_centroid` picks each row's best (`nearest_centroids` its few best, the lists a
//! row joins in the graph build), `accumulate_clusters` adds the rows into their
//! centroid's sum. Seeding and the centroid update stay on the host, shared with the CPU twin.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels, DeviceMatrix, SCORE_BYTES};
use crate::error::{rows_of, Result};
use crate::{check_nearest, ClusterSums, NO_CENTROID};

/// Rows a block of the one-warp-a-row kernels takes.
const WARPS_PER_BLOCK: usize = 8;

/// One warp per row over `rows` rows.
fn warp_per_row(rows: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (rows.div_ceil(WARPS_PER_BLOCK) as u32, 1, 1),
        block_dim: (32 * WARPS_PER_BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Sums and counts being accumulated on the device.
struct DeviceSums {
    sums: CudaSlice<f32>,
    counts: CudaSlice<u32>,
}

impl CudaKernels {
    /// Scores every row of `data` against `centroids` (`k` rows, on the device) a chunk of
    /// rows at a time (at most [`SCORE_BYTES`] of scores), and hands each chunk to `then`:
    /// its first row, its rows, and their scores (`k` a row).
    fn for_each_scored_chunk(
        &self,
        data: &DeviceMatrix,
        centroids: &CudaSlice<f32>,
        k: usize,
        mut then: impl FnMut(usize, usize, &CudaView<'_, f32>, &mut CudaViewMut<'_, f32>) -> Result<()>,
    ) -> Result<()> {
        let chunk_rows = (SCORE_BYTES / (4 * k.max(1))).clamp(1, data.rows.max(1));
        let mut scores = self.stream.alloc_zeros::<f32>(chunk_rows * k).map_err(cuda_err)?;
        for first_row in (0..data.rows).step_by(chunk_rows) {
            let rows_here = chunk_rows.min(data.rows - first_row);
            let rows_view = data.rows_view(first_row, rows_here);
            let mut score_view = scores.slice_mut(..rows_here * k);
            self.inner_products(
                &centroids.slice(..),
                k,
                &rows_view,
                rows_here,
                data.dim,
                &mut score_view,
            )?;
            then(first_row, rows_here, &rows_view, &mut score_view)?;
        }
        Ok(())
    }

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
        self.for_each_scored_chunk(
            data,
            &device_centroids,
            k,
            |first_row, rows_here, rows_view, score_view| {
                let (rows_arg, k_arg, dim_arg) = (rows_here as i32, k as i32, dim as i32);
                let mut assignment_view = assignment.slice_mut(first_row..first_row + rows_here);
                let mut best_view = best.slice_mut(first_row..first_row + rows_here);
                {
                    let mut launch = self.stream.launch_builder(&self.nearest_centroid);
                    launch
                        .arg(score_view)
                        .arg(&rows_arg)
                        .arg(&k_arg)
                        .arg(&mut assignment_view)
                        .arg(&mut best_view);
                    // SAFETY: scores hold rows_here·k values; assignment and best rows_here each.
                    unsafe { launch.launch(warp_per_row(rows_here)) }.map_err(cuda_err)?;
                }
                if let Some(sums) = sums.as_deref_mut() {
                    let mut launch = self.stream.launch_builder(&self.accumulate_clusters);
                    launch
                        .arg(rows_view)
                        .arg(&mut assignment_view)
                        .arg(&rows_arg)
                        .arg(&dim_arg)
                        .arg(&mut sums.sums)
                        .arg(&mut sums.counts);
                    let config = LaunchConfig::for_num_elems((rows_here * dim) as u32);
                    // SAFETY: rows_view holds rows_here·dim values, sums k·dim, counts k.
                    unsafe { launch.launch(config) }.map_err(cuda_err)?;
                }
                Ok(())
            },
        )?;
        Ok((assignment, best))
    }

    /// Every row of the resident `data`'s `each` nearest centroids, best first: the GPU twin
    /// of [`crate::nearest_centroids`] (the scores stay on the device; one copy back).
    pub fn nearest_centroids(&self, data: &DeviceMatrix, centroids: &[f32], each: usize) -> Result<Vec<u32>> {
        check_nearest(&[], centroids, data.dim, each)?;
        let k = centroids.len() / data.dim.max(1);
        if each == 0 || data.rows == 0 || k == 0 {
            return Ok(vec![NO_CENTROID; data.rows * each]);
        }
        let device_centroids = self.stream.clone_htod(centroids).map_err(cuda_err)?;
        let mut nearest = self.stream.alloc_zeros::<u32>(data.rows * each).map_err(cuda_err)?;
        self.for_each_scored_chunk(data, &device_centroids, k, |first_row, rows_here, _, score_view| {
            let (rows_arg, k_arg, each_arg) = (rows_here as i32, k as i32, each as i32);
            let mut nearest_view = nearest.slice_mut(first_row * each..(first_row + rows_here) * each);
            let mut launch = self.stream.launch_builder(&self.nearest_centroids);
            launch
                .arg(score_view)
                .arg(&rows_arg)
                .arg(&k_arg)
                .arg(&each_arg)
                .arg(&mut nearest_view);
            // SAFETY: scores hold rows_here·k values, nearest_view rows_here·each; each is at
            // most NEAREST_MAX (checked above).
            unsafe { launch.launch(warp_per_row(rows_here)) }.map_err(cuda_err)?;
            Ok(())
        })?;
        self.stream.clone_dtoh(&nearest).map_err(cuda_err)
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
