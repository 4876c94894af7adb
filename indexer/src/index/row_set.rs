//! A set of chunk rows as a bitmap (bit `i % 8` of byte `i / 8`, FAISS's IDSelectorBitmap
//! layout), used to restrict both search lanes to the rows a filter allows.

/// Rows `0..len` that a filter allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSet {
    bits: Vec<u8>,
    len: usize,
    count: usize,
}

impl RowSet {
    /// No rows allowed.
    pub fn empty(len: usize) -> Self {
        Self {
            bits: vec![0; len.div_ceil(8)],
            len,
            count: 0,
        }
    }

    /// Every row allowed.
    pub fn full(len: usize) -> Self {
        let mut set = Self::empty(len);
        for row in 0..len {
            set.insert(row);
        }
        set
    }

    /// The rows this set does not hold (a byte at a time).
    pub fn complement(&self) -> Self {
        let mut bits: Vec<u8> = self.bits.iter().map(|b| !b).collect();
        clear_past(self.len, &mut bits);
        Self {
            bits,
            len: self.len,
            count: self.len - self.count,
        }
    }

    pub fn insert(&mut self, row: usize) {
        if row < self.len && !self.contains(row) {
            self.bits[row / 8] |= 1 << (row % 8);
            self.count += 1;
        }
    }

    pub fn remove(&mut self, row: usize) {
        if row < self.len && self.contains(row) {
            self.bits[row / 8] &= !(1 << (row % 8));
            self.count -= 1;
        }
    }

    pub fn contains(&self, row: usize) -> bool {
        row < self.len && self.bits[row / 8] & (1 << (row % 8)) != 0
    }

    /// How many rows are allowed.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Rows in the universe.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The allowed rows, ascending (bytes with no row skipped whole).
    pub fn rows(&self) -> Vec<u64> {
        let mut rows = Vec::with_capacity(self.count);
        for (at, &byte) in self.bits.iter().enumerate() {
            let mut byte = byte;
            while byte != 0 {
                rows.push((at * 8 + byte.trailing_zeros() as usize) as u64);
                byte &= byte - 1;
            }
        }
        rows
    }

    /// Rows `start..start + len` of this set, numbered from 0 (a segment's part of a set
    /// numbered across segments), a byte at a time.
    pub fn range(&self, start: usize, len: usize) -> Self {
        let len = len.min(self.len.saturating_sub(start));
        let (first, shift) = (start / 8, start % 8);
        let byte = |at: usize| self.bits.get(at).copied().unwrap_or(0);
        let mut bits: Vec<u8> = (0..len.div_ceil(8))
            .map(|i| {
                if shift == 0 {
                    byte(first + i)
                } else {
                    (byte(first + i) >> shift) | (byte(first + i + 1) << (8 - shift))
                }
            })
            .collect();
        clear_past(len, &mut bits);
        let count = ones(&bits);
        Self { bits, len, count }
    }

    /// Adds rows `start..end` that `except` (a set over the same rows) does not hold, a byte
    /// at a time between the range's first and last bytes.
    pub fn insert_range_except(&mut self, start: usize, end: usize, except: &RowSet) {
        let end = end.min(self.len);
        let mut row = start;
        while row < end && !row.is_multiple_of(8) {
            if !except.contains(row) {
                self.insert(row);
            }
            row += 1;
        }
        while row + 8 <= end {
            let at = row / 8;
            let before = self.bits[at];
            self.bits[at] |= !except.bits.get(at).copied().unwrap_or(0);
            self.count += (self.bits[at].count_ones() - before.count_ones()) as usize;
            row += 8;
        }
        while row < end {
            if !except.contains(row) {
                self.insert(row);
            }
            row += 1;
        }
    }

    /// Drops the rows `other` (a set over the same rows) holds, a byte at a time.
    pub fn remove_all(&mut self, other: &RowSet) {
        for (byte, &drop) in self.bits.iter_mut().zip(&other.bits) {
            *byte &= !drop;
        }
        self.count = ones(&self.bits);
    }

    /// Keeps only the rows `other` (a set over the same rows) holds too, a byte at a time.
    pub fn retain_all(&mut self, other: &RowSet) {
        for (at, byte) in self.bits.iter_mut().enumerate() {
            *byte &= other.bits.get(at).copied().unwrap_or(0);
        }
        self.count = ones(&self.bits);
    }

    /// Adds the rows of `part` (a set numbered from 0) as rows from `start` on (a segment's
    /// rows into a set numbered across segments), a byte of `part` at a time; rows past this
    /// set's end are left out.
    pub fn insert_all_at(&mut self, start: usize, part: &RowSet) {
        let shift = start % 8;
        for (i, &byte) in part.bits.iter().enumerate().filter(|(_, b)| **b != 0) {
            let at = start / 8 + i;
            if let Some(low) = self.bits.get_mut(at) {
                *low |= byte << shift;
            }
            if shift > 0 {
                if let Some(high) = self.bits.get_mut(at + 1) {
                    *high |= byte >> (8 - shift);
                }
            }
        }
        clear_past(self.len, &mut self.bits);
        self.count = ones(&self.bits);
    }

    pub fn bitmap(&self) -> &[u8] {
        &self.bits
    }
}

/// Clears the bits of the last byte past row `len` (a set's rows are `0..len`).
fn clear_past(len: usize, bits: &mut [u8]) {
    if !len.is_multiple_of(8) {
        if let Some(last) = bits.last_mut() {
            *last &= (1u8 << (len % 8)) - 1;
        }
    }
}

/// The rows a bitmap holds.
fn ones(bits: &[u8]) -> usize {
    bits.iter().map(|b| b.count_ones() as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_placed_at_any_start_and_intersected() {
        let local: Vec<usize> = vec![0, 1, 6, 7, 8, 12, 19];
        let mut part = RowSet::empty(20);
        local.iter().for_each(|&row| part.insert(row));
        for start in [0, 3, 8, 13, 40, 45] {
            let mut whole = RowSet::empty(50);
            whole.insert(2);
            whole.insert_all_at(start, &part);
            let mut expected: Vec<u64> = local.iter().map(|&r| (start + r) as u64).filter(|&r| r < 50).collect();
            expected.push(2);
            expected.sort();
            expected.dedup();
            assert_eq!(
                (whole.rows(), whole.count()),
                (expected.clone(), expected.len()),
                "at {start}"
            );
        }
        let mut odd = RowSet::empty(30);
        (0..30).step_by(3).for_each(|row| odd.insert(row));
        let mut kept = RowSet::empty(30).complement();
        kept.retain_all(&odd);
        assert_eq!(kept, odd);
        kept.retain_all(&RowSet::empty(30));
        assert!(kept.is_empty() && kept.count() == 0);
    }

    #[test]
    fn a_range_is_added_less_the_rows_of_another_set() {
        for (start, end) in [(0, 100), (3, 5), (5, 93), (8, 64), (13, 100), (99, 100), (40, 40)] {
            let mut except = RowSet::empty(100);
            (0..100)
                .filter(|row| row % 7 == 0 || row % 11 == 3)
                .for_each(|row| except.insert(row));
            let mut set = RowSet::empty(100);
            set.insert(2);
            set.insert(60);
            set.insert_range_except(start, end, &except);
            let want: Vec<u64> = (0..100u64)
                .filter(|&row| {
                    row == 2
                        || row == 60
                        || ((start as u64..end as u64).contains(&row) && !except.contains(row as usize))
                })
                .collect();
            assert_eq!(set.rows(), want, "{start}..{end}");
            assert_eq!(set.count(), want.len(), "{start}..{end}");
        }
    }

    #[test]
    fn removing_another_sets_rows() {
        let (mut set, mut other) = (RowSet::empty(101), RowSet::empty(101));
        (0..101).filter(|r| r % 3 == 0).for_each(|r| set.insert(r));
        (0..101).filter(|r| r % 2 == 0).for_each(|r| other.insert(r));
        set.remove_all(&other);
        let want: Vec<u64> = (0..101).filter(|r| r % 3 == 0 && r % 2 != 0).collect();
        assert_eq!(set.rows(), want);
        assert_eq!(set.count(), want.len());
    }

    #[test]
    fn insert_remove_count() {
        let mut set = RowSet::empty(10);
        set.insert(3);
        set.insert(9);
        set.insert(3);
        set.insert(42);
        assert_eq!((set.count(), set.rows()), (2, vec![3, 9]));
        assert_eq!(set.bitmap(), [0b0000_1000, 0b0000_0010]);
        set.remove(3);
        assert!(!set.contains(3) && set.contains(9));
        assert_eq!(RowSet::full(10).count(), 10);
        let others = set.complement();
        assert_eq!((others.count(), others.rows()), (9, vec![0, 1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(others.bitmap(), [0xff, 0b0000_0001], "no bit past the last row");
        assert_eq!(RowSet::empty(16).complement().count(), 16);
    }

    #[test]
    fn ranges_are_the_rows_between_renumbered() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for len in [0usize, 1, 7, 8, 9, 63, 64, 100, 1000] {
            let mut set = RowSet::empty(len);
            for row in 0..len {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if state >> 62 == 0 {
                    set.insert(row);
                }
            }
            assert_eq!(
                set.rows(),
                (0..len as u64)
                    .filter(|&r| set.contains(r as usize))
                    .collect::<Vec<_>>()
            );
            for start in [0, 1, 3, 8, 13, len / 2, len] {
                for take in [0, 1, 5, 8, 17, len] {
                    let part = set.range(start, take);
                    let want: Vec<u64> = (start..(start + take).min(len))
                        .filter(|&r| set.contains(r))
                        .map(|r| (r - start) as u64)
                        .collect();
                    assert_eq!(part.rows(), want, "len {len} start {start} take {take}");
                    assert_eq!(
                        (part.count(), part.len()),
                        (want.len(), take.min(len.saturating_sub(start)))
                    );
                }
            }
        }
    }
}
