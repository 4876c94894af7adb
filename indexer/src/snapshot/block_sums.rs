//! Checksums of a file's fixed-size blocks, beside its whole-file sha256: a reader that
//! needs a few pages of a large file (a rerun reusing some documents' rows of chunks.parquet)
//! fetches and checks only the blocks holding them, instead of the whole file first.

use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::manifest::FileChecksum;
use super::sha256_hex;

/// Block size of the files a writer gives block sums (chunks.parquet): about a page of the
/// vector column. Smaller blocks fetch fewer bytes around each page a reader wants, and cost
/// a manifest line each (a 1.5 GB file: about 5,700 lines).
pub const BLOCK_BYTES: u64 = 256 * 1024;

/// sha256 of each `block_bytes` block of a file, in order (the last block may be shorter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSums {
    pub block_bytes: u64,
    pub sha256: Vec<String>,
}

impl BlockSums {
    /// The blocks holding any byte of `range`.
    pub fn blocks_of(&self, range: Range<u64>) -> Range<usize> {
        if range.is_empty() {
            return 0..0;
        }
        (range.start / self.block_bytes) as usize..range.end.div_ceil(self.block_bytes) as usize
    }

    /// The bytes of block `block` in a file of `file_bytes` bytes.
    pub fn range_of(&self, block: usize, file_bytes: u64) -> Range<u64> {
        let start = block as u64 * self.block_bytes;
        start.min(file_bytes)..(start + self.block_bytes).min(file_bytes)
    }

    /// Whether `bytes` are block `block` as written.
    pub fn holds(&self, block: usize, bytes: &[u8]) -> bool {
        self.sha256
            .get(block)
            .is_some_and(|expected| *expected == sha256_hex(bytes))
    }
}

/// Hashes a file as its bytes go by, in order: the whole file, and each block when asked for
/// block sums (the blocks hashed on the rayon pool while the whole-file hash runs, so a file
/// with block sums takes about as long as one without).
pub struct FileHasher {
    whole: Sha256,
    bytes: u64,
    blocks: Option<BlockHasher>,
}

struct BlockHasher {
    block_bytes: u64,
    /// The block being filled, and its bytes so far.
    current: Sha256,
    filled: u64,
    sums: Vec<String>,
}

impl FileHasher {
    /// `block_bytes`: Some for block sums of that size.
    pub fn new(block_bytes: Option<u64>) -> Self {
        let blocks = block_bytes.map(|block_bytes| BlockHasher {
            block_bytes: block_bytes.max(1),
            current: Sha256::new(),
            filled: 0,
            sums: Vec::new(),
        });
        Self {
            whole: Sha256::new(),
            bytes: 0,
            blocks,
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        match &mut self.blocks {
            None => self.whole.update(data),
            // Pieces smaller than two blocks (a network body arrives in pieces of a few KiB)
            // are not worth a task each.
            Some(blocks) if (data.len() as u64) < 2 * blocks.block_bytes => {
                self.whole.update(data);
                blocks.update(data);
            }
            Some(blocks) => {
                let whole = &mut self.whole;
                rayon::join(|| whole.update(data), || blocks.update(data));
            }
        }
    }

    /// [`Self::update`] on this thread alone (for a thread of its own, which should neither
    /// wait for the rayon pool's workers nor take them from their tasks).
    pub fn update_here(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.whole.update(data);
        if let Some(blocks) = &mut self.blocks {
            blocks.update_here(data);
        }
    }

    pub fn finish(self) -> FileChecksum {
        let blocks = self.blocks.map(BlockHasher::finish);
        FileChecksum {
            sha256: hex::encode(self.whole.finalize()),
            bytes: self.bytes,
            blocks,
        }
    }
}

impl BlockHasher {
    /// Hashes `data`'s whole blocks on the rayon pool when there are several.
    fn update(&mut self, data: &[u8]) {
        self.update_blocks(data, true);
    }

    fn update_here(&mut self, data: &[u8]) {
        self.update_blocks(data, false);
    }

    fn update_blocks(&mut self, mut data: &[u8], in_parallel: bool) {
        let size = self.block_bytes as usize;
        if self.filled > 0 {
            let take = (size - self.filled as usize).min(data.len());
            self.current.update(&data[..take]);
            self.filled += take as u64;
            data = &data[take..];
            if self.filled as usize == size {
                self.sums.push(hex::encode(self.current.finalize_reset()));
                self.filled = 0;
            }
        }
        let whole_blocks = data.len() / size * size;
        let (full, rest) = data.split_at(whole_blocks);
        match full.len() > size && in_parallel {
            true => self
                .sums
                .extend(full.par_chunks(size).map(sha256_hex).collect::<Vec<_>>()),
            false => self.sums.extend(full.chunks(size).map(sha256_hex)),
        }
        if !rest.is_empty() {
            self.current.update(rest);
            self.filled = rest.len() as u64;
        }
    }

    fn finish(mut self) -> BlockSums {
        if self.filled > 0 {
            self.sums.push(hex::encode(self.current.finalize()));
        }
        BlockSums {
            block_bytes: self.block_bytes,
            sha256: self.sums,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sums_do_not_depend_on_how_the_bytes_arrive() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let expected: Vec<String> = data.chunks(1_000).map(sha256_hex).collect();
        for pieces in [1usize, 7, 999, 1_000, 1_001, 4_096, 10_000] {
            let mut hasher = FileHasher::new(Some(1_000));
            data.chunks(pieces).for_each(|piece| hasher.update(piece));
            let checksum = hasher.finish();
            assert_eq!(checksum.sha256, sha256_hex(&data), "pieces of {pieces}");
            assert_eq!(checksum.bytes, 10_000);
            assert_eq!(checksum.blocks.as_ref().unwrap().sha256, expected, "pieces of {pieces}");
        }
        let mut uneven = FileHasher::new(Some(3_000));
        uneven.update(&data);
        let sums = uneven.finish().blocks.unwrap();
        assert_eq!(sums.sha256.len(), 4, "the last block is shorter");
        assert!(sums.holds(3, &data[9_000..]) && !sums.holds(3, &data[8_999..]) && !sums.holds(4, &[]));
        assert_eq!(sums.blocks_of(2_999..3_001), 0..2);
        assert_eq!(sums.blocks_of(3_000..6_000), 1..2);
        assert_eq!(sums.range_of(3, 10_000), 9_000..10_000);
        assert!(FileHasher::new(None).finish().blocks.is_none());
    }
}
