//! The levels above the base, built by FAISS's own HNSW insertion over the rows that reach
//! them (one row in `M`): few rows, on the CPU, and with HNSW's long-range links, which a
//! level of kNN lists lacks where the data falls into separate clusters (greedy descent
//! through the levels must be able to cross between clusters; the base level need not).

use faiss::index::autotune::ParameterSpace;
use faiss::{index_factory, Index, MetricType};

use super::faiss_file::read_hnsw_links;
use super::hnsw_graph::{UpperLevel, NO_LINK};
use crate::error::{IndexerError, Result};
use crate::index::faiss_bytes::write_index_to_bytes;
use crate::index::faiss_index::err;

/// The levels above the base for `rows_at` (ascending; their vectors `data_at`, row-major):
/// each row's top level (at least 1), levels 1, 2, … with `m` slots a row, and the entry
/// point, all in the rows' own numbers.
pub struct UpperLevels {
    pub top_levels: Vec<u8>,
    pub levels: Vec<UpperLevel>,
    pub entry_point: u32,
}

/// FAISS builds an HNSW over the upper rows; its base level is their level 1 (its nearest
/// `m` of the `2·m` kept), its level L their level L + 1.
pub fn faiss_upper_levels(
    rows_at: &[u32],
    data_at: &[f32],
    dim: usize,
    m: usize,
    ef_construction: usize,
) -> Result<UpperLevels> {
    let mut index =
        index_factory(dim as u32, format!("HNSW{m},Flat"), MetricType::InnerProduct).map_err(err("create"))?;
    ParameterSpace::new()
        .and_then(|space| space.set_index_parameter(&index, "efConstruction", ef_construction as f64))
        .map_err(err("parameters"))?;
    index.add(data_at).map_err(err("add"))?;
    let bytes = write_index_to_bytes(&index)?;
    drop(index);
    let links = read_hnsw_links(&bytes).map_err(|e| IndexerError::VectorIndex {
        stage: "read",
        reason: e.to_string(),
    })?;
    let top_levels: Vec<u8> = links.levels.iter().map(|&levels| levels.clamp(1, 255) as u8).collect();
    let max_level = top_levels.iter().copied().max().unwrap_or(0);
    let levels = (1..=max_level)
        .map(|level| {
            let on_level: Vec<usize> = (0..rows_at.len()).filter(|&i| top_levels[i] >= level).collect();
            let mut slots = vec![NO_LINK; on_level.len() * m];
            for (slot, &i) in slots.chunks_mut(m).zip(&on_level) {
                for (place, link) in slot.iter_mut().zip(links.links(i, level as usize - 1)) {
                    *place = rows_at[link as usize] as i32;
                }
            }
            UpperLevel {
                rows: on_level.iter().map(|&i| rows_at[i]).collect(),
                links: slots,
            }
        })
        .collect();
    Ok(UpperLevels {
        top_levels,
        levels,
        entry_point: rows_at[links.entry_point.max(0) as usize],
    })
}
