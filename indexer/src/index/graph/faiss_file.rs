//! An [`HnswGraph`] and its vectors written as FAISS writes an `IndexHNSWFlat` over inner
//! products (faiss/impl/index_write.cpp: `IHNf`, the index header, the `HNSW` struct, then
//! the `IxFI` flat storage), so that FAISS reads it, and every quarry build serves it, as an
//! index FAISS built itself.

use std::io::{self, Write};

use super::hnsw_graph::{level_probabilities, HnswGraph};

/// FAISS's `fourcc`: the four bytes in file order.
fn fourcc(tag: &[u8; 4]) -> [u8; 4] {
    *tag
}

/// FAISS's `METRIC_INNER_PRODUCT`.
const METRIC_INNER_PRODUCT: i32 = 0;

fn as_bytes<T: Copy>(values: &[T]) -> &[u8] {
    // SAFETY: only called with f32, f64, i32 and u64 slices: plain numbers without padding,
    // every byte initialized; the view lives as long as the borrow of `values`.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// `write_index_header`: dimension, rows, two unused words, trained, metric.
fn header(out: &mut impl Write, dim: usize, rows: usize) -> io::Result<()> {
    out.write_all(&(dim as i32).to_ne_bytes())?;
    out.write_all(&(rows as i64).to_ne_bytes())?;
    out.write_all(&(1i64 << 20).to_ne_bytes())?;
    out.write_all(&(1i64 << 20).to_ne_bytes())?;
    out.write_all(&[1u8])?;
    out.write_all(&METRIC_INNER_PRODUCT.to_ne_bytes())
}

/// `WRITEVECTOR`: the element count, then the elements.
fn vector<T: Copy>(out: &mut impl Write, values: &[T]) -> io::Result<()> {
    out.write_all(&(values.len() as u64).to_ne_bytes())?;
    out.write_all(as_bytes(values))
}

/// The bytes [`write_hnsw_flat`] writes for `rows` vectors of `dim` over `graph`.
pub fn hnsw_flat_size(graph: &HnswGraph, dim: usize) -> usize {
    let rows = graph.rows();
    let links: usize = graph
        .top_levels
        .iter()
        .map(|&l| 2 * graph.m + graph.m * l as usize)
        .sum();
    let levels = level_probabilities(graph.m).len();
    let header = 33;
    4 + header
        + (8 + 8 * levels)
        + (8 + 4 * (levels + 1))
        + (8 + 4 * rows)
        + (8 + 8 * (rows + 1))
        + (8 + 4 * links)
        + 5 * 4
        + 4
        + header
        + 8
        + 4 * rows * dim
}

/// Writes `graph` over `data` (row-major unit vectors, `dim` columns) as FAISS's
/// `IndexHNSWFlat` file, with the search and construction breadths FAISS records.
pub fn write_hnsw_flat(
    out: &mut impl Write,
    graph: &HnswGraph,
    data: &[f32],
    dim: usize,
    ef_construction: usize,
    ef_search: usize,
) -> io::Result<()> {
    let rows = graph.rows();
    let m = graph.m;
    out.write_all(&fourcc(b"IHNf"))?;
    header(out, dim, rows)?;
    let probabilities = level_probabilities(m);
    vector(out, &probabilities)?;
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
    vector(out, &cumulative)?;
    let levels: Vec<i32> = graph.top_levels.iter().map(|&l| i32::from(l) + 1).collect();
    vector(out, &levels)?;
    let mut offsets = Vec::with_capacity(rows + 1);
    offsets.push(0u64);
    for &top in &graph.top_levels {
        let last = *offsets.last().unwrap_or(&0);
        offsets.push(last + (2 * m + m * top as usize) as u64);
    }
    vector(out, &offsets)?;
    let links = *offsets.last().unwrap_or(&0);
    out.write_all(&links.to_ne_bytes())?;
    // Row by row: its base links, then its links on each level it reaches.
    let mut cursors = vec![0usize; graph.upper.len()];
    for (row, &top) in graph.top_levels.iter().enumerate() {
        out.write_all(as_bytes(&graph.base[row * 2 * m..(row + 1) * 2 * m]))?;
        for level in 1..=top as usize {
            let upper = &graph.upper[level - 1];
            let at = cursors[level - 1];
            debug_assert_eq!(upper.rows[at] as usize, row);
            out.write_all(as_bytes(&upper.links[at * m..(at + 1) * m]))?;
            cursors[level - 1] += 1;
        }
    }
    drop(offsets);
    for value in [
        graph.entry_point,
        graph.max_level() as i32,
        ef_construction as i32,
        ef_search as i32,
        1, // upper_beam, no longer read
    ] {
        out.write_all(&value.to_ne_bytes())?;
    }
    out.write_all(&fourcc(b"IxFI"))?;
    header(out, dim, rows)?;
    out.write_all(&((rows * dim) as u64).to_ne_bytes())?;
    out.write_all(as_bytes(data))
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
}

/// Reads the HNSW links of an `IndexHNSWFlat` file written by FAISS (or [`write_hnsw_flat`]);
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

impl Field for i32 {
    const SIZE: usize = 4;
    fn decode(bytes: &[u8]) -> Self {
        let mut word = [0u8; 4];
        word.copy_from_slice(bytes);
        i32::from_ne_bytes(word)
    }
}

impl Field for u64 {
    const SIZE: usize = 8;
    fn decode(bytes: &[u8]) -> Self {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        u64::from_ne_bytes(word)
    }
}
