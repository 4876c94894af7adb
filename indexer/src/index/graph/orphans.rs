//! Rows that no other row links to on the base level. Pruning keeps each row's links that
//! few detours replace, and a row can end up in no one's kept links: a search then finds it
//! only if it starts there, whatever its breadth (on clustered vectors about one row in 80
//! was such a row, and the queries whose true neighbours they were got none of them). Each
//! such row is given one link from its nearest linked row: a free slot there, else the slot
//! of a link whose row has another link to it.

use super::hnsw_graph::NO_LINK;

/// Links every row of `base` (`degree` slots a row, [`NO_LINK`] after a row's last link)
/// that no other row links to from one of the rows it links to, nearest first; returns how
/// many rows were so linked. No row loses its last incoming link on the way.
pub fn link_orphans(base: &mut [i32], degree: usize) -> usize {
    if degree == 0 {
        return 0;
    }
    let rows = base.len() / degree;
    let mut incoming = incoming_links(base, rows);
    let orphans: Vec<usize> = (0..rows).filter(|&row| incoming[row] == 0).collect();
    let mut linked = 0;
    for orphan in orphans {
        let own: Vec<i32> = base[orphan * degree..(orphan + 1) * degree]
            .iter()
            .copied()
            .take_while(|&link| link != NO_LINK)
            .collect();
        for near in own {
            let slots = &mut base[near as usize * degree..(near as usize + 1) * degree];
            let place = slots
                .iter()
                .position(|&link| link == NO_LINK)
                .or_else(|| slots.iter().rposition(|&link| incoming[link as usize] >= 2));
            if let Some(at) = place {
                if slots[at] != NO_LINK {
                    incoming[slots[at] as usize] -= 1;
                }
                slots[at] = orphan as i32;
                incoming[orphan] += 1;
                linked += 1;
                break;
            }
        }
    }
    linked
}

/// How many links each of `rows` rows has coming in.
pub(super) fn incoming_links(base: &[i32], rows: usize) -> Vec<u32> {
    let mut incoming = vec![0u32; rows];
    for &link in base.iter().filter(|&&link| link != NO_LINK) {
        incoming[link as usize] += 1;
    }
    incoming
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_no_one_links_to_gets_a_link_from_its_nearest_without_orphaning_another() {
        // 3 slots a row; no row links to row 3, which links to 0 and 1. Row 0 is full; its
        // last link whose row has another link to it is the one to row 4 (row 1 links there
        // too), so row 3 takes that slot.
        #[rustfmt::skip]
        let mut base = vec![
            1, 2, 4,
            0, 4, 2,
            0, 1, NO_LINK,
            0, 1, NO_LINK,
            0, 1, 2,
        ];
        assert_eq!(link_orphans(&mut base, 3), 1);
        assert_eq!(&base[..3], &[1, 2, 3]);
        assert_eq!(&base[3..], &[0, 4, 2, 0, 1, NO_LINK, 0, 1, NO_LINK, 0, 1, 2]);
        // Nothing left to link: the same again changes nothing.
        let before = base.clone();
        assert_eq!(link_orphans(&mut base, 3), 0);
        assert_eq!(base, before);
    }

    #[test]
    fn a_row_whose_links_are_the_only_ones_to_their_rows_is_passed_over_for_a_free_slot() {
        // Row 3 (no row links to it) links to 0, then 4. Row 0 is full, and its links are
        // the only ones to rows 1 and 2; row 4 has a free slot.
        #[rustfmt::skip]
        let mut base = vec![
            1, 2,
            0, NO_LINK,
            0, NO_LINK,
            0, 4,
            0, NO_LINK,
        ];
        assert_eq!(link_orphans(&mut base, 2), 1);
        assert_eq!(base, [1, 2, 0, NO_LINK, 0, NO_LINK, 0, 4, 0, 3]);
    }
}
