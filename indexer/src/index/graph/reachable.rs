//! A base level every row of which reaches every other. kNN lists stay inside a cluster,
//! and the links that cross between clusters come from level 1 (see [`super::long_links`]):
//! where no row of level 1 elsewhere links into a cluster, no search finds its rows but one
//! that starts there, and where none of a cluster's rows links out, a search that the
//! descent drops there never leaves (on clustered vectors: a whole cluster of about 90 rows
//! in 7,500, whose queries found none of their neighbours at any breadth). The parts that
//! link only among themselves (strongly connected components) get
//! what they lack: a part no other part links into, a link in from the row of level 1
//! nearest it in the part of the entry point; a part that links into no other, a link out to
//! such a row. The parts come from [`super::strong_parts`].

use std::sync::atomic::{AtomicBool, Ordering};

use quarry_kernels::dot;
use rayon::prelude::*;

use super::hnsw_graph::{HnswGraph, NO_LINK};
use super::orphans::{incoming_links, link_orphans};
use super::strong_parts::strong_components;

/// What [`make_reachable`] changed.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Reachability {
    /// Rows no other row linked to, given a link from a row they link to.
    pub orphans: usize,
    /// Links added into parts that no other part linked into.
    pub links_in: usize,
    /// Links added out of parts that linked into no other.
    pub links_out: usize,
}

/// Rows of level 1 scored to find the one nearest a part (spread over them).
const HUBS_SCORED: usize = 4_096;
/// Rounds of linking: a link put in place of another can cut what only that one joined.
const MAX_ROUNDS: usize = 8;

/// Gives the rows of `graph`'s base level that no row links to a link ([`link_orphans`]),
/// then links the parts that link only among themselves to the part of the entry point
/// (through its rows of level 1 nearest them by inner product over `data`, row-major, `dim`
/// columns; the entry point itself where no row is on level 1), until every row reaches
/// every other.
pub fn make_reachable(graph: &mut HnswGraph, data: &[f32], dim: usize) -> Reachability {
    let degree = 2 * graph.m;
    let rows = graph.rows();
    let mut changed = Reachability {
        orphans: link_orphans(&mut graph.base, degree),
        ..Reachability::default()
    };
    if rows == 0 || degree == 0 {
        return changed;
    }
    let level_one: Vec<usize> = match graph.upper.first() {
        Some(level) => level.rows.iter().map(|&row| row as usize).collect(),
        None => vec![graph.entry_point as usize],
    };
    let row = |r: usize| &data[r * dim..(r + 1) * dim];
    for _ in 0..MAX_ROUNDS {
        let parts = strong_components(&graph.base, degree, graph.entry_point as usize);
        let main = parts.of[graph.entry_point as usize];
        if parts.count == 1 {
            break;
        }
        // Which parts link into another, and which another links into (every link looked
        // at, in parallel: the flags are set only by the few links between parts).
        let flags = || (0..parts.count).map(|_| AtomicBool::new(false)).collect::<Vec<_>>();
        let (links_out, linked_into) = (flags(), flags());
        graph
            .base
            .par_chunks_exact(degree)
            .enumerate()
            .for_each(|(from, slots)| {
                for &to in slots.iter().take_while(|&&link| link != NO_LINK) {
                    let (a, b) = (parts.of[from], parts.of[to as usize]);
                    if a != b {
                        links_out[a as usize].store(true, Ordering::Relaxed);
                        linked_into[b as usize].store(true, Ordering::Relaxed);
                    }
                }
            });
        let flag = |flags: &[AtomicBool], part: usize| flags[part].load(Ordering::Relaxed);
        let hubs: Vec<usize> = level_one.iter().copied().filter(|&hub| parts.of[hub] == main).collect();
        let stride = hubs.len().div_ceil(HUBS_SCORED).max(1);
        // Each part that lacks a way in or out, by its first row, with the nearest hub.
        let mut first_row = vec![u32::MAX; parts.count];
        for r in (0..rows).rev() {
            first_row[parts.of[r] as usize] = r as u32;
        }
        let needy: Vec<(usize, bool, bool)> = (0..parts.count)
            .filter(|&part| part != main as usize && (!flag(&links_out, part) || !flag(&linked_into, part)))
            .map(|part| {
                let (into, out) = (flag(&linked_into, part), flag(&links_out, part));
                (first_row[part] as usize, !into, !out)
            })
            .collect();
        let nearest: Vec<usize> = needy
            .par_iter()
            .map(|&(first, _, _)| {
                hubs.iter()
                    .step_by(stride)
                    .map(|&hub| (dot(row(hub), row(first)), hub))
                    .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
                    .map_or(graph.entry_point as usize, |(_, hub)| hub)
            })
            .collect();
        let mut incoming = incoming_links(&graph.base, rows);
        for (&(first, needs_in, needs_out), &hub) in needy.iter().zip(&nearest) {
            if needs_in {
                link_into(&mut graph.base, degree, &mut incoming, &parts.of, hub, first);
                changed.links_in += 1;
            }
            if needs_out {
                link_into(&mut graph.base, degree, &mut incoming, &parts.of, first, hub);
                changed.links_out += 1;
            }
        }
    }
    changed
}

/// Puts a link from `from` to `to` in `from`'s first free slot, else in place of its last
/// link that stays inside `from`'s part to a row with another link to it (else of its last
/// link to a row with another; else of its last link), keeping `incoming` (each row's links
/// to it) up to date. A link added before to join another part is thus not the one given up.
fn link_into(base: &mut [i32], degree: usize, incoming: &mut [u32], part_of: &[u32], from: usize, to: usize) {
    let slots = &mut base[from * degree..(from + 1) * degree];
    if slots.contains(&(to as i32)) {
        return;
    }
    let shared = |link: i32| incoming[link as usize] >= 2;
    let at = slots
        .iter()
        .position(|&link| link == NO_LINK)
        .or_else(|| {
            slots
                .iter()
                .rposition(|&link| shared(link) && part_of[link as usize] == part_of[from])
        })
        .or_else(|| slots.iter().rposition(|&link| shared(link)))
        .unwrap_or(degree - 1);
    if slots[at] != NO_LINK {
        incoming[slots[at] as usize] -= 1;
    }
    slots[at] = to as i32;
    incoming[to] += 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::graph::UpperLevel;

    #[test]
    fn parts_that_link_only_among_themselves_are_linked_in_and_out_through_the_nearest_hub() {
        // Rows 0-2 link among themselves (rows 1 and 2 on level 1, row 2's vector the nearer
        // to rows 3-6); rows 3-4 only to each other; rows 5-6 to each other and out to row 0,
        // which no row of theirs is linked from.
        let data = [1.0, 0.0, 0.8, 0.6, 0.6, 0.8, 0.0, 1.0, 0.1, 0.99, 0.2, 0.98, 0.3, 0.95];
        #[rustfmt::skip]
        let mut graph = HnswGraph {
            m: 1,
            top_levels: vec![0, 1, 1, 0, 0, 0, 0],
            base: vec![
                1, 2,
                0, 2,
                1, 0,
                4, NO_LINK,
                3, NO_LINK,
                6, 0,
                5, NO_LINK,
            ],
            upper: vec![UpperLevel { rows: vec![1, 2], links: vec![2, 1] }],
            entry_point: 1,
        };
        assert_eq!(strong_components(&graph.base, 2, 1).count, 3);
        let changed = make_reachable(&mut graph, &data, 2);
        assert_eq!(
            changed,
            Reachability {
                orphans: 0,
                links_in: 2,
                links_out: 1
            }
        );
        assert_eq!(strong_components(&graph.base, 2, 1).count, 1);
        for start in 0..7 {
            assert_eq!(graph.reached_on_the_base(start), 7, "from row {start}");
        }
        // Row 3 (the first of its part) links out to row 2, in its free slot.
        assert_eq!(&graph.base[6..8], &[4, 2]);
        // One part linked in and out: nothing more to do.
        let before = graph.clone();
        assert_eq!(make_reachable(&mut graph, &data, 2), Reachability::default());
        assert_eq!(graph, before);
    }
}
