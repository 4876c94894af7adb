//! Exact top-k on the GPU: SGEMM scores a group of queries against a chunk of base rows,
//! `select_top_k` keeps each query's k best per slice of the chunk (several slices per query
//! when the queries are few, so that the blocks fill the GPU), the host merges the sorted
//! lists query by query on the thread pool ([`merge_slice_lists`]).
//! A large k over few rows takes `select_top_k_sorted` instead, which sorts each slice of up
//! to [`SORT_ROWS`] rows whole. The graph build's k-means lists (k 128 of ~4,100 rows) go
//! through list_search.rs, which sorts the same way and merges the slices on the GPU.

use cudarc::driver::{CudaView, LaunchConfig, PushKernelArg};

use super::{cuda_err, CudaKernels, DeviceMatrix, SCORE_BYTES};
use crate::error::{rows_of, KernelError, Result};
use crate::{merge_slice_lists, topk, Scored};

/// The largest k the selection kernel keeps per thread (TOPK_MAX_K in topk.cu); a larger
/// k runs on the CPU twin.
pub const GPU_MAX_K: usize = 128;
/// Threads per query block (TOPK_THREADS in topk.cu).
pub(super) const THREADS: usize = 256;
/// Bytes of per-thread candidate lists one launch may use.
const SCRATCH_BYTES: usize = 256 << 20;
/// Selection blocks a launch aims for: several per SM of an H100 (132 SMs).
const TARGET_BLOCKS: usize = 1024;
/// Rows each selection thread scans at least before a query's rows are split further.
const MIN_ROWS_PER_THREAD: usize = 16;
/// The most rows `select_top_k_sorted` sorts in one block (SORT_ROWS in topk.cu).
pub(super) const SORT_ROWS: usize = 4_096;
/// From this k on, a base of at most [`SORTED_MAX_ROWS`] rows is searched by sorting slices.
const SORTED_MIN_K: usize = 32;
/// The most rows searched by sorting (16 slices a query for the host to merge).
const SORTED_MAX_ROWS: usize = 16 * SORT_ROWS;

impl CudaKernels {
    /// Top-`k` rows of the resident `base` for each query, best first (higher score, then
    /// lower row: the CPU twin's order).
    pub fn top_k(&self, base: &DeviceMatrix, queries: &[f32], k: usize) -> Result<Vec<Vec<Scored>>> {
        let query_count = rows_of(queries, base.dim, "queries")?;
        if k == 0 || base.rows == 0 || query_count == 0 {
            return Ok(vec![Vec::new(); query_count]);
        }
        let device_queries = self.stream.clone_htod(queries).map_err(cuda_err)?;
        self.top_k_of_resident(base, &device_queries.slice(..), query_count, k)
    }

    /// [`CudaKernels::top_k`] for `query_count` queries already on the GPU (`queries`, rows of
    /// `base.dim` columns).
    pub(crate) fn top_k_of_resident(
        &self,
        base: &DeviceMatrix,
        queries: &CudaView<'_, f32>,
        query_count: usize,
        k: usize,
    ) -> Result<Vec<Vec<Scored>>> {
        let dim = base.dim;
        if queries.len() != query_count * dim {
            return Err(KernelError::Input(format!(
                "queries: {} values are not {query_count} rows of {dim} columns",
                queries.len()
            )));
        }
        if k == 0 || base.rows == 0 || query_count == 0 {
            return Ok(vec![Vec::new(); query_count]);
        }
        if k > GPU_MAX_K {
            let host = self.stream.clone_dtoh(&base.data).map_err(cuda_err)?;
            let host_queries = self.stream.clone_dtoh(queries).map_err(cuda_err)?;
            return Ok(topk::exact_top_k(&host_queries, &host, dim, k));
        }
        let sorted = k >= SORTED_MIN_K && base.rows <= SORTED_MAX_ROWS;
        let (group, max_slices, chunk_rows) = if sorted {
            // No per-thread lists: as many queries as the score buffer holds, one chunk.
            let group = (SCORE_BYTES / (4 * base.rows)).clamp(1, query_count);
            (group, base.rows.div_ceil(SORT_ROWS), base.rows)
        } else {
            let per_block_scratch = THREADS * k * (4 + 8);
            let block_budget = (SCRATCH_BYTES / per_block_scratch).max(1);
            let group = block_budget.clamp(1, query_count);
            let max_slices = (block_budget.min(TARGET_BLOCKS) / group).max(1);
            (group, max_slices, (SCORE_BYTES / (4 * group)).clamp(1, base.rows))
        };
        let mut scores = self.stream.alloc_zeros::<f32>(chunk_rows * group).map_err(cuda_err)?;
        let lists = group * max_slices;
        let scratch = if sorted { 1 } else { lists * THREADS * k };
        let mut scratch_scores = self.stream.alloc_zeros::<f32>(scratch).map_err(cuda_err)?;
        let mut scratch_rows = self.stream.alloc_zeros::<u64>(scratch).map_err(cuda_err)?;
        let mut out_scores = self.stream.alloc_zeros::<f32>(lists * k).map_err(cuda_err)?;
        let mut out_rows = self.stream.alloc_zeros::<u64>(lists * k).map_err(cuda_err)?;

        let mut results: Vec<Vec<Scored>> = Vec::with_capacity(query_count);
        for first_query in (0..query_count).step_by(group) {
            let queries_here = group.min(query_count - first_query);
            let query_view = queries.slice(first_query * dim..(first_query + queries_here) * dim);
            let mut candidates: Vec<Vec<Scored>> = vec![Vec::new(); queries_here];
            for first_row in (0..base.rows).step_by(chunk_rows) {
                let rows_here = chunk_rows.min(base.rows - first_row);
                let slices = if sorted {
                    rows_here.div_ceil(SORT_ROWS)
                } else {
                    max_slices.min(rows_here.div_ceil(THREADS * MIN_ROWS_PER_THREAD)).max(1)
                };
                let mut score_view = scores.slice_mut(..rows_here * queries_here);
                self.inner_products(
                    &base.rows_view(first_row, rows_here),
                    rows_here,
                    &query_view,
                    queries_here,
                    dim,
                    &mut score_view,
                )?;
                let (rows_arg, k_arg, offset_arg) = (rows_here as i32, k as i32, first_row as u64);
                let config = LaunchConfig {
                    grid_dim: (queries_here as u32, slices as u32, 1),
                    block_dim: (THREADS as u32, 1, 1),
                    shared_mem_bytes: 0,
                };
                let function = if sorted {
                    &self.select_top_k_sorted
                } else {
                    &self.select_top_k
                };
                let mut launch = self.stream.launch_builder(function);
                launch.arg(&mut score_view).arg(&rows_arg).arg(&k_arg).arg(&offset_arg);
                if !sorted {
                    launch.arg(&mut scratch_scores).arg(&mut scratch_rows);
                }
                launch.arg(&mut out_scores).arg(&mut out_rows);
                // SAFETY: the buffers hold the sizes topk.cu indexes for this grid: queries_here ·
                // slices ≤ group · max_slices lists of k out entries (and, for select_top_k, of
                // THREADS · k scratch entries); select_top_k_sorted's slices hold at most
                // SORT_ROWS rows, its shared arrays.
                unsafe { launch.launch(config) }.map_err(cuda_err)?;
                let found = queries_here * slices * k;
                let chunk_scores = self.stream.clone_dtoh(&out_scores.slice(..found)).map_err(cuda_err)?;
                let chunk_rows_found = self.stream.clone_dtoh(&out_rows.slice(..found)).map_err(cuda_err)?;
                merge_slice_lists(&mut candidates, &chunk_scores, &chunk_rows_found, slices, k);
            }
            results.extend(candidates);
        }
        if results.len() != query_count {
            return Err(KernelError::Cuda(format!(
                "top-k returned {} lists for {query_count} queries",
                results.len()
            )));
        }
        Ok(results)
    }
}
