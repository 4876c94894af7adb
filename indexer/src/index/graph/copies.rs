//! Rows that hold the very same vector (the same chunk text in many documents: a title, a
//! footer, a line of boilerplate), found before the graph is built. Copies would fill each
//! other's kNN lists (every copy is every other's nearest row, ties all), so that a large
//! group links mostly within itself and few searches find their way in or out. The graph is
//! built over one row of each group; every copy then gets a ring through its group and that
//! row's links ([`Copies::expand`]), so that a search that reaches one copy reaches the rest.

use rayon::prelude::*;

use super::hnsw_graph::{HnswGraph, UpperLevel, NO_LINK};

/// The rows of a matrix grouped by identical vectors (bit for bit).
#[derive(Debug, Clone, PartialEq)]
pub struct Copies {
    /// Each group's first row, ascending: the rows the graph is built over.
    pub distinct: Vec<u32>,
    /// Each row's group (its place in `distinct`).
    pub group_of: Vec<u32>,
    /// The next row of its group after each row (the group's first after its last; a row
    /// alone is its own next).
    next: Vec<u32>,
    /// The row before each row in its group, the same way round.
    previous: Vec<u32>,
    /// How many rows each group holds.
    sizes: Vec<u32>,
}

/// A row's hash, over its bytes: rows with the same hash are then compared in full.
fn row_hash(row: &[f32]) -> u64 {
    row.iter().fold(0x243f_6a88_85a3_08d3u64, |hash, &x| {
        (hash.rotate_left(5) ^ u64::from(x.to_bits())).wrapping_mul(0x517c_c1b7_2722_0a95)
    })
}

/// Whether two rows hold the same bits.
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The groups of identical rows of `data` (row-major, `dim` columns), or None when every row
/// is distinct.
pub fn find_copies(data: &[f32], dim: usize) -> Option<Copies> {
    let rows = data.len() / dim.max(1);
    let row = |r: u32| &data[r as usize * dim..(r as usize + 1) * dim];
    let mut keyed: Vec<(u64, u32)> = (0..rows as u32)
        .into_par_iter()
        .map(|r| (row_hash(row(r)), r))
        .collect();
    keyed.par_sort_unstable();
    // Each row's group leader: the first row of its hash run with the same bits.
    let mut leader: Vec<u32> = (0..rows as u32).collect();
    let mut any = false;
    for run in keyed.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        // Rows ascend within a run; a run of distinct rows with one hash is rare, so each row
        // is compared with the leaders found so far.
        let mut leaders: Vec<u32> = Vec::new();
        for &(_, r) in run {
            match leaders.iter().find(|&&l| same_bits(row(l), row(r))) {
                Some(&l) => {
                    leader[r as usize] = l;
                    any = true;
                }
                None => leaders.push(r),
            }
        }
    }
    if !any {
        return None;
    }
    let mut group_of = vec![0u32; rows];
    let mut distinct = Vec::new();
    let mut sizes = Vec::new();
    // Rows in order, so a group's first row (its leader) comes before its copies.
    let mut last_of = Vec::new();
    let mut next: Vec<u32> = (0..rows as u32).collect();
    let mut previous = next.clone();
    for r in 0..rows {
        let l = leader[r] as usize;
        if l == r {
            group_of[r] = distinct.len() as u32;
            distinct.push(r as u32);
            sizes.push(1);
            last_of.push(r as u32);
        } else {
            let group = group_of[l] as usize;
            group_of[r] = group as u32;
            sizes[group] += 1;
            let last = last_of[group];
            next[last as usize] = r as u32;
            previous[r] = last;
            next[r] = l as u32;
            previous[l] = r as u32;
            last_of[group] = r as u32;
        }
    }
    Some(Copies {
        distinct,
        group_of,
        next,
        previous,
        sizes,
    })
}

impl Copies {
    /// How many rows are copies of an earlier row.
    pub fn copies(&self) -> usize {
        self.group_of.len() - self.distinct.len()
    }

    /// `graph`, built over the [`Self::distinct`] rows, as the graph of every row: each row
    /// of a group first links to the next and the previous row of its group, then to what its
    /// group's first row links to, as far as its `2·M` base slots go; copies stay on the base
    /// level, and the levels above keep their rows (the groups' first rows). The links a
    /// group's first row gives up for its ring may have been the only way to some row:
    /// [`super::make_reachable`] after this links them again.
    pub fn expand(&self, graph: HnswGraph) -> HnswGraph {
        let degree = 2 * graph.m;
        let rows = self.group_of.len();
        let original = |link: i32| match link {
            NO_LINK => NO_LINK,
            link => self.distinct[link as usize] as i32,
        };
        let mut base = vec![NO_LINK; rows * degree];
        base.par_chunks_mut(degree.max(1)).enumerate().for_each(|(row, slots)| {
            let group = self.group_of[row] as usize;
            let mut ring = Vec::with_capacity(2);
            if self.sizes[group] >= 2 {
                ring.push(self.next[row] as i32);
            }
            if self.sizes[group] >= 3 {
                ring.push(self.previous[row] as i32);
            }
            let shared = graph.base[group * degree..(group + 1) * degree]
                .iter()
                .take_while(|&&link| link != NO_LINK)
                .map(|&link| original(link));
            for (slot, link) in slots.iter_mut().zip(ring.into_iter().chain(shared)) {
                *slot = link;
            }
        });
        let mut top_levels = vec![0u8; rows];
        for (&row, &top) in self.distinct.iter().zip(&graph.top_levels) {
            top_levels[row as usize] = top;
        }
        let upper = graph
            .upper
            .into_iter()
            .map(|level| UpperLevel {
                rows: level.rows.iter().map(|&row| self.distinct[row as usize]).collect(),
                links: level.links.into_iter().map(original).collect(),
            })
            .collect();
        HnswGraph {
            m: graph.m,
            top_levels,
            base,
            upper,
            entry_point: original(graph.entry_point),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_rows_form_groups_whose_first_row_stands_for_them() {
        let dim = 4;
        let mut data = crate::index::test_unit_vectors(8, dim);
        // Rows 5 and 7 are copies of row 1; row 6 of row 3; a row one bit off is not a copy.
        for (copy, of) in [(5, 1), (7, 1), (6, 3)] {
            let source = data[of * dim..(of + 1) * dim].to_vec();
            data[copy * dim..(copy + 1) * dim].copy_from_slice(&source);
        }
        let near_copy = data[2 * dim..3 * dim].to_vec();
        data[4 * dim..5 * dim].copy_from_slice(&near_copy);
        data[4 * dim] = f32::from_bits(data[4 * dim].to_bits() ^ 1);
        let copies = find_copies(&data, dim).expect("copies");
        assert_eq!(copies.distinct, [0, 1, 2, 3, 4]);
        assert_eq!(copies.group_of, [0, 1, 2, 3, 4, 1, 3, 1]);
        assert_eq!(copies.copies(), 3);
        assert_eq!((copies.next[1], copies.next[5], copies.next[7]), (5, 7, 1));
        assert_eq!((copies.previous[1], copies.previous[5], copies.previous[7]), (7, 1, 5));
        assert_eq!((copies.next[3], copies.next[6], copies.next[0]), (6, 3, 0));
        assert!(find_copies(&crate::index::test_unit_vectors(500, dim), dim).is_none());
    }

    #[test]
    fn every_copy_links_through_its_group_and_shares_its_first_rows_links() {
        // Rows 0, 2, 3 are one vector, 1 and 4 distinct: the graph over rows 0, 1, 4.
        let dim = 4;
        let mut data = crate::index::test_unit_vectors(5, dim);
        for copy in [2, 3] {
            let source = data[..dim].to_vec();
            data[copy * dim..(copy + 1) * dim].copy_from_slice(&source);
        }
        let copies = find_copies(&data, dim).unwrap();
        assert_eq!(copies.distinct, [0, 1, 4]);
        let graph = HnswGraph {
            m: 2,
            top_levels: vec![0, 1, 0],
            // distinct 0 → 1, 2; 1 → 0; 2 → 1, 0
            base: vec![
                1, 2, NO_LINK, NO_LINK, 0, NO_LINK, NO_LINK, NO_LINK, 1, 0, NO_LINK, NO_LINK,
            ],
            upper: vec![UpperLevel {
                rows: vec![1],
                links: vec![NO_LINK, NO_LINK],
            }],
            entry_point: 1,
        };
        let all = copies.expand(graph);
        assert_eq!(all.rows(), 5);
        assert_eq!(all.top_levels, [0, 1, 0, 0, 0]);
        assert_eq!(all.entry_point, 1);
        assert_eq!(all.upper[0].rows, [1]);
        let links = |row: usize| all.base[row * 4..(row + 1) * 4].to_vec();
        // Row 0: next 2, previous 3, then distinct 0's links (rows 1 and 4) as far as 4 go.
        assert_eq!(links(0), [2, 3, 1, 4]);
        assert_eq!(links(2), [3, 0, 1, 4]);
        assert_eq!(links(3), [0, 2, 1, 4]);
        assert_eq!(links(1), [0, NO_LINK, NO_LINK, NO_LINK]);
        assert_eq!(links(4), [1, 0, NO_LINK, NO_LINK]);
    }
}
