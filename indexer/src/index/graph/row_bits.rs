//! Bit sets of one bit per row, kept clear between uses: which rows a list or a row's links
//! already hold, found in one step rather than by a search of the list.

/// Row `row`'s word and bit in a bit set of one bit per row.
pub(super) fn row_bit(row: u32) -> (usize, u64) {
    (row as usize / 64, 1u64 << (row % 64))
}

/// Words for a bit set of `rows` rows.
pub(super) fn words_for(rows: usize) -> usize {
    rows.div_ceil(64)
}

/// Sets `row`'s bit; whether it was clear.
pub(super) fn first_sight(bits: &mut [u64], row: u32) -> bool {
    let (word, mask) = row_bit(row);
    let clear = bits[word] & mask == 0;
    bits[word] |= mask;
    clear
}

/// Clears the bits of `rows` in `bits`.
pub(super) fn clear_bits(bits: &mut [u64], rows: impl IntoIterator<Item = u32>) {
    for row in rows {
        let (word, mask) = row_bit(row);
        bits[word] &= !mask;
    }
}

/// Places `links` in `slots` in order, each once (through `seen`, clear before and after),
/// until the slots are full; how many were placed. The slots after those are left as they
/// were.
pub(super) fn place_once(slots: &mut [i32], links: impl IntoIterator<Item = i32>, seen: &mut [u64]) -> usize {
    let mut filled = 0;
    for link in links {
        if filled == slots.len() {
            break;
        }
        if first_sight(seen, link as u32) {
            slots[filled] = link;
            filled += 1;
        }
    }
    clear_bits(seen, slots[..filled].iter().map(|&link| link as u32));
    filled
}
