//! A batch of lists, each list's rows searched against themselves (the graph build's k-means
//! lists), in one round trip: the batch's rows gathered from the resident matrix by one
//! launch, each list's products into its own block of one score buffer (a cuBLAS GEMM a
//! list), one `select_top_k_sorted_lists` launch sorting the slices of every row's scores, one
//! `merge_sorted_lists` launch merging each row's slices, and one copy back of each row's k
//! best as positions in its list. One list at a time, each list was a wait for the GPU, a copy
//! of every slice's list (two for a list of over 4,096 rows) and a merge on the host.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::topk::{GPU_MAX_K, SORT_ROWS, THREADS};
use super::{cuda_err, CudaKernels, DeviceMatrix, SCORE_BYTES};
use crate::error::{KernelError, Result};
use crate::resident_rows::{list_by_list, ListHits};

/// Threads per block of `merge_sorted_lists` (MERGE_THREADS in topk.cu).
const MERGE_THREADS: usize = 256;
/// Rows of a list sorted by one block (LIST_SLICE_ROWS in topk.cu).
const LIST_SLICE_ROWS: usize = SORT_ROWS / 2;
/// The most slices a row's lists `merge_sorted_lists` merges (MERGE_MAX_SLICES in topk.cu).
const MERGE_MAX_SLICES: usize = 16;
/// Rows a round searches at most (bounds its slices' lists: at most 8 slices a row of a
/// list whose scores fit [`SCORE_BYTES`], so 65,536 · 8 · 128 · 12 bytes = 768 MiB).
const ROUND_ROWS: usize = 65_536;

/// Whether a list of `rows` rows is searched in a round: its scores fit the score buffer
/// (so at most 16,384 rows: 8 sorted slices, below MERGE_MAX_SLICES in topk.cu).
fn fits_a_round(rows: usize) -> bool {
    rows * rows <= SCORE_BYTES / 4
}

impl CudaKernels {
    /// [`crate::ResidentRows::top_k_among`] on the GPU, for `lists` of rows of `matrix`:
    /// lists whose scores fit [`SCORE_BYTES`] in rounds of up to [`ROUND_ROWS`] rows, a
    /// larger list (or a k beyond [`GPU_MAX_K`]) alone through [`CudaKernels::top_k_of_resident`].
    pub(crate) fn top_k_among_lists(&self, matrix: &DeviceMatrix, lists: &[&[u32]], k: usize) -> Result<ListHits> {
        let alone = |list: &[u32]| k == 0 || k > GPU_MAX_K || !fits_a_round(list.len());
        let mut hits = ListHits::new(k);
        let mut round: Vec<&[u32]> = Vec::new();
        for &list in lists.iter().filter(|list| !list.is_empty()) {
            let rows = round.iter().map(|list| list.len()).sum::<usize>() + list.len();
            let scores = round.iter().map(|list| list.len() * list.len()).sum::<usize>() + list.len() * list.len();
            if alone(list) || rows > ROUND_ROWS || scores > SCORE_BYTES / 4 {
                hits.append(self.search_round(matrix, &std::mem::take(&mut round), k)?);
            }
            if alone(list) {
                hits.append(list_by_list(&[list], k, |rows, k| {
                    let listed = self.gather(matrix, rows)?;
                    self.top_k_of_resident(&listed, &listed.rows_view(0, listed.rows), listed.rows, k)
                })?);
            } else {
                round.push(list);
            }
        }
        hits.append(self.search_round(matrix, &round, k)?);
        Ok(hits)
    }

    /// One round: `lists` (none empty, each [`fits_a_round`], together at most
    /// [`ROUND_ROWS`] rows and [`SCORE_BYTES`] of scores) searched with one copy back.
    fn search_round(&self, matrix: &DeviceMatrix, lists: &[&[u32]], k: usize) -> Result<ListHits> {
        if lists.is_empty() {
            return Ok(ListHits::new(k));
        }
        let listed = self.gather(matrix, &lists.concat())?;
        let queries = listed.rows;
        let mut list_starts = vec![0u32];
        let mut score_starts = Vec::with_capacity(lists.len());
        let (mut total_scores, mut slices) = (0usize, 1usize);
        for list in lists {
            score_starts.push(total_scores as u64);
            total_scores += list.len() * list.len();
            list_starts.push(list_starts[list_starts.len() - 1] + list.len() as u32);
            slices = slices.max(list.len().div_ceil(LIST_SLICE_ROWS));
        }
        if slices > MERGE_MAX_SLICES {
            return Err(KernelError::Input(format!(
                "a list of over {} rows in a round of the list search",
                MERGE_MAX_SLICES * LIST_SLICE_ROWS
            )));
        }
        let mut scores = self.stream.alloc_zeros::<f32>(total_scores).map_err(cuda_err)?;
        for (list, (&start, &score_start)) in lists.iter().zip(list_starts.iter().zip(&score_starts)) {
            let (rows, score_start) = (list.len(), score_start as usize);
            let view = listed.rows_view(start as usize, rows);
            let mut out = scores.slice_mut(score_start..score_start + rows * rows);
            self.inner_products(&view, rows, &view, rows, listed.dim, &mut out)?;
        }

        let device_list_starts = self.stream.clone_htod(&list_starts).map_err(cuda_err)?;
        let device_score_starts = self.stream.clone_htod(&score_starts).map_err(cuda_err)?;
        let mut slice_scores = self.stream.alloc_zeros::<f32>(queries * slices * k).map_err(cuda_err)?;
        let mut slice_rows = self.stream.alloc_zeros::<u64>(queries * slices * k).map_err(cuda_err)?;
        let (lists_arg, k_arg) = (lists.len() as i32, k as i32);
        let mut launch = self.stream.launch_builder(&self.select_top_k_sorted_lists);
        launch
            .arg(&scores)
            .arg(&device_list_starts)
            .arg(&device_score_starts)
            .arg(&lists_arg)
            .arg(&k_arg)
            .arg(&mut slice_scores)
            .arg(&mut slice_rows);
        let config = LaunchConfig {
            grid_dim: (queries as u32, slices as u32, 1),
            block_dim: (THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: list_starts holds lists + 1 row counts summing to the grid's queries, and
        // each list's rows² scores start at its score_starts entry inside `scores`; each
        // list's slices of LIST_SLICE_ROWS number at most `slices` (gridDim.y); the slice
        // lists hold queries · slices · k entries.
        unsafe { launch.launch(config) }.map_err(cuda_err)?;

        let mut out_scores = self.stream.alloc_zeros::<f32>(queries * k).map_err(cuda_err)?;
        let mut out_positions = self.stream.alloc_zeros::<u32>(queries * k).map_err(cuda_err)?;
        let (queries_arg, slices_arg) = (queries as i32, slices as i32);
        let mut launch = self.stream.launch_builder(&self.merge_sorted_lists);
        launch
            .arg(&slice_scores)
            .arg(&slice_rows)
            .arg(&queries_arg)
            .arg(&slices_arg)
            .arg(&k_arg)
            .arg(&mut out_scores)
            .arg(&mut out_positions);
        let config = LaunchConfig {
            grid_dim: (queries.div_ceil(MERGE_THREADS) as u32, 1, 1),
            block_dim: (MERGE_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the slice lists hold queries · slices · k entries, the outputs queries · k;
        // slices ≤ MERGE_MAX_SLICES (checked above).
        unsafe { launch.launch(config) }.map_err(cuda_err)?;
        Ok(ListHits {
            k,
            positions: self.stream.clone_dtoh(&out_positions).map_err(cuda_err)?,
            scores: self.stream.clone_dtoh(&out_scores).map_err(cuda_err)?,
        })
    }
}
