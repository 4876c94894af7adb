//! HNSW whose base level is built from a k-nearest-neighbour graph instead of FAISS's
//! insertions, so that a GPU can do the work: every row gets its kNN list from quarry's
//! vector kernels ([`knn_lists`]: the products and top-k on a GPU), CAGRA's rank-based
//! pruning and reverse links make them a search graph ([`prune`]); the levels above (one
//! row in `M`) are FAISS's own insertion over those rows ([`upper_levels`]), whose links
//! cross between clusters and reach the base level too ([`long_links`]); and the whole
//! is written as FAISS's own `IndexHNSWFlat` ([`faiss_file`]), which every build — the
//! CPU-only one included — reads and searches unchanged. Without a GPU, FAISS's own HNSW
//! build stays the default (`--hnsw-builder auto`).

mod build_options;
mod copies;
mod faiss_file;
mod hnsw_graph;
mod knn_lists;
mod long_links;
mod neighbourhood_prune;
mod orphans;
mod prune;
mod reachable;
mod row_bits;
mod strong_parts;
mod upper_levels;

use std::time::Instant;

use quarry_kernels::VectorKernels;

pub use build_options::{GraphBuildOptions, GraphPrune};
pub use copies::{find_copies, Copies};
pub use faiss_file::{read_hnsw_links, write_flat_file, FaissHnswLinks, HnswFlatFile};
pub use hnsw_graph::{HnswGraph, UpperLevel, NO_LINK};
pub use knn_lists::MEMBERSHIPS;
pub use reachable::{make_reachable, Reachability};

use hnsw_graph::draw_top_levels;
use knn_lists::knn_lists;
use long_links::{add_long_links, nearest_hubs};
use neighbourhood_prune::prune_by_neighbourhood;
use prune::prune_with_reverse_links;
use upper_levels::faiss_upper_levels;

use crate::error::Result;

/// Seed of the rows' levels.
const LEVEL_SEED: u64 = 0x4e53_5748;
/// Seed of the k-means lists that split the rows for their kNN lists.
const LIST_SEED: u64 = 0x6b6e_6e67;

/// Seconds per stage of one graph build, for the build's log line.
#[derive(Debug, Default, Clone, Copy)]
pub struct GraphBuildTimes {
    /// The base level's kNN lists (the kernels' share).
    pub knn: f64,
    /// Pruning of the base level's lists: the kernels' detour counts (or the neighbourhood
    /// heuristic, on the CPU).
    pub detours: f64,
    /// The base level's reverse links, long links and links to the rows no row linked to
    /// (CPU).
    pub links: f64,
    /// Every level above the base (FAISS's insertion, beside the kNN lists).
    pub upper: f64,
    /// Links a row of the base level keeps, on average (of `2·M` slots).
    pub base_links: f64,
    /// Rows that were copies of another (the same vector), linked through their group.
    pub copies: usize,
    /// What was linked so that every row of the base level reaches every other
    /// ([`make_reachable`]).
    pub reachability: Reachability,
    /// Of `links` and `copies_secs`: the seconds [`make_reachable`] took (finding the base
    /// level's parts and linking them).
    pub reachability_secs: f64,
    /// Finding the copies, and giving them their links (CPU).
    pub copies_secs: f64,
}

/// The kNN list length pruned down to `degree` links: twice the links, as CAGRA's default
/// (intermediate degree 128 for 64 links), within a GPU top-k's 128 (with the row itself).
pub fn list_length(degree: usize) -> usize {
    (2 * degree).clamp(1, 127)
}

/// The HNSW links of `data` (row-major unit vectors, `dim` columns) with FAISS's `M` = `m`
/// (the levels above the base built with `ef_construction`), by `options`.
/// Rows that are copies of another ([`copies`]) are left out of the build and linked to
/// their group afterwards.
pub fn build_hnsw_graph(
    kernels: &dyn VectorKernels,
    data: &[f32],
    dim: usize,
    m: usize,
    ef_construction: usize,
    options: &GraphBuildOptions,
) -> Result<(HnswGraph, GraphBuildTimes)> {
    let started = Instant::now();
    let Some(copies) = copies::find_copies(data, dim) else {
        let found = started.elapsed().as_secs_f64();
        let (graph, mut times) = build_distinct(kernels, data, dim, m, ef_construction, options)?;
        times.copies_secs = found;
        return Ok((graph, times));
    };
    let distinct = crate::index::gather_rows(data, dim, copies.distinct.iter().map(|&row| row as usize));
    let found = started.elapsed().as_secs_f64();
    let (graph, mut times) = build_distinct(kernels, &distinct, dim, m, ef_construction, options)?;
    drop(distinct);
    let started = Instant::now();
    let mut graph = copies.expand(graph);
    let reaching = Instant::now();
    let again = make_reachable(&mut graph, data, dim);
    times.reachability_secs += reaching.elapsed().as_secs_f64();
    times.reachability.orphans += again.orphans;
    times.reachability.links_in += again.links_in;
    times.reachability.links_out += again.links_out;
    times.copies = copies.copies();
    times.copies_secs = found + started.elapsed().as_secs_f64();
    times.base_links = mean_base_links(&graph);
    Ok((graph, times))
}

/// Links a row keeps on the base level, on average.
fn mean_base_links(graph: &HnswGraph) -> f64 {
    graph.base.iter().filter(|&&link| link != NO_LINK).count() as f64 / graph.rows().max(1) as f64
}

/// [`build_hnsw_graph`] over rows that are all distinct.
fn build_distinct(
    kernels: &dyn VectorKernels,
    data: &[f32],
    dim: usize,
    m: usize,
    ef_construction: usize,
    options: &GraphBuildOptions,
) -> Result<(HnswGraph, GraphBuildTimes)> {
    let rows = data.len() / dim.max(1);
    let mut times = GraphBuildTimes::default();
    let mut top_levels = draw_top_levels(rows, m, LEVEL_SEED);
    let rows_at: Vec<u32> = (0..rows as u32).filter(|&row| top_levels[row as usize] >= 1).collect();
    // The levels above need only their rows' vectors, not the kNN lists: FAISS inserts them
    // on the CPU while the lists are searched (on a GPU, beside its work).
    let (lists, upper_levels) = rayon::join(
        || {
            let started = Instant::now();
            knn_lists(kernels, data, dim, list_length(2 * m), LIST_SEED, options.memberships)
                .map(|lists| (lists, started.elapsed()))
        },
        || {
            let started = Instant::now();
            if rows_at.is_empty() {
                return Ok((None, started.elapsed()));
            }
            let data_at = crate::index::gather_rows(data, dim, rows_at.iter().map(|&row| row as usize));
            faiss_upper_levels(&rows_at, &data_at, dim, m, ef_construction)
                .map(|levels| (Some(levels), started.elapsed()))
        },
    );
    let (lists, knn_time) = lists?;
    let (upper_levels, upper_time) = upper_levels?;
    times.knn = knn_time.as_secs_f64();
    times.upper = upper_time.as_secs_f64();
    let started = Instant::now();
    // Each row's hub comes from its kNN list, found before the pruning lets the lists go.
    let hubs = nearest_hubs(&lists, &top_levels);
    let (mut base, detour_secs) = match options.prune {
        GraphPrune::Detours => prune_with_reverse_links(kernels, lists, 2 * m)?,
        GraphPrune::Neighbourhood => {
            let started = Instant::now();
            let links = prune_by_neighbourhood(data, dim, &lists, 2 * m);
            drop(lists);
            (links, started.elapsed().as_secs_f64())
        }
    };
    times.detours = detour_secs;
    times.links = started.elapsed().as_secs_f64() - detour_secs;
    let (upper, entry_point) = match upper_levels {
        Some(levels) => {
            for (&row, &top) in rows_at.iter().zip(&levels.top_levels) {
                top_levels[row as usize] = top;
            }
            (levels.levels, levels.entry_point as i32)
        }
        None => (Vec::new(), 0),
    };
    let started = Instant::now();
    if let Some(level_one) = upper.first() {
        add_long_links(&mut base, 2 * m, level_one, m, &hubs);
    }
    times.links += started.elapsed().as_secs_f64();
    let mut graph = HnswGraph {
        m,
        top_levels,
        base,
        upper,
        entry_point,
    };
    let started = Instant::now();
    times.reachability = make_reachable(&mut graph, data, dim);
    times.reachability_secs = started.elapsed().as_secs_f64();
    times.links += times.reachability_secs;
    times.base_links = mean_base_links(&graph);
    Ok((graph, times))
}

/// The share of each sampled row's true `list_length(2·m)` nearest rows (exact search,
/// the row itself left out) that its kNN list holds, over `sample` rows spread evenly over
/// `data`: how much the k-means split loses before pruning. The lists are the build's own
/// (same seed, each row in `memberships` lists); a bench measures it, the build does not.
pub fn knn_list_recall(
    kernels: &dyn VectorKernels,
    data: &[f32],
    dim: usize,
    m: usize,
    memberships: usize,
    sample: usize,
) -> Result<f64> {
    if sample == 0 {
        return Ok(1.0);
    }
    knn_lists(kernels, data, dim, list_length(2 * m), LIST_SEED, memberships)?.recall(kernels, data, dim, sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knn_list_recall_is_one_for_exact_lists_and_below_for_split_ones() {
        let dim = 16;
        // Up to EXACT_MAX_ROWS rows the lists are exact; above, split into k-means lists.
        let small = crate::index::test_unit_vectors(500, dim);
        assert_eq!(
            knn_list_recall(&quarry_kernels::CpuKernels, &small, dim, 4, MEMBERSHIPS, 50).unwrap(),
            1.0
        );
        let large = crate::index::test_unit_vectors(knn_lists::EXACT_MAX_ROWS * 2, dim);
        let recall = knn_list_recall(&quarry_kernels::CpuKernels, &large, dim, 4, MEMBERSHIPS, 200).unwrap();
        assert!(recall > 0.3 && recall < 1.0, "kNN list recall {recall}");
    }

    #[test]
    fn a_row_in_more_lists_finds_more_of_its_true_neighbours() {
        let dim = 16;
        let data = crate::index::test_unit_vectors(knn_lists::EXACT_MAX_ROWS * 2, dim);
        let kernels = quarry_kernels::CpuKernels;
        let two = knn_list_recall(&kernels, &data, dim, 4, 2, 200).unwrap();
        let three = knn_list_recall(&kernels, &data, dim, 4, 3, 200).unwrap();
        assert!(three > two, "3 lists a row: {three}, 2: {two}");
    }

    #[test]
    fn neighbourhood_pruning_keeps_fewer_links_and_one_graph() {
        let (dim, rows, m) = (32, 12_000, 16);
        let data = crate::index::test_clustered_vectors(rows, dim);
        let options = GraphBuildOptions {
            memberships: 3,
            prune: GraphPrune::Neighbourhood,
        };
        let (graph, times) = build_hnsw_graph(&quarry_kernels::CpuKernels, &data, dim, m, 80, &options).unwrap();
        assert_eq!(graph.reached_on_the_base(graph.entry_point as usize), rows);
        assert!(
            times.base_links > 2.0 && times.base_links < (2 * m) as f64,
            "{}",
            times.base_links
        );
        let (detours, _) = build_hnsw_graph(
            &quarry_kernels::CpuKernels,
            &data,
            dim,
            m,
            80,
            &GraphBuildOptions::default(),
        )
        .unwrap();
        assert!(graph.base != detours.base, "the same base links either way");
        assert!(
            graph.top_levels == detours.top_levels,
            "the rows' levels do not depend on the base's pruning"
        );
    }

    #[test]
    fn the_base_level_is_one_graph_even_over_separate_clusters() {
        // 64 clusters: kNN lists alone stay inside each.
        let (dim, rows) = (32, 12_000);
        let data = crate::index::test_clustered_vectors(rows, dim);
        let (graph, times) = build_hnsw_graph(
            &quarry_kernels::CpuKernels,
            &data,
            dim,
            16,
            80,
            &GraphBuildOptions::default(),
        )
        .unwrap();
        assert_eq!(graph.rows(), rows);
        assert_eq!(graph.reached_on_the_base(graph.entry_point as usize), rows);
        assert!(graph.max_level() >= 2, "{}", graph.max_level());
        let top = graph.top_levels[graph.entry_point as usize] as usize;
        assert_eq!(top, graph.max_level(), "the entry point is on the top level");
        for (level, upper) in graph.upper.iter().enumerate() {
            assert!(
                upper.rows.windows(2).all(|w| w[0] < w[1]),
                "level {} rows ascend",
                level + 1
            );
            assert!(upper
                .rows
                .iter()
                .all(|&row| graph.top_levels[row as usize] as usize > level));
            assert!(upper
                .links
                .iter()
                .all(|&link| link == NO_LINK || graph.top_levels[link as usize] as usize > level));
        }
        let file = HnswFlatFile::new(&graph, &data, dim, 80, 48);
        let mut written = Vec::new();
        file.write_to(&mut written).unwrap();
        assert_eq!(written.len(), file.len());
        let links = faiss_file::read_hnsw_links(&written).unwrap();
        assert_eq!(links.entry_point, graph.entry_point);
        let kept = graph.base.iter().filter(|&&link| link != NO_LINK).count() as f64 / rows as f64;
        assert!(kept > 16.0 && kept <= 32.0, "{kept} base links a row");
        assert_eq!(links.mean_base_links(), kept);
        assert_eq!(times.base_links, kept);
        assert_eq!(links.max_level as usize, graph.max_level());
        let row = graph.upper[0].rows[3] as usize;
        let base: Vec<i32> = links.links(row, 0).collect();
        assert_eq!(
            base,
            graph.base[row * 32..(row + 1) * 32]
                .iter()
                .copied()
                .take_while(|&l| l != NO_LINK)
                .collect::<Vec<_>>()
        );
        let level_one: Vec<i32> = links.links(row, 1).collect();
        assert_eq!(
            level_one,
            graph.upper[0].links[3 * 16..4 * 16]
                .iter()
                .copied()
                .take_while(|&l| l != NO_LINK)
                .collect::<Vec<_>>()
        );
    }
}
