//! HNSW files that quarry writes for FAISS to read: a graph-built HNSW's, and FAISS's own
//! insertion over the rows that are not copies of another, whose copies are then linked
//! through their groups ([`graph::Copies`]): every row that holds the same vector as
//! another (a title or a line of boilerplate in many documents) would otherwise be
//! inserted among its copies, all ties, and searches would find few of them.

use std::io::Write;
use std::time::Instant;

use faiss::index::autotune::ParameterSpace;
use faiss::index::IndexImpl;
use faiss::{index_factory, Index, MetricType};

use super::faiss_index::err;
use super::graph::{self, HnswGraph};
use crate::error::{IndexerError, Result};

/// What became of the file quarry writes for FAISS of a [`HnswGraph`]: read by FAISS into
/// memory, or written to its output alone.
pub(super) enum GraphFile {
    Read(IndexImpl),
    /// In the output only: FAISS maps it from the saved file when it is to be searched
    /// (`load_vector_index`), as a server does, so the build holds no second copy of the
    /// vectors and the links.
    Written,
}

/// `graph` over `data` as FAISS's own `IndexHNSWFlat`: with `out`, its file written there;
/// without, read by FAISS from the file's pieces, never joined in memory.
pub(super) fn graph_file(
    graph: &HnswGraph,
    data: &[f32],
    dim: usize,
    ef_construction: usize,
    ef_search: usize,
    out: Option<&mut (dyn Write + Send)>,
) -> Result<GraphFile> {
    let file = graph::HnswFlatFile::new(graph, data, dim, ef_construction, ef_search);
    match out {
        Some(mut out) => {
            file.write_to(&mut out).map_err(|e| IndexerError::VectorIndex {
                stage: "write",
                reason: e.to_string(),
            })?;
            Ok(GraphFile::Written)
        }
        None => super::faiss_bytes::read_index_from_pieces(&file.pieces()).map(GraphFile::Read),
    }
}

/// FAISS's HNSW`m` built by its own insertion over one row of each group of identical rows
/// of `data`, the copies then linked through their groups, written to `out` when given, else
/// read back by FAISS ([`graph_file`]); None when every row is distinct (FAISS then builds
/// over `data` as it is).
pub(super) fn faiss_hnsw_over_distinct_rows(
    dim: usize,
    m: usize,
    ef_construction: usize,
    ef_search: usize,
    data: &[f32],
    out: Option<&mut (dyn Write + Send)>,
) -> Result<Option<GraphFile>> {
    let started = Instant::now();
    let Some(copies) = graph::find_copies(data, dim) else {
        return Ok(None);
    };
    let distinct = super::gather_rows(data, dim, copies.distinct.iter().map(|&row| row as usize));
    let found = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut inner =
        index_factory(dim as u32, format!("HNSW{m},Flat"), MetricType::InnerProduct).map_err(err("create"))?;
    ParameterSpace::new()
        .and_then(|space| space.set_index_parameter(&inner, "efConstruction", ef_construction as f64))
        .map_err(err("parameters"))?;
    inner.add(&distinct).map_err(err("add"))?;
    let added = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let bytes = super::faiss_bytes::write_index_to_bytes(&inner)?;
    drop(inner);
    drop(distinct);
    let unreadable = |e: std::io::Error| IndexerError::VectorIndex {
        stage: "build",
        reason: format!("FAISS's HNSW links: {e}"),
    };
    let links = graph::read_hnsw_links(&bytes).map_err(unreadable)?;
    drop(bytes);
    let mut graph = copies.expand(links.to_graph(m).map_err(unreadable)?);
    drop(links);
    let reachability = graph::make_reachable(&mut graph, data, dim);
    let file = graph_file(&graph, data, dim, ef_construction, ef_search, out)?;
    tracing::info!(
        "vector index HNSW{m},Flat over {} rows by FAISS: {} rows are copies of another, linked through their groups ({found:.2} s to find them); FAISS's insertion of the other {} {added:.2} s, the copies' links and the file {:.2} s (links given to {} rows no row linked to, {} into and {} out of parts that linked only among themselves)",
        data.len() / dim.max(1),
        copies.copies(),
        copies.distinct.len(),
        started.elapsed().as_secs_f64(),
        reachability.orphans,
        reachability.links_in,
        reachability.links_out,
    );
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{build_vector_index, ExactTruth, FaissIndex, IndexSpec, VectorIndex};

    fn faiss_own_hnsw(data: &[f32], dim: usize, m: usize, ef_construction: usize) -> IndexImpl {
        let mut inner = index_factory(dim as u32, format!("HNSW{m},Flat"), MetricType::InnerProduct).unwrap();
        ParameterSpace::new()
            .unwrap()
            .set_index_parameter(&inner, "efConstruction", ef_construction as f64)
            .unwrap();
        inner.add(data).unwrap();
        inner
    }

    #[test]
    fn faiss_links_read_as_a_graph_write_faiss_own_file_again() {
        let (dim, m) = (16, 8);
        let data = crate::index::test_clustered_vectors(3_000, dim);
        let bytes = super::super::faiss_bytes::write_index_to_bytes(&faiss_own_hnsw(&data, dim, m, 40)).unwrap();
        let graph = graph::read_hnsw_links(&bytes).unwrap().to_graph(m).unwrap();
        assert!(graph.max_level() >= 1);
        let mut written = Vec::new();
        // FAISS's default efSearch is 16.
        graph::HnswFlatFile::new(&graph, &data, dim, 40, 16)
            .write_to(&mut written)
            .unwrap();
        let first = written.iter().zip(&bytes).position(|(a, b)| a != b);
        assert!(
            written == bytes,
            "the file differs from FAISS's own: lengths {} {}, first at {first:?}",
            written.len(),
            bytes.len()
        );
        let error = graph::read_hnsw_links(&bytes).unwrap().to_graph(m + 1).unwrap_err();
        assert!(error.to_string().contains("M = 9"), "{error}");
    }

    /// Clustered rows with copies appended: three rows copied 300 times each, and sixty
    /// rows 2 to 20 times.
    fn rows_with_copies(dim: usize) -> Vec<f32> {
        let mut data = crate::index::test_clustered_vectors(6_000, dim);
        let mut copy = |of: usize, count: usize| {
            let row = data[of * dim..(of + 1) * dim].to_vec();
            (0..count).for_each(|_| data.extend_from_slice(&row));
        };
        for of in [10, 20, 30] {
            copy(of, 300);
        }
        for of in 100..160 {
            copy(of, 2 + of % 19);
        }
        data
    }

    /// HNSW16 with efConstruction 80, the tests' shape.
    fn hnsw(builder: crate::index::HnswBuilder, ef_search: usize) -> IndexSpec {
        IndexSpec::Hnsw {
            m: 16,
            ef_construction: 80,
            ef_search,
            builder,
        }
    }

    /// How many rows a walk over the base level's links of `file` (an HNSW of M = 16)
    /// reaches from `start`.
    fn reached_from(file: &[u8], start: usize) -> usize {
        let links = graph::read_hnsw_links(file).unwrap();
        links.to_graph(16).unwrap().reached_on_the_base(start)
    }

    #[test]
    fn faiss_finds_the_rows_around_copies_once_they_are_folded() {
        let dim = 32;
        let data = rows_with_copies(dim);
        let rows = data.len() / dim;
        // Every 17th row: copies and the rows of their clusters among them.
        let queries: Vec<f32> = (0..rows)
            .step_by(17)
            .flat_map(|row| data[row * dim..(row + 1) * dim].to_vec())
            .collect();
        let truth = ExactTruth::of(&data, dim, queries, 10).unwrap();
        let spec = hnsw(crate::index::HnswBuilder::Faiss, 64);
        // FAISS inserting every copy: about 0.92 here, whatever efSearch.
        let plain = FaissIndex::ready(faiss_own_hnsw(&data, dim, 16, 80), &spec).unwrap();
        let plain_recall = truth.recall_of(&plain).unwrap();
        let folded = build_vector_index(&spec, dim, &data).unwrap();
        assert_eq!(folded.len(), rows);
        let folded_recall = truth.recall_of(&folded).unwrap();
        assert!(
            folded_recall >= 0.99,
            "recall@10 {folded_recall} (every copy inserted: {plain_recall})"
        );
        // From a copy in the largest group, the base level reaches every row.
        let mut file = Vec::new();
        folded.write_to(&mut file).unwrap();
        assert_eq!(reached_from(&file, 6_150), rows);
    }

    #[test]
    fn a_graph_built_hnsw_leads_every_row_to_every_other_copies_and_clusters_alike() {
        let dim = 32;
        let data = rows_with_copies(dim);
        let rows = data.len() / dim;
        // Searched at efSearch 128: at 64, FAISS's multi-threaded insertion of the levels
        // above makes the recall vary from build to build (0.984-0.998 here) across the
        // figure a build without the fixes reaches (0.982-0.987). At 128 a build with them
        // gave 0.9955-1 in 60 builds, three processes at a time on two cores, but 0.9933
        // once and 0.9865 once in clean CI runs among hundreds of other tests, and one
        // without them 0.984. So three builds are made and their mean held to 0.99: one
        // poor build among good ones passes, builds without the fixes do not.
        let spec = hnsw(crate::index::HnswBuilder::Graph, 128);
        let queries: Vec<f32> = (0..rows)
            .step_by(17)
            .flat_map(|row| data[row * dim..(row + 1) * dim].to_vec())
            .collect();
        let truth = ExactTruth::of(&data, dim, queries, 10).unwrap();
        let recalls: Vec<f64> = (0..3)
            .map(|_| {
                let index = crate::index::build_graph_hnsw(&spec, dim, &data, &Default::default()).unwrap();
                let mut file = Vec::new();
                index.write_to(&mut file).unwrap();
                // A group of 301 is longer than a kNN list (64 here): unfolded, its rows
                // would list only each other. And no cluster is left that no walk enters.
                for start in [10, 6_000, 6_299, 6_900 + 3].into_iter().chain((0..rows).step_by(97)) {
                    assert_eq!(reached_from(&file, start), rows, "from row {start}");
                }
                truth.recall_of(&index).unwrap()
            })
            .collect();
        let mean = recalls.iter().sum::<f64>() / recalls.len() as f64;
        assert!(mean >= 0.99, "recall@10 of three builds {recalls:?}");
    }
}
