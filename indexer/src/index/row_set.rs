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
        Self { bits: vec![0; len.div_ceil(8)], len, count: 0 }
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
        if self.len % 8 != 0 {
            if let Some(last) = bits.last_mut() {
                *last &= (1u8 << (self.len % 8)) - 1;
            }
        }
        Self { bits, len: self.len, count: self.len - self.count }
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

    /// The allowed rows, ascending.
    pub fn rows(&self) -> Vec<u64> {
        (0..self.len).filter(|&r| self.contains(r)).map(|r| r as u64).collect()
    }

    pub fn bitmap(&self) -> &[u8] {
        &self.bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
