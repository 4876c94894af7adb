//! The previous version's vectors that a run may reuse, kept in an unnamed temporary file
//! instead of memory: a nightly run over a large corpus reads every segment holding a
//! document of a fetched file, and holding all their vectors (1.5 GB per million chunks)
//! until each document is parsed again would grow with the corpus. Rows are appended as the
//! segments are read and each document's rows read back (one positioned read) when it is taken.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};

/// Rows of `dim` floats, appended, then read back by position.
pub(super) struct SpilledVectors {
    file: BufWriter<File>,
    dim: usize,
    /// Rows written so far.
    rows: u64,
    /// Whether rows were written since the last flush.
    unflushed: bool,
}

fn spill_error(cause: std::io::Error) -> IndexerError {
    IndexerError::io(PathBuf::from("(temporary file of stored vectors)"), cause)
}

impl SpilledVectors {
    /// An empty file in the system's temporary folder (removed by the system when closed).
    pub fn new(dim: usize) -> Result<Self> {
        let file = tempfile::tempfile().map_err(spill_error)?;
        Ok(Self {
            file: BufWriter::with_capacity(1 << 20, file),
            dim,
            rows: 0,
            unflushed: false,
        })
    }

    /// Appends `rows` of `embeddings`, in order; returns the position of the first one.
    pub fn append(&mut self, embeddings: &Embeddings, rows: &[usize]) -> Result<u64> {
        debug_assert_eq!(embeddings.dim, self.dim);
        let first = self.rows;
        for &row in rows {
            for value in embeddings.row(row) {
                self.file.write_all(&value.to_le_bytes()).map_err(spill_error)?;
            }
        }
        self.rows += rows.len() as u64;
        self.unflushed = true;
        Ok(first)
    }

    /// The rows at `positions`, one after another (a run of consecutive positions is one read).
    pub fn read_rows(&mut self, positions: &[u64]) -> Result<Vec<f32>> {
        if self.unflushed {
            self.file.flush().map_err(spill_error)?;
            self.unflushed = false;
        }
        let row_bytes = self.dim * 4;
        let mut bytes = vec![0u8; positions.len() * row_bytes];
        let mut done = 0;
        while done < positions.len() {
            let run = 1 + positions[done + 1..]
                .iter()
                .zip(&positions[done..])
                .take_while(|(next, previous)| **next == **previous + 1)
                .count();
            let target = &mut bytes[done * row_bytes..(done + run) * row_bytes];
            self.file
                .get_ref()
                .read_exact_at(target, positions[done] * row_bytes as u64)
                .map_err(spill_error)?;
            done += run;
        }
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_as_they_went_in() {
        let embeddings = Embeddings {
            dim: 3,
            data: (0..15).map(|i| i as f32 * 0.5 - 2.0).collect(),
        };
        let mut spilled = SpilledVectors::new(3).unwrap();
        assert_eq!(spilled.append(&embeddings, &[4, 0]).unwrap(), 0);
        assert_eq!(spilled.read_rows(&[1]).unwrap(), embeddings.row(0));
        // Appending after a read goes on at the end.
        assert_eq!(spilled.append(&embeddings, &[2, 3]).unwrap(), 2);
        let rows_at =
            |rows: &[usize]| -> Vec<f32> { rows.iter().flat_map(|&row| embeddings.row(row).to_vec()).collect() };
        assert_eq!(spilled.read_rows(&[0, 1, 2, 3]).unwrap(), rows_at(&[4, 0, 2, 3]));
        // Positions in any order, runs and single rows mixed.
        assert_eq!(spilled.read_rows(&[3, 1, 2, 0]).unwrap(), rows_at(&[3, 0, 2, 4]));
        assert!(spilled.read_rows(&[3, 4]).is_err(), "past the end");
    }
}
