//! `bench-slice-merge [--queries N] [--slices S] [--k K] [--reps R]`: the host's share of a
//! GPU top-k, on the CPU alone. One launch leaves each of N queries S lists of its K best (one
//! per slice of the base, best first); the host turns them into each query's K best. Timed
//! two ways over the same seeded lists: every query's candidates sorted whole on one thread
//! (what the host did before), and `merge_slice_lists` (a linear merge of the sorted lists,
//! the queries on the thread pool). The defaults are one of the graph build's k-means lists:
//! about 4,100 rows searched against themselves, two slices, k = 128. Prints the median
//! milliseconds of each over R runs and checks that both give the same lists.

use std::time::Instant;

use quarry_kernels::{best_first, merge_slice_lists, Scored, EMPTY_ROW};

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn flag(name: &str, default: usize) -> anyhow::Result<usize> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|arg| arg == name) {
        Some(at) => Ok(args
            .get(at + 1)
            .ok_or_else(|| anyhow::anyhow!("{name} needs a value"))?
            .parse()?),
        None => Ok(default),
    }
}

/// Seeded lists as a launch writes them: each query's slices, K sorted places each.
fn launch_lists(queries: usize, slices: usize, k: usize) -> (Vec<f32>, Vec<u64>) {
    let mut state = 0x006d_6572_6765_u64;
    let (mut scores, mut rows) = (Vec::new(), Vec::new());
    for _ in 0..queries * slices {
        let mut hits: Vec<Scored> = (0..k)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                Scored {
                    row: (state >> 40) % 4_096,
                    score: (state >> 8) as u32 as f32 / u32::MAX as f32,
                }
            })
            .collect();
        hits.sort_by(best_first);
        hits.dedup_by_key(|hit| hit.row);
        hits.resize(
            k,
            Scored {
                row: EMPTY_ROW,
                score: f32::NEG_INFINITY,
            },
        );
        scores.extend(hits.iter().map(|hit| hit.score));
        rows.extend(hits.iter().map(|hit| hit.row));
    }
    (scores, rows)
}

/// Every query's candidates collected and sorted whole, on one thread.
fn sorted_whole(scores: &[f32], rows: &[u64], queries: usize, slices: usize, k: usize) -> Vec<Vec<Scored>> {
    (0..queries)
        .map(|query| {
            let range = query * slices * k..(query + 1) * slices * k;
            let mut list: Vec<Scored> = range
                .filter(|&i| rows[i] != EMPTY_ROW)
                .map(|i| Scored {
                    row: rows[i],
                    score: scores[i],
                })
                .collect();
            list.sort_by(best_first);
            list.truncate(k);
            list
        })
        .collect()
}

fn median_ms(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2] * 1e3
}

fn main() -> anyhow::Result<()> {
    let (queries, slices, k, reps) = (
        flag("--queries", 4_100)?,
        flag("--slices", 2)?,
        flag("--k", 128)?,
        flag("--reps", 21)?.max(1),
    );
    let (scores, rows) = launch_lists(queries, slices, k);
    let (mut whole, mut merged) = (Vec::new(), Vec::new());
    let (mut whole_secs, mut merge_secs) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let started = Instant::now();
        whole = sorted_whole(&scores, &rows, queries, slices, k);
        whole_secs.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        merged = vec![Vec::new(); queries];
        merge_slice_lists(&mut merged, &scores, &rows, slices, k);
        merge_secs.push(started.elapsed().as_secs_f64());
    }
    anyhow::ensure!(whole == merged, "the merge and the sort disagree");
    println!(
        "{queries} queries, {slices} slices of k = {k}, {} threads, median of {reps}: sorted whole on one thread {:.2} ms, merge_slice_lists {:.2} ms",
        rayon::current_num_threads(),
        median_ms(whole_secs),
        median_ms(merge_secs)
    );
    Ok(())
}
