//! Vectors read back out of a FAISS index that stores them as they were added: Flat (in
//! place), HNSW over its flat storage and IVF-Flat through its direct map (copied row by
//! row). The server's exact scans — selective filters, the ground truth of recall checks —
//! score these, so a loaded segment needs no second copy of its vectors from Parquet.
//! IVF-PQ keeps only lossy codes: it does not store its vectors.

use faiss::Index;

use super::faiss_index::{last_faiss_error, FaissIndex};
use super::{Hit, IndexSpec};
use crate::error::{IndexerError, Result};

/// How a FAISS index of each kind gives its vectors back.
enum StoredAccess<'a> {
    /// Flat: every row, row-major, in the index's own memory.
    InPlace(&'a [f32]),
    /// HNSW, IVF-Flat: one row at a time through `reconstruct`.
    RowByRow,
}

impl FaissIndex {
    /// Whether this index keeps every vector as it was added (Flat, HNSW, IVF-Flat), so that
    /// [`FaissIndex::stored_vectors`] and [`FaissIndex::exact_top_k_in`] can read them.
    pub fn stores_vectors(&self) -> bool {
        !matches!(self.spec, IndexSpec::IvfPq { .. })
    }

    /// IVF-Flat finds a row's vector through a direct map (row -> list, offset), built here
    /// once, before the index is shared: 8 bytes per row.
    pub(super) fn prepare_stored_vectors(&mut self) -> Result<()> {
        if !matches!(self.spec, IndexSpec::IvfFlat { .. }) {
            return Ok(());
        }
        // SAFETY: the index is live and not yet shared; the cast checks its type (null if not IVF).
        let ivf = unsafe { faiss_sys::faiss_IndexIVF_cast(self.inner.inner_ptr()) };
        if ivf.is_null() {
            return Err(IndexerError::VectorIndex {
                stage: "direct map",
                reason: format!("{} is not an IVF index", self.spec.factory()),
            });
        }
        // SAFETY: `ivf` is this live IVF index; nothing else uses it during the call.
        if unsafe { faiss_sys::faiss_IndexIVF_make_direct_map(ivf, 1) } != 0 {
            return Err(IndexerError::VectorIndex {
                stage: "direct map",
                reason: last_faiss_error(),
            });
        }
        Ok(())
    }

    fn stored_access(&self) -> Result<StoredAccess<'_>> {
        if !self.stores_vectors() {
            return Err(IndexerError::VectorIndex {
                stage: "stored vectors",
                reason: format!("{} keeps lossy codes, not its vectors", self.spec.factory()),
            });
        }
        if matches!(self.spec, IndexSpec::Flat) {
            // SAFETY: the cast checks the type (null if not a flat index).
            let flat = unsafe { faiss_sys::faiss_IndexFlat_cast(self.inner.inner_ptr()) };
            if !flat.is_null() {
                let (mut base, mut floats) = (std::ptr::null_mut(), 0usize);
                // SAFETY: `flat` is this live flat index; it reports its storage and its length in floats.
                unsafe { faiss_sys::faiss_IndexFlat_xb(flat, &mut base, &mut floats) };
                if floats == 0 {
                    return Ok(StoredAccess::InPlace(&[]));
                }
                // SAFETY: the storage holds `floats` values and lives (unchanged: nothing adds to a
                // built index) as long as `self`, which the slice borrows.
                return Ok(StoredAccess::InPlace(unsafe {
                    std::slice::from_raw_parts(base, floats)
                }));
            }
        }
        Ok(StoredAccess::RowByRow)
    }

    /// The width of the indexed vectors.
    pub fn dim(&self) -> usize {
        self.inner.d() as usize
    }

    /// Copies row `row`'s stored vector into `out` (`dim` values).
    fn reconstruct_into(&self, row: u64, out: &mut [f32]) -> Result<()> {
        let index = self.inner.inner_ptr() as *const faiss_sys::FaissIndex;
        // SAFETY: a read of the live index into `out`, which holds `dim` floats; `row` was checked
        // against ntotal by the caller; FAISS's reconstruct only reads the index.
        if unsafe { faiss_sys::faiss_Index_reconstruct(index, row as i64, out.as_mut_ptr()) } != 0 {
            return Err(IndexerError::VectorIndex {
                stage: "stored vectors",
                reason: last_faiss_error(),
            });
        }
        Ok(())
    }

    fn check_rows(&self, rows: impl Iterator<Item = u64>) -> Result<()> {
        let total = self.inner.ntotal();
        match rows.into_iter().find(|&row| row >= total) {
            Some(row) => Err(IndexerError::VectorIndex {
                stage: "stored vectors",
                reason: format!("row {row} of an index of {total} rows"),
            }),
            None => Ok(()),
        }
    }

    /// Rows `start..start + count` as stored, row-major.
    pub fn stored_vectors(&self, start: usize, count: usize) -> Result<Vec<f32>> {
        let dim = self.dim();
        if count == 0 {
            return Ok(Vec::new());
        }
        self.check_rows(std::iter::once((start + count - 1) as u64))?;
        match self.stored_access()? {
            StoredAccess::InPlace(base) => Ok(base[start * dim..(start + count) * dim].to_vec()),
            StoredAccess::RowByRow => {
                let mut out = vec![0f32; count * dim];
                for (offset, row) in out.chunks_mut(dim.max(1)).enumerate() {
                    self.reconstruct_into((start + offset) as u64, row)?;
                }
                Ok(out)
            }
        }
    }

    /// Exact top-`k` among `rows` for one query, scored against the stored vectors, best
    /// first (ties keep the lower row): the same hits as scoring the vectors that were added.
    pub fn exact_top_k_in(&self, query: &[f32], rows: &[u64], k: usize) -> Result<Vec<Hit>> {
        let dim = self.dim();
        if query.len() != dim {
            return Err(IndexerError::VectorIndex {
                stage: "search",
                reason: format!("a query of {} values for an index of dimension {dim}", query.len()),
            });
        }
        self.check_rows(rows.iter().copied())?;
        let found = match self.stored_access()? {
            StoredAccess::InPlace(base) => quarry_kernels::exact_top_k_in(query, base, dim, rows, k),
            StoredAccess::RowByRow => {
                let mut vector = vec![0f32; dim];
                let mut failure = None;
                let scored = rows
                    .iter()
                    .map_while(|&row| match self.reconstruct_into(row, &mut vector) {
                        Ok(()) => Some((row, quarry_kernels::dot(query, &vector))),
                        Err(e) => {
                            failure = Some(e);
                            None
                        }
                    });
                let found = quarry_kernels::top_k_of_scores(scored, k);
                if let Some(e) = failure {
                    return Err(e);
                }
                found
            }
        };
        Ok(found
            .into_iter()
            .map(|s| Hit {
                row: s.row,
                score: s.score,
            })
            .collect())
    }
}
