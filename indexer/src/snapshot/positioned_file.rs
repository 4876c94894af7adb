//! A local file as a Parquet source read by position (`pread`): several threads decode row
//! groups of it at once, which `std::fs::File`'s own source (one cursor shared by every clone)
//! does not allow, and none of it needs to be in memory.

use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

#[derive(Clone)]
pub(super) struct PositionedFile {
    file: Arc<File>,
    len: u64,
}

impl PositionedFile {
    pub fn new(file: File) -> std::io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(Self { file: Arc::new(file), len })
    }
}

impl Length for PositionedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for PositionedFile {
    type T = BufReader<PositionedRead>;

    /// Buffered, as the decoder reads page headers a few bytes at a time.
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(BufReader::new(PositionedRead { file: self.file.clone(), offset: start }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let mut buffer = vec![0u8; length];
        self.file.read_exact_at(&mut buffer, start)?;
        Ok(buffer.into())
    }
}

/// Reads a [`PositionedFile`] onwards from an offset of its own.
pub(super) struct PositionedRead {
    file: Arc<File>,
    offset: u64,
}

impl Read for PositionedRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.file.read_at(buf, self.offset)?;
        self.offset += read as u64;
        Ok(read)
    }
}
