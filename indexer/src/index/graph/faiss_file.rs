//! An [`HnswGraph`] and its vectors written as FAISS writes an `IndexHNSWFlat` over inner
//! products (faiss/impl/index_write.cpp: `IHNf`, the index header, the `HNSW` struct, then
//! the `IxFI` flat storage), so that FAISS reads it, and every quarry build serves it, as an
//! index FAISS built itself.

use std::io::{self, Write};

use super::hnsw_graph::{level_probabilities, HnswGraph, UpperLevel};

/// FAISS's `METRIC_INNER_PRODUCT`.
const METRIC_INNER_PRODUCT: i32 = 0;

/// Numbers whose bytes are all initialized, with no padding: viewable as bytes.
trait Plain: Copy {}
impl Plain for f32 {}
impl Plain for f64 {}
impl Plain for i32 {}
impl Plain for u64 {}

fn as_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `Plain` numbers have no padding and every byte initialized; the view lives as
    // long as the borrow of `values`.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// `write_index_header`: dimension, rows, two unused words, trained, metric.
fn header(out: &mut Vec<u8>, dim: usize, rows: usize) {
    out.extend_from_slice(&(dim as i32).to_ne_bytes());
    out.extend_from_slice(&(rows as i64).to_ne_bytes());
    out.extend_from_slice(&(1i64 << 20).to_ne_bytes());
    out.extend_from_slice(&(1i64 << 20).to_ne_bytes());
    out.push(1);
    out.extend_from_slice(&METRIC_INNER_PRODUCT.to_ne_bytes());
}

/// FAISS's `IndexFlatIP` file up to its vectors: `IxFI`, the index header, and the count of
/// the vectors' values (`WRITEXBVECTOR`'s, which the vectors' bytes follow).
fn flat_head(dim: usize, rows: usize) -> Vec<u8> {
    let mut head = b"IxFI".to_vec();
    header(&mut head, dim, rows);
    head.extend_from_slice(&((rows * dim) as u64).to_ne_bytes());
    head
}

/// Writes FAISS's `IndexFlatIP` file over `data` (row-major, `dim` columns) to `out`, the
/// vectors from where they are (FAISS's own `add` would copy them into the index first).
pub fn write_flat_file(data: &[f32], dim: usize, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    out.write_all(&flat_head(dim, data.len() / dim.max(1)))?;
    out.write_all(as_bytes(data))
}

/// `WRITEVECTOR`: the element count, then the elements.
fn vector<T: Plain>(out: &mut Vec<u8>, values: &[T]) {
    out.extend_from_slice(&(values.len() as u64).to_ne_bytes());
    out.extend_from_slice(as_bytes(values));
}

/// The bytes of FAISS's `IndexHNSWFlat` file for an [`HnswGraph`] over its vectors, as
/// pieces in file order: the few bytes of the fields, and the links and vectors borrowed where
/// they are (a run of base-level-only rows' links is one piece), so the file can be streamed
/// to FAISS without being built in memory first.
pub struct HnswFlatFile<'a> {
    head: Vec<u8>,
    links: Vec<&'a [i32]>,
    tail: Vec<u8>,
    data: &'a [f32],
}

impl<'a> HnswFlatFile<'a> {
    /// The file of `graph` over `data` (row-major unit vectors, `dim` columns), with the search
    /// and construction breadths FAISS records.
    pub fn new(graph: &'a HnswGraph, data: &'a [f32], dim: usize, ef_construction: usize, ef_search: usize) -> Self {
        let rows = graph.rows();
        let m = graph.m;
        let mut head = Vec::new();
        head.extend_from_slice(b"IHNf");
        header(&mut head, dim, rows);
        let probabilities = level_probabilities(m);
        vector(&mut head, &probabilities);
        // Slots below each level: 2·M on the base, M on each level above.
        let cumulative: Vec<i32> = (0..=probabilities.len())
            .map(|level| {
                if level == 0 {
                    0
                } else {
                    (2 * m + (level - 1) * m) as i32
                }
            })
            .collect();
        vector(&mut head, &cumulative);
        let levels: Vec<i32> = graph.top_levels.iter().map(|&l| i32::from(l) + 1).collect();
        vector(&mut head, &levels);
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0u64);
        for &top in &graph.top_levels {
            let last = *offsets.last().unwrap_or(&0);
            offsets.push(last + (2 * m + m * top as usize) as u64);
        }
        vector(&mut head, &offsets);
        head.extend_from_slice(&offsets.last().copied().unwrap_or(0).to_ne_bytes());
        // Row by row: its base links, then its links on each level it reaches.
        let mut links = Vec::new();
        let mut run_start = 0;
        let mut cursors = vec![0usize; graph.upper.len()];
        for (row, &top) in graph.top_levels.iter().enumerate() {
            if top == 0 {
                continue;
            }
            links.push(&graph.base[run_start * 2 * m..(row + 1) * 2 * m]);
            for level in 1..=top as usize {
                let upper = &graph.upper[level - 1];
                let at = cursors[level - 1];
                debug_assert_eq!(upper.rows[at] as usize, row);
                links.push(&upper.links[at * m..(at + 1) * m]);
                cursors[level - 1] += 1;
            }
            run_start = row + 1;
        }
        links.push(&graph.base[run_start * 2 * m..rows * 2 * m]);
        let mut tail = Vec::new();
        for value in [
            graph.entry_point,
            graph.max_level() as i32,
            ef_construction as i32,
            ef_search as i32,
            1, // upper_beam, no longer read
        ] {
            tail.extend_from_slice(&value.to_ne_bytes());
        }
        tail.extend_from_slice(&flat_head(dim, rows));
        Self {
            head,
            links,
            tail,
            data,
        }
    }

    /// The file's bytes, piece by piece, in order.
    pub fn pieces(&self) -> Vec<&[u8]> {
        let mut pieces = Vec::with_capacity(self.links.len() + 3);
        pieces.push(&self.head[..]);
        pieces.extend(self.links.iter().map(|links| as_bytes(links)));
        pieces.push(&self.tail[..]);
        pieces.push(as_bytes(self.data));
        pieces
    }

    /// The file's length in bytes.
    pub fn len(&self) -> usize {
        self.pieces().iter().map(|piece| piece.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the file to `out`.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        self.pieces().into_iter().try_for_each(|piece| out.write_all(piece))
    }
}

/// The links of an `IndexHNSWFlat` file as FAISS wrote them (`read_HNSW`'s fields).
#[derive(Debug, Clone, PartialEq)]
pub struct FaissHnswLinks {
    /// Slots below each level in a row's range.
    pub cumulative: Vec<i32>,
    /// Each row's number of levels (its top level + 1).
    pub levels: Vec<i32>,
    /// Where each row's slots start in `neighbors`.
    pub offsets: Vec<u64>,
    pub neighbors: Vec<i32>,
    pub entry_point: i32,
    pub max_level: i32,
}

impl FaissHnswLinks {
    /// Row `row`'s links on `level` (empty slots left out).
    pub fn links(&self, row: usize, level: usize) -> impl Iterator<Item = i32> + '_ {
        let start = self.offsets[row] as usize;
        let range = start + self.cumulative[level] as usize..start + self.cumulative[level + 1] as usize;
        self.neighbors[range]
            .iter()
            .copied()
            .take_while(|&link| link != super::NO_LINK)
    }

    /// The links as an [`HnswGraph`] with FAISS's `M` = `m` (the file's slots: `2·m` on the
    /// base level, `m` above), so that they can be changed and written again.
    pub fn to_graph(&self, m: usize) -> io::Result<HnswGraph> {
        let rows = self.levels.len();
        let slots = |level: usize| (self.cumulative[level + 1] - self.cumulative[level]) as usize;
        if self.cumulative.len() < 2 || slots(0) != 2 * m || (self.max_level > 0 && slots(1) != m) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("HNSW links: not the slots of M = {m}"),
            ));
        }
        let row_links = |row: usize, level: usize| {
            let start = self.offsets[row] as usize + self.cumulative[level] as usize;
            &self.neighbors[start..start + slots(level)]
        };
        let top_levels: Vec<u8> = self.levels.iter().map(|&levels| (levels - 1) as u8).collect();
        let base = (0..rows).flat_map(|row| row_links(row, 0).iter().copied()).collect();
        let upper = (1..=self.max_level.max(0) as usize)
            .map(|level| {
                let rows: Vec<u32> = (0..rows as u32)
                    .filter(|&row| top_levels[row as usize] as usize >= level)
                    .collect();
                let links = rows
                    .iter()
                    .flat_map(|&row| row_links(row as usize, level).iter().copied())
                    .collect();
                UpperLevel { rows, links }
            })
            .collect();
        Ok(HnswGraph {
            m,
            top_levels,
            base,
            upper,
            entry_point: self.entry_point,
        })
    }

    /// Links a row keeps on the base level, on average: what a search reads at each row
    /// it expands there.
    pub fn mean_base_links(&self) -> f64 {
        let rows = self.levels.len();
        (0..rows).map(|row| self.links(row, 0).count()).sum::<usize>() as f64 / rows.max(1) as f64
    }
}

/// Reads the HNSW links of an `IndexHNSWFlat` file written by FAISS (or [`HnswFlatFile`]);
/// the storage after them is not read.
pub fn read_hnsw_links(bytes: &[u8]) -> io::Result<FaissHnswLinks> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.take(4)? != b"IHNf" {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not an IndexHNSWFlat file"));
    }
    reader.take(33)?;
    let _probabilities: Vec<u64> = reader.vector()?;
    let cumulative: Vec<i32> = reader.vector()?;
    let levels: Vec<i32> = reader.vector()?;
    let offsets: Vec<u64> = reader.vector()?;
    let neighbors: Vec<i32> = reader.vector()?;
    let entry_point = i32::from_ne_bytes(reader.array()?);
    let max_level = i32::from_ne_bytes(reader.array()?);
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("HNSW links: {what}"));
    if offsets.len() != levels.len() + 1 || offsets.last().copied().unwrap_or(0) as usize != neighbors.len() {
        return Err(bad("offsets do not cover the links"));
    }
    if levels.iter().any(|&l| l < 1 || l as usize >= cumulative.len()) {
        return Err(bad("a row's level is out of range"));
    }
    Ok(FaissHnswLinks {
        cumulative,
        levels,
        offsets,
        neighbors,
        entry_point,
        max_level,
    })
}

/// Reads native-endian fields from a byte slice, refusing to run past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> io::Result<&'a [u8]> {
        let end = self.at.checked_add(count).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "HNSW links: the file ends early"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// `READVECTOR`: a count, then that many fields.
    fn vector<T: Field>(&mut self) -> io::Result<Vec<T>> {
        let count = u64::from_ne_bytes(self.array()?) as usize;
        let bytes = self.take(count.saturating_mul(T::SIZE))?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::decode).collect())
    }
}

/// A fixed-size number in a FAISS file.
trait Field {
    const SIZE: usize;
    fn decode(bytes: &[u8]) -> Self;
}

/// Each number type is read as FAISS wrote it: native-endian, `size_of` bytes.
macro_rules! field {
    ($($number:ty),*) => {$(
        impl Field for $number {
            const SIZE: usize = std::mem::size_of::<$number>();
            fn decode(bytes: &[u8]) -> Self {
                <$number>::from_ne_bytes(bytes.try_into().expect("a field's bytes are its size"))
            }
        }
    )*};
}

field!(i32, u64);
