//! A snapshot file read by position, each block checked against the manifest's block sums
//! before any of its bytes is used: a local file's blocks are checked as they are first read,
//! a remote file's are fetched into a temporary copy (only the blocks a reader will need) and
//! checked as they arrive. Several threads may read it at once.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

use super::block_sums::BlockSums;
use super::manifest::FileChecksum;
use crate::error::{IndexerError, Result};

/// A block not in the copy yet (remote files only).
const ABSENT: u8 = 0;
/// A block there but not checked yet (local files).
const UNCHECKED: u8 = 1;
const CHECKED: u8 = 2;

#[derive(Clone)]
pub(super) struct CheckedBlocks {
    inner: Arc<Inner>,
}

struct Inner {
    /// The file's path below the snapshot root, for errors.
    name: String,
    file: File,
    bytes: u64,
    sums: BlockSums,
    state: Vec<AtomicU8>,
    /// Bytes of blocks fetched or read to be checked.
    bytes_read: AtomicU64,
}

impl CheckedBlocks {
    /// The local file at `path` (`name` below the root), checked against `expected` block by
    /// block as it is read. None when `expected` has no block sums.
    pub fn local(path: &std::path::Path, name: &str, expected: &FileChecksum) -> Result<Option<Self>> {
        let Some(sums) = &expected.blocks else { return Ok(None) };
        let file = File::open(path).map_err(|e| IndexerError::io(path, e))?;
        let bytes = file.metadata().map_err(|e| IndexerError::io(path, e))?.len();
        if bytes != expected.bytes {
            return Err(IndexerError::snapshot(
                name,
                format!("{bytes} bytes, the manifest says {}", expected.bytes),
            ));
        }
        Self::new(name, file, expected.bytes, sums, UNCHECKED).map(Some)
    }

    /// A file already checked whole against `expected` (a local one, or a temporary copy of a
    /// remote one): one block, checked.
    pub fn verified_whole(name: &str, file: File, expected: &FileChecksum) -> Result<Self> {
        let sums = BlockSums {
            block_bytes: expected.bytes.max(1),
            sha256: (expected.bytes > 0)
                .then(|| expected.sha256.clone())
                .into_iter()
                .collect(),
        };
        let whole = Self::new(name, file, expected.bytes, &sums, CHECKED)?;
        whole.inner.bytes_read.store(expected.bytes, Ordering::Relaxed);
        Ok(whole)
    }

    /// An empty temporary copy (in `TMPDIR`) of the remote file `name`, to be filled by
    /// [`Self::fill`]. None when `expected` has no block sums.
    pub fn remote_copy(name: &str, expected: &FileChecksum) -> Result<Option<Self>> {
        let Some(sums) = &expected.blocks else { return Ok(None) };
        let copy_error = |e| IndexerError::io(format!("(temporary copy of {name})"), e);
        let file = tempfile::tempfile().map_err(copy_error)?;
        file.set_len(expected.bytes).map_err(copy_error)?;
        Self::new(name, file, expected.bytes, sums, ABSENT).map(Some)
    }

    fn new(name: &str, file: File, bytes: u64, sums: &BlockSums, state: u8) -> Result<Self> {
        let blocks = bytes.div_ceil(sums.block_bytes.max(1)) as usize;
        if sums.block_bytes == 0 || sums.sha256.len() != blocks {
            return Err(IndexerError::snapshot(
                name,
                format!(
                    "the manifest lists {} block sums of {} bytes for {bytes} bytes",
                    sums.sha256.len(),
                    sums.block_bytes
                ),
            ));
        }
        let state = (0..blocks).map(|_| AtomicU8::new(state)).collect();
        Ok(Self {
            inner: Arc::new(Inner {
                name: name.to_string(),
                file,
                bytes,
                sums: sums.clone(),
                state,
                bytes_read: AtomicU64::new(0),
            }),
        })
    }

    pub fn bytes(&self) -> u64 {
        self.inner.bytes
    }

    /// Bytes fetched (a remote file) or read to be checked (a local one) so far.
    pub fn bytes_read(&self) -> u64 {
        self.inner.bytes_read.load(Ordering::Relaxed)
    }

    /// The byte ranges to fetch so that every byte of `ranges` is in the copy: runs of
    /// neighbouring absent blocks.
    pub fn missing(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
        let inner = &self.inner;
        let mut wanted: Vec<usize> = ranges
            .iter()
            .flat_map(|range| {
                inner
                    .sums
                    .blocks_of(range.start.min(inner.bytes)..range.end.min(inner.bytes))
            })
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut runs: Vec<Range<usize>> = Vec::new();
        for block in wanted
            .into_iter()
            .filter(|&block| inner.state[block].load(Ordering::Acquire) == ABSENT)
        {
            match runs.last_mut() {
                Some(run) if run.end == block => run.end += 1,
                _ => runs.push(block..block + 1),
            }
        }
        runs.into_iter()
            .map(|run| {
                inner.sums.range_of(run.start, inner.bytes).start..inner.sums.range_of(run.end - 1, inner.bytes).end
            })
            .collect()
    }

    /// Puts fetched bytes (starting at a block's first byte, whole blocks) into the copy, each
    /// block checked against its sum first.
    pub fn fill(&self, start: u64, bytes: &[u8]) -> Result<()> {
        let inner = &self.inner;
        let first = (start / inner.sums.block_bytes) as usize;
        for (block, data) in (first..).zip(bytes.chunks(inner.sums.block_bytes as usize)) {
            let range = inner.sums.range_of(block, inner.bytes);
            if range.start + data.len() as u64 != range.end || !inner.sums.holds(block, data) {
                return Err(IndexerError::snapshot(
                    &inner.name,
                    format!(
                        "bytes {}..{} differ from the manifest's block checksum",
                        range.start, range.end
                    ),
                ));
            }
            inner
                .file
                .write_all_at(data, range.start)
                .map_err(|e| IndexerError::io(format!("(temporary copy of {})", inner.name), e))?;
            inner.mark_checked(block, ABSENT, data.len());
        }
        Ok(())
    }

    /// Takes the bytes of a fetched range starting at `start` (a block's first byte) as they
    /// arrive, putting each block into the copy ([`Self::fill`]) once it is whole.
    pub fn block_filler(&self, start: u64) -> BlockFiller<'_> {
        BlockFiller {
            blocks: self,
            start,
            pending: Vec::new(),
        }
    }

    /// `range`'s bytes, every block holding them checked.
    pub fn read_range(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        self.inner.check(range.clone())?;
        let mut buffer = vec![0u8; (range.end - range.start) as usize];
        self.inner.file.read_exact_at(&mut buffer, range.start)?;
        Ok(buffer.into())
    }
}

/// See [`CheckedBlocks::block_filler`].
pub(super) struct BlockFiller<'a> {
    blocks: &'a CheckedBlocks,
    /// Where the pending bytes start: the first byte of a block.
    start: u64,
    pending: Vec<u8>,
}

impl BlockFiller<'_> {
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<()> {
        let inner = &self.blocks.inner;
        while !bytes.is_empty() {
            let block = inner
                .sums
                .range_of((self.start / inner.sums.block_bytes) as usize, inner.bytes);
            let wanted = (block.end - block.start) as usize - self.pending.len();
            let (now, rest) = bytes.split_at(wanted.min(bytes.len()));
            self.pending.extend_from_slice(now);
            bytes = rest;
            if self.pending.len() as u64 == block.end - block.start {
                if block.is_empty() {
                    return Err(IndexerError::snapshot(
                        &inner.name,
                        format!("the store sent bytes past its end ({} bytes)", inner.bytes),
                    ));
                }
                self.blocks.fill(block.start, &self.pending)?;
                self.pending.clear();
                self.start = block.end;
            }
        }
        Ok(())
    }

    /// Checks that the bytes up to `end` all came.
    pub fn finish(self, end: u64) -> Result<()> {
        match self.pending.is_empty() && self.start == end {
            true => Ok(()),
            false => Err(IndexerError::snapshot(
                &self.blocks.inner.name,
                format!(
                    "the store sent bytes up to {} of a range ending at {end}",
                    self.start + self.pending.len() as u64
                ),
            )),
        }
    }
}

impl Inner {
    /// Checks each block holding a byte of `range`: reads and checks a local block the first
    /// time, fails on a remote block not fetched or a block that differs from its sum.
    fn check(&self, range: Range<u64>) -> std::io::Result<()> {
        if range.end > self.bytes {
            return Err(self.error(format!(
                "bytes {}..{} are past its end ({} bytes)",
                range.start, range.end, self.bytes
            )));
        }
        for block in self.sums.blocks_of(range) {
            let bytes = self.sums.range_of(block, self.bytes);
            match self.state[block].load(Ordering::Acquire) {
                CHECKED => {}
                ABSENT => return Err(self.error(format!("bytes {}..{} were not fetched", bytes.start, bytes.end))),
                _ => {
                    let mut data = vec![0u8; (bytes.end - bytes.start) as usize];
                    self.file.read_exact_at(&mut data, bytes.start)?;
                    if !self.sums.holds(block, &data) {
                        return Err(self.error(format!(
                            "bytes {}..{} differ from the manifest's block checksum",
                            bytes.start, bytes.end
                        )));
                    }
                    self.mark_checked(block, UNCHECKED, data.len());
                }
            }
        }
        Ok(())
    }

    /// Marks a block checked, counting its bytes once (two threads may check one block).
    fn mark_checked(&self, block: usize, was: u8, bytes: usize) {
        if self.state[block]
            .compare_exchange(was, CHECKED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    fn error(&self, reason: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {reason}", self.name))
    }
}

impl Length for CheckedBlocks {
    fn len(&self) -> u64 {
        self.inner.bytes
    }
}

impl ChunkReader for CheckedBlocks {
    type T = BufReader<CheckedRead>;

    /// Buffered, as the decoder reads page headers a few bytes at a time.
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(BufReader::new(CheckedRead {
            inner: self.inner.clone(),
            offset: start,
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        Ok(self.read_range(start..start + length as u64)?)
    }
}

/// Reads a [`CheckedBlocks`] onwards from an offset of its own, a block at most at a time.
pub(super) struct CheckedRead {
    inner: Arc<Inner>,
    offset: u64,
}

impl Read for CheckedRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let inner = &self.inner;
        if self.offset >= inner.bytes || buf.is_empty() {
            return Ok(0);
        }
        let block_end = inner
            .sums
            .range_of((self.offset / inner.sums.block_bytes) as usize, inner.bytes)
            .end;
        let end = block_end.min(self.offset + buf.len() as u64);
        inner.check(self.offset..end)?;
        let read = inner
            .file
            .read_at(&mut buf[..(end - self.offset) as usize], self.offset)?;
        self.offset += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::super::block_sums::FileHasher;
    use super::*;

    fn file_of(data: &[u8], block_bytes: u64) -> (tempfile::NamedTempFile, FileChecksum) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, data).unwrap();
        let mut hasher = FileHasher::new(Some(block_bytes));
        hasher.update(data);
        (file, hasher.finish())
    }

    #[test]
    fn a_local_file_is_checked_block_by_block_as_it_is_read() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 253) as u8).collect();
        let (file, expected) = file_of(&data, 1_000);
        let blocks = CheckedBlocks::local(file.path(), "x.parquet", &expected)
            .unwrap()
            .unwrap();
        assert_eq!(&blocks.get_bytes(1_500, 100).unwrap()[..], &data[1_500..1_600]);
        assert_eq!(blocks.bytes_read(), 1_000, "one block read to be checked");
        let mut rest = Vec::new();
        blocks.get_read(9_500).unwrap().read_to_end(&mut rest).unwrap();
        assert_eq!(rest, &data[9_500..]);

        // One byte changed on disk: the blocks holding it are refused, the others still read.
        let mut damaged = data.clone();
        damaged[4_321] ^= 1;
        let (file, _) = file_of(&damaged, 1_000);
        let blocks = CheckedBlocks::local(file.path(), "x.parquet", &expected)
            .unwrap()
            .unwrap();
        let err = blocks.get_bytes(4_000, 10).unwrap_err().to_string();
        assert!(
            err.contains("x.parquet") && err.contains("bytes 4000..5000 differ"),
            "{err}"
        );
        assert_eq!(&blocks.get_bytes(5_000, 10).unwrap()[..], &data[5_000..5_010]);
        assert!(CheckedBlocks::local(
            file.path(),
            "x",
            &FileChecksum {
                blocks: None,
                ..expected.clone()
            }
        )
        .unwrap()
        .is_none());
        let err = CheckedBlocks::local(
            file.path(),
            "x",
            &FileChecksum {
                bytes: 9_999,
                ..expected
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("10000 bytes, the manifest says 9999"), "{err}");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // a list of one range, not the range's values
    fn a_remote_copy_serves_only_the_blocks_fetched_and_checked() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let (_file, expected) = file_of(&data, 1_000);
        let copy = CheckedBlocks::remote_copy("seg/chunks.parquet", &expected)
            .unwrap()
            .unwrap();
        let missing = copy.missing(&[2_500..2_600, 3_100..4_200, 9_990..10_000]);
        assert_eq!(missing, vec![2_000..5_000, 9_000..10_000], "runs of absent blocks");
        for range in &missing {
            // In pieces that do not line up with the blocks, as a body arrives.
            let mut filler = copy.block_filler(range.start);
            data[range.start as usize..range.end as usize]
                .chunks(333)
                .for_each(|piece| filler.push(piece).unwrap());
            filler.finish(range.end).unwrap();
        }
        assert_eq!(copy.bytes_read(), 4_000);
        assert_eq!(&copy.read_range(2_500..4_200).unwrap()[..], &data[2_500..4_200]);
        assert!(copy.missing(&[2_000..5_000]).is_empty());
        assert_eq!(
            copy.missing(&[1_500..5_500]),
            vec![1_000..2_000, 5_000..6_000],
            "only the absent blocks"
        );
        let err = copy.get_bytes(1_990, 20).unwrap_err().to_string();
        assert!(err.contains("bytes 1000..2000 were not fetched"), "{err}");
        // A reader going on past what was fetched stops there with that error.
        let mut reader = copy.get_read(4_990).unwrap();
        let mut buffer = [0u8; 20];
        assert_eq!(reader.read(&mut buffer[..10]).unwrap(), 10);
        assert!(reader.read(&mut buffer).is_err());
        // Bytes that differ from the sums are refused and not served.
        let mut wrong = data[0..1_000].to_vec();
        wrong[7] ^= 1;
        let err = copy.fill(0, &wrong).unwrap_err().to_string();
        assert!(err.contains("bytes 0..1000 differ"), "{err}");
        assert!(copy.get_bytes(0, 1).is_err());
        // A body that ends early: its whole blocks are kept, the rest is an error.
        let mut short = copy.block_filler(0);
        short.push(&data[..1_500]).unwrap();
        let err = short.finish(2_000).unwrap_err().to_string();
        assert!(err.contains("bytes up to 1500 of a range ending at 2000"), "{err}");
        assert_eq!(&copy.get_bytes(0, 1_000).unwrap()[..], &data[..1_000]);
    }
}
