//! A local file summed while it is written: its bytes go to the file and, in pieces, to a
//! thread of its own that hashes them ([`FileHasher`]), so that the checksum is ready when
//! the last byte is written instead of costing a second read and hash of the file after it
//! (about a second for chunks.parquet at 1M rows, on the path to publishing). The thread
//! hashes on its own: on the rayon pool it would wait behind the row groups being encoded,
//! and the writes would wait for it.

use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use super::{FileChecksum, FileHasher};

/// Bytes handed to the hashing thread at a time.
const PIECE_BYTES: usize = 8 << 20;

/// Pieces waiting for the hashing thread before a write waits for it (64 MiB).
const PIECES_QUEUED: usize = 8;

pub(super) struct SummingFile {
    file: std::fs::File,
    pending: Vec<u8>,
    pieces: Option<SyncSender<Vec<u8>>>,
    hashing: Option<JoinHandle<FileChecksum>>,
}

impl SummingFile {
    /// Creates the file at `path`, to be summed with block sums of `block_bytes` when asked.
    pub(super) fn create(path: &Path, block_bytes: Option<u64>) -> io::Result<Self> {
        let file = std::fs::File::create(path)?;
        let (pieces, received) = sync_channel::<Vec<u8>>(PIECES_QUEUED);
        let hashing = std::thread::Builder::new()
            .name("quarry-file-sum".into())
            .spawn(move || {
                let mut hasher = FileHasher::new(block_bytes);
                for piece in received {
                    hasher.update_here(&piece);
                }
                hasher.finish()
            })?;
        Ok(Self {
            file,
            pending: Vec::with_capacity(PIECE_BYTES),
            pieces: Some(pieces),
            hashing: Some(hashing),
        })
    }

    /// Flushes the file and returns its checksum once every byte is hashed.
    pub(super) fn finish(mut self) -> io::Result<FileChecksum> {
        self.file.flush()?;
        self.send_pending()?;
        drop(self.pieces.take());
        self.hashing
            .take()
            .expect("the hashing thread is joined once")
            .join()
            .map_err(|_| io::Error::other("the thread summing the file panicked"))
    }

    fn send_pending(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.pending, Vec::with_capacity(PIECE_BYTES));
        self.pieces
            .as_ref()
            .and_then(|pieces| pieces.send(piece).ok())
            .ok_or_else(|| io::Error::other("the thread summing the file stopped"))
    }
}

impl Write for SummingFile {
    /// Takes at most what fills the piece being gathered: a large write (FAISS writes its
    /// vectors in one) goes to the file a piece at a time, each hashed while the next one is
    /// written, never gathered whole.
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = PIECE_BYTES.saturating_sub(self.pending.len()).max(1);
        let written = self.file.write(&bytes[..bytes.len().min(room)])?;
        self.pending.extend_from_slice(&bytes[..written]);
        if self.pending.len() >= PIECE_BYTES {
            self.send_pending()?;
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_made_while_writing_is_the_sum_of_the_file_read_back() {
        let dir = tempfile::tempdir().unwrap();
        for block_bytes in [None, Some(256 * 1024), Some(1000)] {
            let path = dir.path().join("f");
            let mut file = SummingFile::create(&path, block_bytes).unwrap();
            // Writes of every size around the pieces and the blocks, 20 MB in all.
            let mut state = 7u64;
            let mut written = 0usize;
            for size in [0, 1, 999, 1000, 1001, PIECE_BYTES - 3, 5, PIECE_BYTES * 2, 262_145, 3] {
                let bytes: Vec<u8> = (0..size)
                    .map(|_| {
                        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        (state >> 56) as u8
                    })
                    .collect();
                file.write_all(&bytes).unwrap();
                written += size;
            }
            let summed = file.finish().unwrap();
            assert_eq!(summed.bytes, written as u64);
            assert_eq!(
                summed,
                super::super::file_checksum(&path, block_bytes).unwrap(),
                "{block_bytes:?}"
            );
        }
    }
}
