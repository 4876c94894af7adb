//! Long links on the base level. kNN lists stay inside a cluster of the data, and a search
//! that the greedy descent drops into the wrong cluster must be able to leave it on the
//! base level (FAISS's insertion leaves such links on every row: its neighbour heuristic
//! keeps the far rows that no nearer kept row covers). The level-1 links, from FAISS's own
//! insertion, cross between clusters: the rows of level 1 carry theirs onto the base level,
//! and every other row inherits a few of those of its nearest level-1 row, each row a
//! different few.

use rayon::prelude::*;

use super::hnsw_graph::{UpperLevel, NO_LINK};
use super::knn_lists::{KnnLists, NO_ROW};
use super::row_bits::{place_once, words_for};

/// Base slots a row of level 0 gives to inherited long links: a sixteenth of its `degree`
/// (4 of HNSW32's 64), one from 8 slots, none below. Measured (bench/RESULTS.md): where the
/// data falls into many separate clusters they lift recall@10 at efSearch 16 from 0.87 to
/// 0.91; where it does not, the near links they displace cost nothing measurable, and an
/// eighth or a quarter of the slots began to cost recall there.
pub fn inherited_slots(degree: usize) -> usize {
    match degree {
        0..8 => 0,
        _ => (degree / 16).max(1),
    }
}

/// Each row's nearest row of level 1 in its kNN list ([`NO_ROW`] for none, and for the rows
/// of level 1 themselves, which carry their own).
pub fn nearest_hubs(lists: &KnnLists, top_levels: &[u8]) -> Vec<u32> {
    let k = lists.k.max(1);
    lists
        .ids
        .par_chunks(k)
        .zip(top_levels)
        .map(|(list, &top)| match top {
            0 => list
                .iter()
                .copied()
                .find(|&id| id != NO_ROW && top_levels[id as usize] >= 1)
                .unwrap_or(NO_ROW),
            _ => NO_ROW,
        })
        .collect()
}

/// Gives the rows of level 1 their level-1 links on the base level as well (the first half
/// of their base slots keep their own nearest links, the level-1 links come next, the rest
/// of their own fill what is left), and every row with a hub (see [`nearest_hubs`])
/// [`inherited_slots`] of its hub's level-1 links in place of its last own links.
pub fn add_long_links(base: &mut [i32], degree: usize, level_one: &UpperLevel, m: usize, hubs: &[u32]) {
    let rows = base.len() / degree.max(1);
    let long_of = |hub: u32| -> Option<&[i32]> {
        let at = level_one.rows.binary_search(&hub).ok()?;
        let links = &level_one.links[at * m..(at + 1) * m];
        Some(&links[..links.iter().position(|&l| l == NO_LINK).unwrap_or(m)])
    };
    let mut merging = Merging::new(rows);
    for (i, &row) in level_one.rows.iter().enumerate() {
        let long = &level_one.links[i * m..(i + 1) * m];
        merging.merge(&mut base[row as usize * degree..][..degree], degree / 2, long);
    }
    let inherited = inherited_slots(degree);
    if inherited == 0 {
        return;
    }
    base.par_chunks_mut(degree).zip(hubs).enumerate().for_each_init(
        || (Merging::new(rows), Vec::with_capacity(inherited)),
        |(merging, picked), (row, (slots, &hub))| {
            let Some(long) = (hub != NO_ROW)
                .then(|| long_of(hub))
                .flatten()
                .filter(|long| !long.is_empty())
            else {
                return;
            };
            // Each row of the hub's cluster takes a different run of its long links.
            let start = row % long.len();
            picked.clear();
            picked.extend(
                long[start..]
                    .iter()
                    .chain(&long[..start])
                    .copied()
                    .filter(|&link| link as usize != row)
                    .take(inherited),
            );
            let own_len = slots.iter().position(|&l| l == NO_LINK).unwrap_or(degree);
            let keep = own_len.min(degree - picked.len());
            merging.merge(slots, keep, picked);
        },
    );
}

/// What a row's merge of links needs besides its slots: a bit per row (all clear between
/// merges) and room for its own links while they are rewritten.
struct Merging {
    seen: Vec<u64>,
    own: Vec<i32>,
}

impl Merging {
    fn new(rows: usize) -> Self {
        Self {
            seen: vec![0; words_for(rows)],
            own: Vec::new(),
        }
    }

    /// Rewrites `slots`: their first `first` links, then `inserted`, then the rest of their
    /// own, each link once, cut to the slots and padded with [`NO_LINK`].
    fn merge(&mut self, slots: &mut [i32], first: usize, inserted: &[i32]) {
        self.own.clear();
        self.own.extend_from_slice(slots);
        let first = first.min(slots.len());
        let links = self.own[..first].iter().chain(inserted).chain(&self.own[first..]);
        let filled = place_once(slots, links.copied().filter(|&link| link != NO_LINK), &mut self.seen);
        slots[filled..].fill(NO_LINK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge [`Merging::merge`] makes, by searching the links placed so far.
    fn merge_by_search(slots: &mut [i32], first: usize, inserted: &[i32]) {
        let own: Vec<i32> = slots.to_vec();
        let degree = slots.len();
        let mut filled = 0;
        for &link in own[..first.min(degree)]
            .iter()
            .chain(inserted)
            .chain(&own[first.min(degree)..])
        {
            if link != NO_LINK && filled < degree && !slots[..filled].contains(&link) {
                slots[filled] = link;
                filled += 1;
            }
        }
        slots[filled..].fill(NO_LINK);
    }

    #[test]
    fn a_merge_keeps_each_link_once_in_the_order_a_search_would() {
        let rows = 200u64;
        let mut state = 0x6d65_7267_u64;
        let next = |state: &mut u64, below: u64| {
            *state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (*state >> 33) % below
        };
        let mut merging = Merging::new(rows as usize);
        for case in 0..500 {
            // Links drawn from few rows (so repeated), with empty places among them.
            let degree = 1 + next(&mut state, 40) as usize;
            let from = if case % 2 == 0 { 12 } else { rows };
            let link = |state: &mut u64| match next(state, 8) {
                0 => NO_LINK,
                _ => next(state, from) as i32,
            };
            let slots: Vec<i32> = (0..degree).map(|_| link(&mut state)).collect();
            let inserted: Vec<i32> = (0..next(&mut state, 10)).map(|_| link(&mut state)).collect();
            let first = next(&mut state, degree as u64 + 3) as usize;
            let (mut merged, mut expected) = (slots.clone(), slots);
            merging.merge(&mut merged, first, &inserted);
            merge_by_search(&mut expected, first, &inserted);
            assert_eq!(merged, expected, "case {case}");
        }
        assert!(merging.seen.iter().all(|&word| word == 0), "every bit cleared");
    }

    #[test]
    fn level_one_rows_carry_their_links_and_the_others_inherit_a_few() {
        // 16 rows, 8 base slots (one inherited), level 1 = rows 2 and 9, m = 4.
        let (degree, m) = (8, 4);
        let mut base: Vec<i32> = (0..16).flat_map(|row| (1..=8).map(move |d| (row + d) % 16)).collect();
        let level_one = UpperLevel {
            rows: vec![2, 9],
            links: vec![9, 12, 14, NO_LINK, 2, 4, NO_LINK, NO_LINK],
        };
        let mut top_levels = vec![0u8; 16];
        (top_levels[2], top_levels[9]) = (1, 1);
        #[rustfmt::skip]
        let lists = KnnLists { k: 3, ids: vec![
            1, 2, 3,    2, 0, 4,    1, 3, 0,    2, 4, 1,
            5, 6, 7,    6, 4, 9,    5, 7, 4,    6, 8, 5,
            9, 7, 6,    8, 10, 7,   9, 11, 8,   10, 12, 9,
            11, 13, 10, 12, 14, 11, 13, 15, 12, 14, NO_ROW, NO_ROW,
        ]};
        let hubs = nearest_hubs(&lists, &top_levels);
        assert_eq!(
            &hubs[..6],
            &[2, 2, NO_ROW, 2, NO_ROW, 9],
            "the level-1 rows and rows without one have none"
        );
        assert_eq!(hubs[15], NO_ROW);
        add_long_links(&mut base, degree, &level_one, m, &hubs);
        let links = |row: usize| base[row * degree..(row + 1) * degree].to_vec();
        // Row 2 keeps its 4 nearest, then its level-1 links, then its own again.
        assert_eq!(links(2), vec![3, 4, 5, 6, 9, 12, 14, 7]);
        // Rows 0 and 1 each take a different one of row 2's long links, in their last slot;
        // row 5 one of row 9's.
        assert_eq!(links(0), vec![1, 2, 3, 4, 5, 6, 7, 9]);
        assert_eq!(links(1), vec![2, 3, 4, 5, 6, 7, 8, 12]);
        assert_eq!(links(5), vec![6, 7, 8, 9, 10, 11, 12, 4]);
        // Row 3 would take 9, which it links already: it keeps its own.
        assert_eq!(links(3), (4..12).collect::<Vec<i32>>());
        // A row without a hub keeps its own links.
        assert_eq!(links(15), (1..=8).map(|d| (15 + d) % 16).collect::<Vec<i32>>());
    }
}
