//! The parts of a base level whose rows reach each other (strongly connected components).
//! Nearly always the whole level is one part, or one large part holds all but a few rows; so
//! the part of the entry point is found first, in parallel: the rows it reaches (a walk out
//! from it, a frontier at a time) that also reach it (rows marked as soon as one of their
//! links is, pass after pass). Only the rows outside it go through Tarjan's algorithm, which
//! is serial, and a build finds the parts at least twice (once more after linking parts,
//! once more after linking copies): bench/RESULTS.md has the times.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use super::hnsw_graph::NO_LINK;

/// Passes that mark the rows reaching the entry point before giving that up to Tarjan's
/// algorithm over every row (a level shaped like a long chain would need one pass a link).
const MAX_PASSES: usize = 64;

/// The strongly connected components of the base level.
pub(super) struct Components {
    /// Each row's component.
    pub of: Vec<u32>,
    pub count: usize,
}

const UNSEEN: u32 = u32::MAX;

/// The parts of `base` (`degree` slots a row, [`NO_LINK`] padding): the part of `entry` is
/// part 0 (unless the passes did not settle: then every part is Tarjan's).
pub(super) fn strong_components(base: &[i32], degree: usize, entry: usize) -> Components {
    let rows = base.len() / degree.max(1);
    let mut of = vec![UNSEEN; rows];
    let mut count = 0;
    if entry < rows {
        if let Some(main) = part_of_entry(base, degree, entry) {
            for (row, part) in of.iter_mut().enumerate() {
                if main.has(row) {
                    *part = 0;
                }
            }
            count = 1;
        }
    }
    tarjan_of_the_rest(base, degree, &mut of, &mut count);
    Components { of, count }
}

/// One bit per row, set from many threads.
struct RowBits(Vec<AtomicU64>);

impl RowBits {
    fn new(rows: usize) -> Self {
        Self((0..rows.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    fn has(&self, row: usize) -> bool {
        self.0[row / 64].load(Ordering::Relaxed) & (1 << (row % 64)) != 0
    }

    /// Sets `row`'s bit; whether this call set it.
    fn set(&self, row: usize) -> bool {
        let bit = 1 << (row % 64);
        self.0[row / 64].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }
}

/// The rows of `entry`'s part: those it reaches that reach it; None if the rows reaching it
/// were still growing after [`MAX_PASSES`] passes.
fn part_of_entry(base: &[i32], degree: usize, entry: usize) -> Option<RowBits> {
    let rows = base.len() / degree.max(1);
    let links = |row: usize| {
        base[row * degree..(row + 1) * degree]
            .iter()
            .take_while(|&&link| link != NO_LINK)
            .map(|&link| link as usize)
    };
    let reached = RowBits::new(rows);
    reached.set(entry);
    let mut frontier = vec![entry];
    while !frontier.is_empty() {
        frontier = frontier
            .par_iter()
            .flat_map_iter(|&row| links(row).filter(|&to| !reached.has(to) && reached.set(to)))
            .collect();
    }
    // Rows reaching the entry point: marked once a link of theirs is. A row's mark within
    // a pass is seen by the rows after it, so a pass often carries a mark many links on.
    let reaching = RowBits::new(rows);
    reaching.set(entry);
    for _ in 0..MAX_PASSES {
        let grew = AtomicBool::new(false);
        (0..rows).into_par_iter().with_min_len(4_096).for_each(|row| {
            if !reaching.has(row) && links(row).any(|to| reaching.has(to)) {
                reaching.set(row);
                grew.store(true, Ordering::Relaxed);
            }
        });
        if !grew.into_inner() {
            // Both: the entry point's part.
            for (both, forward) in reaching.0.iter().zip(&reached.0) {
                both.fetch_and(forward.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            return Some(reaching);
        }
    }
    None
}

/// Tarjan's algorithm, iteratively (a million rows would overflow a recursion), over the rows
/// of `of` still [`UNSEEN`] and the links between them; their parts numbered from `count`.
fn tarjan_of_the_rest(base: &[i32], degree: usize, of: &mut [u32], count: &mut usize) {
    let rows = of.len();
    let outside: Vec<bool> = of.iter().map(|&part| part == UNSEEN).collect();
    let mut index = vec![UNSEEN; rows];
    let mut low = vec![0u32; rows];
    let mut on_stack = vec![false; rows];
    let mut stack: Vec<u32> = Vec::new();
    // (row, next slot to follow)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    let links = |row: u32, slot: usize| -> Option<Option<u32>> {
        (slot < degree)
            .then(|| base[row as usize * degree + slot])
            .filter(|&link| link != NO_LINK)
            .map(|link| outside[link as usize].then_some(link as u32))
    };
    for root in (0..rows as u32).filter(|&root| outside[root as usize]) {
        if index[root as usize] != UNSEEN {
            continue;
        }
        calls.push((root, 0));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (row, ref mut slot)) = calls.last_mut() {
            if let Some(link) = links(row, *slot) {
                *slot += 1;
                let Some(to) = link else {
                    continue;
                };
                if index[to as usize] == UNSEEN {
                    index[to as usize] = next_index;
                    low[to as usize] = next_index;
                    next_index += 1;
                    stack.push(to);
                    on_stack[to as usize] = true;
                    calls.push((to, 0));
                } else if on_stack[to as usize] {
                    low[row as usize] = low[row as usize].min(index[to as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[row as usize]);
            }
            if low[row as usize] == index[row as usize] {
                while let Some(member) = stack.pop() {
                    on_stack[member as usize] = false;
                    of[member as usize] = *count as u32;
                    if member == row {
                        break;
                    }
                }
                *count += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row's part by Tarjan's algorithm over every row (no entry point first).
    fn tarjan_alone(base: &[i32], degree: usize) -> Components {
        let mut of = vec![UNSEEN; base.len() / degree];
        let mut count = 0;
        tarjan_of_the_rest(base, degree, &mut of, &mut count);
        Components { of, count }
    }

    /// Two rows are in one part for `a` exactly when they are for `b`.
    fn same_partition(a: &Components, b: &Components) -> bool {
        let mut map = std::collections::HashMap::new();
        a.count == b.count && a.of.iter().zip(&b.of).all(|(&x, &y)| *map.entry(x).or_insert(y) == y)
    }

    /// Rows in clusters of `size`, each row linked to the next row of its cluster (a ring)
    /// and to `links - 1` others of it drawn at random, plus a link from cluster c's first row
    /// to cluster c + 1's (so each cluster is a part, reached from the one before it and not
    /// back) and `back` clusters linking back to cluster 0; row numbers shuffled, seeded.
    fn clusters(count: usize, size: usize, links: usize, back: &[usize], seed: u64) -> (Vec<i32>, usize) {
        let rows = count * size;
        let degree = links + 2;
        let mut order: Vec<usize> = (0..rows).collect();
        let mut state = seed;
        for i in (1..rows).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (state >> 33) as usize % (i + 1));
        }
        let mut base = vec![NO_LINK; rows * degree];
        for c in 0..count {
            for i in 0..size {
                let row = order[c * size + i];
                let slots = &mut base[row * degree..(row + 1) * degree];
                for (slot, step) in slots.iter_mut().zip(1..=links) {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let other = if step == 1 { i + 1 } else { (state >> 33) as usize };
                    *slot = order[c * size + other % size] as i32;
                }
                if i == 0 && c + 1 < count {
                    slots[links] = order[(c + 1) * size] as i32;
                }
                if i == 0 && back.contains(&c) {
                    slots[links + 1] = order[0] as i32;
                }
            }
        }
        (base, degree)
    }

    #[test]
    fn the_entry_points_part_first_then_tarjan_gives_tarjans_parts() {
        for (count, size, back) in [(1, 500, vec![]), (5, 300, vec![]), (6, 200, vec![3]), (4, 97, vec![3])] {
            let (base, degree) = clusters(count, size, 3, &back, 9);
            let alone = tarjan_alone(&base, degree);
            for entry in [0, base.len() / degree - 1, 137] {
                assert!(part_of_entry(&base, degree, entry).is_some(), "the passes settle");
                let parts = strong_components(&base, degree, entry);
                assert!(same_partition(&parts, &alone), "{count} clusters, entry {entry}");
                assert_eq!(parts.of[entry], 0, "the entry point's part is part 0");
            }
        }
        // Clusters 0..=3 reach each other through cluster 3's link back: one part of 4·200
        // rows and two of 200 (clusters 4 and 5).
        let (base, degree) = clusters(6, 200, 3, &[3], 9);
        let parts = strong_components(&base, degree, 0);
        let mut sizes = vec![0; parts.count];
        parts.of.iter().for_each(|&part| sizes[part as usize] += 1);
        sizes.sort_unstable();
        assert_eq!(sizes, [200, 200, 800]);
    }

    #[test]
    fn a_chain_longer_than_the_passes_falls_back_to_tarjan_alone() {
        // Row i links to row i + 1, the last row to row 0: one ring. A pass scans the rows
        // upwards, so it marks one more row reaching row 0 (the one before the last marked):
        // the passes give up, and Tarjan's algorithm finds the one part.
        let rows = 3 * MAX_PASSES;
        let base: Vec<i32> = (0..rows).map(|i| ((i + 1) % rows) as i32).collect();
        let entry = 0;
        assert!(part_of_entry(&base, 1, entry).is_none());
        let parts = strong_components(&base, 1, entry);
        assert_eq!(parts.count, 1);
        assert!(same_partition(&parts, &tarjan_alone(&base, 1)));
    }
}
