//! Each row's nearest rows by inner product (a k-nearest-neighbour graph), from quarry's
//! vector kernels: the GPU's products and top-k in a `cuda` build with a GPU, the CPU twins
//! otherwise. A few thousand rows are searched exactly, all against all. More are split
//! first, as DiskANN's build splits them: k-means lists over a sample, each row put in its
//! [`MEMBERSHIPS`] nearest lists (by default), and each list searched exactly within itself,
//! so a row's candidates are the rows of the lists around it and the products grow with
//! rows × list size, not rows².

use std::time::Instant;

use rayon::prelude::*;

use quarry_kernels::{KMeansConfig, ListHits, ResidentRows, Scored, VectorKernels, NO_CENTROID};

use super::row_bits::{clear_bits, first_sight, row_bit};
use crate::error::Result;
use crate::index::seeded_rows;

/// An empty place in a row's list (fewer candidates than `k`).
pub const NO_ROW: u32 = quarry_kernels::NO_NEIGHBOUR;

/// Up to this many rows are searched all against all.
pub const EXACT_MAX_ROWS: usize = 8_192;
/// Rows per k-means list (each list then holds about `MEMBERSHIPS` times as many).
pub const LIST_ROWS: usize = 2_048;
/// How many of its nearest lists each row joins.
pub const MEMBERSHIPS: usize = 2;
/// A list larger than this (a lump of near-duplicates k-means cannot split) is searched in
/// parts of this many rows, so that its products stay linear in rows, not quadratic.
pub const MAX_LIST_ROWS: usize = 8 * LIST_ROWS;
/// Sampled rows per list for the k-means training.
const TRAINING_ROWS_PER_LIST: usize = 64;
const KMEANS_ITERATIONS: usize = 10;
/// Queries per exact top-k call (bounds the answers held at once).
const QUERY_TILE: usize = 8_192;
/// Rows of k-means lists searched in one call (on a GPU, a round trip or a few): about 16
/// lists of ~4,100 rows, whose answers (k + 1 = 128 a row, 8 bytes each) are 64 MiB.
const BATCH_ROWS: usize = 65_536;

/// `k` rows per row, nearest first; [`NO_ROW`] pads a row that has fewer.
#[derive(Debug, Clone, PartialEq)]
pub struct KnnLists {
    pub k: usize,
    pub ids: Vec<u32>,
}

impl KnnLists {
    pub fn rows(&self) -> usize {
        self.ids.len() / self.k.max(1)
    }

    /// Row `row`'s list, padding included.
    pub fn of(&self, row: usize) -> &[u32] {
        &self.ids[row * self.k..(row + 1) * self.k]
    }

    /// The share of each sampled row's true `k` nearest other rows of `data` (exact search
    /// by `kernels`) that its list holds, over `sample` rows spread evenly over the rows
    /// (all of them when `sample` is as many).
    pub fn recall(&self, kernels: &dyn VectorKernels, data: &[f32], dim: usize, sample: usize) -> Result<f64> {
        let rows = self.rows();
        if rows < 2 || sample == 0 {
            return Ok(1.0);
        }
        let stride = (rows / sample.min(rows)).max(1);
        let picked: Vec<usize> = (0..rows).step_by(stride).take(sample).collect();
        let queries = crate::index::gather_rows(data, dim, picked.iter().copied());
        let exact = kernels.exact_top_k(&queries, data, dim, (self.k + 1).min(rows))?;
        let (mut found, mut wanted) = (0usize, 0usize);
        for (&row, hits) in picked.iter().zip(&exact) {
            let truth = without_self(scored_ids(hits), row, self.k).map(|(_, id)| id);
            let list = self.of(row);
            for id in truth {
                found += list.contains(&id) as usize;
                wanted += 1;
            }
        }
        Ok(found as f64 / wanted.max(1) as f64)
    }
}

/// The `k` nearest other rows of every row of `data` (row-major, `dim` columns); above
/// [`EXACT_MAX_ROWS`], each row's candidates are the rows of its `memberships` nearest lists.
pub fn knn_lists(
    kernels: &dyn VectorKernels,
    data: &[f32],
    dim: usize,
    k: usize,
    seed: u64,
    memberships: usize,
) -> Result<KnnLists> {
    let rows = data.len() / dim.max(1);
    if rows <= EXACT_MAX_ROWS {
        return exact_lists(kernels, data, dim, k);
    }
    clustered_lists(kernels, data, dim, k, seed, memberships.max(1))
}

/// A query row's hits, best first, as (score, id), without itself (or without the last,
/// when ties left it out).
fn without_self<I>(hits: I, row: usize, k: usize) -> impl Iterator<Item = (f32, u32)>
where
    I: ExactSizeIterator<Item = (f32, u32)> + Clone,
{
    let has_self = hits.clone().any(|(_, id)| id as usize == row);
    let keep = if has_self {
        k
    } else {
        k.min(hits.len().saturating_sub(1))
    };
    hits.filter(move |&(_, id)| id as usize != row).take(keep)
}

/// Exact hits as (score, id).
fn scored_ids(hits: &[Scored]) -> impl ExactSizeIterator<Item = (f32, u32)> + Clone + '_ {
    hits.iter().map(|hit| (hit.score, hit.row as u32))
}

/// Every row against every row.
fn exact_lists(kernels: &dyn VectorKernels, data: &[f32], dim: usize, k: usize) -> Result<KnnLists> {
    let rows = data.len() / dim.max(1);
    let flat = kernels.prepare_flat(data, dim)?;
    let mut ids = vec![NO_ROW; rows * k];
    for start in (0..rows).step_by(QUERY_TILE) {
        let end = (start + QUERY_TILE).min(rows);
        let answers = flat.top_k(&data[start * dim..end * dim], (k + 1).min(rows))?;
        for (offset, hits) in answers.iter().enumerate() {
            let row = start + offset;
            for (slot, (_, id)) in ids[row * k..(row + 1) * k]
                .iter_mut()
                .zip(without_self(scored_ids(hits), row, k))
            {
                *slot = id;
            }
        }
    }
    Ok(KnnLists { k, ids })
}

/// Lists of rows around k-means centroids, each searched within itself, the answers merged
/// per row. While one list's answers are merged on the thread pool, the next list is searched
/// (on a GPU, its products and top-k), so that neither waits for the other.
fn clustered_lists(
    kernels: &dyn VectorKernels,
    data: &[f32],
    dim: usize,
    k: usize,
    seed: u64,
    each: usize,
) -> Result<KnnLists> {
    let rows = data.len() / dim;
    let lists = (rows / LIST_ROWS).max(2);
    let started = Instant::now();
    let training = seeded_rows(data, dim, lists * TRAINING_ROWS_PER_LIST, seed);
    let centroids = kernels.kmeans_train(
        &training,
        dim,
        KMeansConfig {
            k: lists,
            iterations: KMEANS_ITERATIONS,
            seed,
        },
    )?;
    let trained = started.elapsed().as_secs_f64();
    // The rows stay where the kernels run (on a GPU: uploaded once): each row's lists are
    // found there, then each batch of lists is gathered there and each list searched
    // against itself.
    let resident = kernels.prepare_rows(data, dim)?;
    let prepared = started.elapsed().as_secs_f64() - trained;
    let members = memberships(resident.as_ref(), &centroids, dim, each)?;
    let assigned = started.elapsed().as_secs_f64() - trained - prepared;
    let parts: Vec<&[u32]> = members
        .iter()
        .flat_map(|list| list.chunks(MAX_LIST_ROWS))
        .filter(|list| list.len() > 1)
        .collect();
    let batches = batches_of_lists(&parts);
    let search = |batch: &[&[u32]]| -> Result<(ListHits, f64)> {
        let started = Instant::now();
        // Each list's k + 1 best include the row itself; a list shorter than that pads.
        let answers = resident.top_k_among(batch, k + 1)?;
        Ok((answers, started.elapsed().as_secs_f64()))
    };
    let mut best = Candidates::new(rows, k);
    let (mut searching, mut merging) = (0.0, 0.0);
    let mut pending: Option<(&[&[u32]], ListHits)> = None;
    for index in 0..=batches.len() {
        let next = batches.get(index).copied();
        let (searched, merged) = rayon::join(
            || next.map(search).transpose(),
            || {
                let started = Instant::now();
                if let Some((batch, answers)) = pending.take() {
                    best.merge_answers(batch, &answers, k);
                }
                started.elapsed().as_secs_f64()
            },
        );
        merging += merged;
        pending = match (next, searched?) {
            (Some(batch), Some((answers, secs))) => {
                searching += secs;
                Some((batch, answers))
            }
            _ => None,
        };
    }
    tracing::info!(
        "kNN lists: k-means {trained:.2} s, rows in place {prepared:.2} s, each row to its lists {assigned:.2} s; {} lists of up to {MAX_LIST_ROWS} rows searched in {} batches in {searching:.2} s, merged in {merging:.2} s, one beside the other",
        parts.len(),
        batches.len(),
    );
    Ok(best.into_lists())
}

/// `lists` in consecutive batches of about [`BATCH_ROWS`] rows (a longer list alone), each
/// searched in one call while the last one's answers are merged.
fn batches_of_lists<'a>(lists: &'a [&'a [u32]]) -> Vec<&'a [&'a [u32]]> {
    let mut batches = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (index, list) in lists.iter().enumerate() {
        if rows > 0 && rows + list.len() > BATCH_ROWS {
            batches.push(&lists[start..index]);
            (start, rows) = (index, 0);
        }
        rows += list.len();
    }
    if start < lists.len() {
        batches.push(&lists[start..]);
    }
    batches
}

/// Each list's rows, in row order: every row of `resident` joins its `each` nearest
/// centroids' lists.
fn memberships(resident: &dyn ResidentRows, centroids: &[f32], dim: usize, each: usize) -> Result<Vec<Vec<u32>>> {
    let lists = centroids.len() / dim;
    let each = each.min(lists).max(1);
    let nearest = resident.nearest_centroids(centroids, each)?;
    let mut sizes = vec![0usize; lists];
    for &list in nearest.iter().filter(|&&list| list != NO_CENTROID) {
        sizes[list as usize] += 1;
    }
    let mut members: Vec<Vec<u32>> = sizes.into_iter().map(Vec::with_capacity).collect();
    for (row, row_lists) in nearest.chunks(each).enumerate() {
        for &list in row_lists.iter().filter(|&&list| list != NO_CENTROID) {
            members[list as usize].push(row as u32);
        }
    }
    Ok(members)
}

/// Each row's best `k` candidates so far, with their scores, best first.
struct Candidates {
    k: usize,
    ids: Vec<u32>,
    scores: Vec<f32>,
}

impl Candidates {
    fn new(rows: usize, k: usize) -> Self {
        Self {
            k,
            ids: vec![NO_ROW; rows * k],
            scores: vec![f32::NEG_INFINITY; rows * k],
        }
    }

    fn rows(&self) -> usize {
        self.ids.len() / self.k.max(1)
    }

    /// A batch of lists' answers (`answers.of(i)`: the hits of the batch's i-th row, as
    /// positions in its own list) merged into their rows' candidates, in place: a list's rows
    /// side by side on the thread pool (each list holds a row once; a list that would hold one
    /// twice is merged one row after another).
    fn merge_answers(&mut self, batch: &[&[u32]], answers: &ListHits, k: usize) {
        thread_local! {
            /// A bit per row of the rows being merged, all clear between merges.
            static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
            /// A merged list until it is copied back.
            static MERGED: std::cell::RefCell<Vec<(f32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let words = self.rows().div_ceil(64);
        let mut listed = vec![0u64; words];
        let slots = RowSlots::of(self);
        let mut first = 0;
        for list in batch {
            let merge_row = |(local, &row): (usize, &u32)| {
                let found = without_self(answers.of(first + local), local, k)
                    .map(|(score, position)| (score, list[position as usize]));
                // Taken out while in use: a merge that panicked leaves no bit set behind.
                let (mut seen, mut merged) = (SEEN.take(), MERGED.take());
                if seen.len() < words {
                    seen.resize(words, 0);
                }
                // SAFETY: the rows of a list merged side by side are distinct (checked below),
                // and the lists are merged one after another.
                let (ids, scores) = unsafe { slots.row(row as usize) };
                merge_into(ids, scores, found, &mut seen, &mut merged);
                SEEN.set(seen);
                MERGED.set(merged);
            };
            if each_once(list, &mut listed) {
                list.par_iter().enumerate().for_each(merge_row);
            } else {
                list.iter().enumerate().for_each(merge_row);
            }
            first += list.len();
        }
    }

    fn into_lists(self) -> KnnLists {
        KnnLists {
            k: self.k,
            ids: self.ids,
        }
    }
}

/// Whether `list` holds each row once (through `listed`, a bit per row, all clear before and
/// after).
fn each_once(list: &[u32], listed: &mut [u64]) -> bool {
    let mut once = true;
    for &row in list {
        once &= first_sight(listed, row);
    }
    clear_bits(listed, list.iter().copied());
    once
}

/// A row's list (`ids` and `scores`, best first, [`NO_ROW`] after its end) with `found` (best
/// first) merged in, in place: best first, each id once, at most its `k` places. Both are
/// sorted, so this is one pass over each; an id already in the row's list is left out of
/// `found` (the same pair scored in two k-means lists may differ in the last bit), found
/// through `seen`, one bit per row, all clear before and after. `merged` holds the new list
/// until it is copied back.
fn merge_into(
    ids: &mut [u32],
    scores: &mut [f32],
    found: impl Iterator<Item = (f32, u32)>,
    seen: &mut [u64],
    merged: &mut Vec<(f32, u32)>,
) {
    let k = ids.len();
    let length = ids.iter().position(|&id| id == NO_ROW).unwrap_or(k);
    for &id in &ids[..length] {
        let (word, mask) = row_bit(id);
        seen[word] |= mask;
    }
    let mut theirs = found
        .filter(|&(_, id)| {
            let (word, mask) = row_bit(id);
            seen[word] & mask == 0
        })
        .peekable();
    merged.clear();
    let mut ours = 0;
    while merged.len() < k {
        // Higher score first, then the lower id.
        let take_ours = match theirs.peek() {
            Some(&(score, id)) => ours < length && scores[ours].total_cmp(&score).then(id.cmp(&ids[ours])).is_gt(),
            None if ours < length => true,
            None => break,
        };
        if take_ours {
            merged.push((scores[ours], ids[ours]));
            ours += 1;
        } else if let Some(hit) = theirs.next() {
            merged.push(hit);
        }
    }
    drop(theirs);
    clear_bits(seen, ids[..length].iter().copied());
    for (slot, &(score, id)) in merged.iter().enumerate() {
        ids[slot] = id;
        scores[slot] = score;
    }
}

/// The rows of [`Candidates`] for tasks that each write rows no other task touches
/// meanwhile (the rows of one k-means list).
struct RowSlots<'a> {
    ids: *mut u32,
    scores: *mut f32,
    k: usize,
    rows: usize,
    _candidates: std::marker::PhantomData<&'a mut Candidates>,
}

// SAFETY: the slots are reached only through `row`, whose callers touch distinct rows at once.
unsafe impl Send for RowSlots<'_> {}
unsafe impl Sync for RowSlots<'_> {}

impl<'a> RowSlots<'a> {
    fn of(candidates: &'a mut Candidates) -> Self {
        Self {
            ids: candidates.ids.as_mut_ptr(),
            scores: candidates.scores.as_mut_ptr(),
            k: candidates.k,
            rows: candidates.rows(),
            _candidates: std::marker::PhantomData,
        }
    }

    /// Row `row`'s ids and scores.
    ///
    /// # Safety
    /// While they live, no other caller holds the same row.
    #[allow(clippy::mut_from_ref)]
    unsafe fn row(&self, row: usize) -> (&mut [u32], &mut [f32]) {
        assert!(row < self.rows, "row {row} of {} candidates", self.rows);
        // SAFETY: row < rows, so both ranges lie in the borrowed vectors; the caller keeps
        // them to itself.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.ids.add(row * self.k), self.k),
                std::slice::from_raw_parts_mut(self.scores.add(row * self.k), self.k),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_kernels::CpuKernels;

    /// The share of each row's true nearest that its list holds.
    fn list_recall(lists: &KnnLists, data: &[f32], dim: usize) -> f64 {
        lists.recall(&CpuKernels, data, dim, lists.rows()).unwrap()
    }

    #[test]
    fn a_merge_keeps_the_best_once_each_and_leaves_no_bit_set() {
        // A row's list of 4 places holding rows 5 and 7.
        let (mut ids, mut scores) = ([5, 7, NO_ROW, NO_ROW], [0.9, 0.5, f32::NEG_INFINITY, f32::NEG_INFINITY]);
        let (mut seen, mut merged) = (vec![0u64; 1], Vec::new());
        // Row 7 again (scored a bit higher in this list), a tie with it at 0.5, and more
        // than the 4 places hold.
        let found = [(0.8, 3), (0.5000001, 7), (0.5, 2), (0.1, 0)];
        merge_into(&mut ids, &mut scores, found.into_iter(), &mut seen, &mut merged);
        assert_eq!(ids, [5, 3, 2, 7]);
        assert_eq!(scores, [0.9, 0.8, 0.5, 0.5]);
        assert_eq!(seen, [0], "every bit cleared");
        // A row with no list yet takes the found ones as they are; fewer than its places
        // leave the rest empty.
        let (mut ids, mut scores) = ([NO_ROW; 5], [f32::NEG_INFINITY; 5]);
        merge_into(&mut ids, &mut scores, found.into_iter(), &mut seen, &mut merged);
        assert_eq!(ids, [3, 7, 2, 0, NO_ROW]);
        assert_eq!(seen, [0]);
    }

    #[test]
    fn a_list_with_a_row_twice_is_merged_row_after_row() {
        let mut listed = vec![0u64; 2];
        assert!(each_once(&[3, 70, 1], &mut listed));
        assert!(!each_once(&[3, 70, 3], &mut listed));
        assert_eq!(listed, [0, 0], "every bit cleared");
        // Merged one after another, the row's second merge sees its first.
        let mut candidates = Candidates::new(4, 3);
        let answers = ListHits {
            k: 2,
            positions: vec![0, 1, 1, 0, 2, 0],
            scores: vec![1.0, 0.5, 1.0, 0.5, 1.0, 0.9],
        };
        // List [3, 1, 3]: row 3 (position 0) finds row 1; row 1 finds row 3; row 3 (position
        // 2) finds row 3 at position 0, itself by id but not by position.
        candidates.merge_answers(&[&[3, 1, 3]], &answers, 2);
        assert_eq!(&candidates.ids[3..6], &[3, NO_ROW, NO_ROW]);
        assert_eq!(&candidates.ids[9..12], &[3, 1, NO_ROW]);
    }

    #[test]
    fn lists_are_batched_in_order_up_to_the_batch_rows_and_a_long_list_alone() {
        let sizes = [40_000, 25_000, 10, 70_000, 5, 1];
        let lists: Vec<Vec<u32>> = sizes.iter().map(|&n| vec![0; n]).collect();
        let lists: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
        let batches: Vec<Vec<usize>> = batches_of_lists(&lists)
            .iter()
            .map(|batch| batch.iter().map(|list| list.len()).collect())
            .collect();
        assert_eq!(batches, [vec![40_000, 25_000, 10], vec![70_000], vec![5, 1]]);
        assert!(batches_of_lists(&[]).is_empty());
    }

    #[test]
    fn small_sets_are_exact_and_never_list_a_row_as_its_own_neighbour() {
        let dim = 16;
        let data = crate::index::test_unit_vectors(300, dim);
        let lists = knn_lists(&CpuKernels, &data, dim, 12, 1, MEMBERSHIPS).unwrap();
        assert_eq!(lists.rows(), 300);
        for row in 0..300 {
            assert!(!lists.of(row).contains(&(row as u32)), "row {row} lists itself");
            assert!(!lists.of(row).contains(&NO_ROW));
        }
        assert_eq!(list_recall(&lists, &data, dim), 1.0);
        // Fewer rows than k: every other row, then padding.
        let tiny = knn_lists(&CpuKernels, &data[..4 * dim], dim, 6, 1, MEMBERSHIPS).unwrap();
        assert_eq!(tiny.of(0)[3..], [NO_ROW; 3]);
        assert!(tiny.of(0)[..3].iter().all(|&id| (1..4).contains(&id)));
    }

    #[test]
    fn a_lump_of_identical_rows_is_searched_in_bounded_parts() {
        // 20,000 copies of one vector and 2,000 others: one k-means list cannot split them.
        let dim = 8;
        let mut data = crate::index::test_unit_vectors(2_000, dim);
        let lump = data[..dim].to_vec();
        (0..20_000).for_each(|_| data.extend_from_slice(&lump));
        let rows = data.len() / dim;
        let lists = knn_lists(&CpuKernels, &data, dim, 16, 5, MEMBERSHIPS).unwrap();
        assert_eq!(lists.rows(), rows);
        for row in (0..rows).step_by(997) {
            let list = lists.of(row);
            assert!(!list.contains(&NO_ROW), "row {row}: {list:?}");
            assert!(!list.contains(&(row as u32)), "row {row} lists itself");
        }
    }

    #[test]
    fn split_lists_find_most_true_neighbours() {
        let dim = 32;
        let rows = EXACT_MAX_ROWS * 2;
        let data = crate::index::test_clustered_vectors(rows, dim);
        let lists = knn_lists(&CpuKernels, &data, dim, 16, 3, MEMBERSHIPS).unwrap();
        assert_eq!(lists.rows(), rows);
        let recall = list_recall(&lists, &data, dim);
        assert!(recall > 0.8, "kNN list recall {recall}");
        assert_eq!(
            lists,
            knn_lists(&CpuKernels, &data, dim, 16, 3, MEMBERSHIPS).unwrap(),
            "seeded"
        );
    }
}
