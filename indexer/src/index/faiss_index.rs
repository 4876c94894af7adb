//! [`VectorIndex`] on FAISS: builds (training IVF on a seeded sample), searches, saves and loads.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use faiss::index::flat::FlatIndex;
use faiss::index::io_flags::IoFlags;
use faiss::index::ivf_flat::IVFFlatIndexImpl;
use faiss::index::{autotune::ParameterSpace, IndexImpl, NativeIndex, UpcastIndex};
use faiss::search_params::{SearchParametersIVFImpl, SearchParametersImpl};
use faiss::selector::IdSelector;
use faiss::{index_factory, Index, MetricType};

use super::faiss_hnsw::{faiss_hnsw_over_distinct_rows, graph_file, GraphFile};
use super::graph::{GraphBuildOptions, GraphPrune};
use super::spec::{HnswBuilder, IvfTrainer};
use super::{Hit, IndexSpec, RowSet, VectorIndex};
use crate::error::{IndexerError, Result};

/// A FAISS index with the spec it was built from.
pub struct FaissIndex {
    pub(super) inner: IndexImpl,
    pub(super) spec: IndexSpec,
}

pub(super) fn err(stage: &'static str) -> impl Fn(faiss::error::Error) -> IndexerError {
    move |e| IndexerError::VectorIndex {
        stage,
        reason: e.to_string(),
    }
}

/// Applies the search-time parameters (efSearch, nprobe) of a spec.
fn apply_search_params(index: &IndexImpl, spec: &IndexSpec) -> Result<()> {
    let space = ParameterSpace::new().map_err(err("parameters"))?;
    match spec {
        IndexSpec::Hnsw { ef_search, .. } => space.set_index_parameter(index, "efSearch", *ef_search as f64),
        IndexSpec::IvfFlat { nprobe, .. } | IndexSpec::IvfPq { nprobe, .. } => {
            space.set_index_parameter(index, "nprobe", *nprobe as f64)
        }
        IndexSpec::Flat => Ok(()),
    }
    .map_err(err("parameters"))
}

/// Seed of the rows sampled to train IVF (a seeded sample keeps the build reproducible).
const TRAINING_SAMPLE_SEED: u64 = 0x9e37_79b9;

/// Lloyd iterations of the kernel-trained IVF centroids.
pub const KERNEL_KMEANS_ITERATIONS: usize = 20;
/// Seed of the kernel-trained IVF centroids (k-means++ draws).
pub const KERNEL_KMEANS_SEED: u64 = 0x1f1f;

/// An IVF-Flat index built by quarry's vector kernels (the GPU in a `cuda` build, else the
/// CPU twins): they train the centroids on the sample and assign every row to its list;
/// FAISS takes the centroids as its coarse quantizer and the rows with their precomputed
/// lists (`add_core`), so it never scores rows against centroids itself.
fn ivf_from_kernels(
    dim: usize,
    nlist: usize,
    training: &[f32],
    data: &[f32],
    times: &mut BuildTimes,
) -> Result<IndexImpl> {
    let kernels = super::vector_kernels();
    let started = Instant::now();
    let centroids = kernels.kmeans_train(
        training,
        dim,
        quarry_kernels::KMeansConfig {
            k: nlist,
            iterations: KERNEL_KMEANS_ITERATIONS,
            seed: KERNEL_KMEANS_SEED,
        },
    )?;
    times.train = started.elapsed().as_secs_f64();
    let mut quantizer = FlatIndex::new_ip(dim as u32).map_err(err("quantizer"))?;
    quantizer.add(&centroids).map_err(err("quantizer"))?;
    let ivf = IVFFlatIndexImpl::new(
        quantizer,
        dim as u32,
        (centroids.len() / dim) as u32,
        MetricType::InnerProduct,
    )
    .map_err(err("create"))?;
    let started = Instant::now();
    let lists: Vec<i64> = kernels
        .kmeans_assign(data, &centroids, dim)?
        .into_iter()
        .map(|(list, _)| i64::from(list))
        .collect();
    times.assign = Some(started.elapsed().as_secs_f64());
    let started = Instant::now();
    // SAFETY: `ivf` is a live IndexIVFFlat of dimension `dim`; `data` holds lists.len() rows
    // of `dim` floats and `lists` one list number below nlist per row; null ids mean
    // sequential ids from ntotal, as `add` gives.
    let code = unsafe {
        faiss_sys::faiss_IndexIVFFlat_add_core(
            ivf.inner_ptr(),
            lists.len() as i64,
            data.as_ptr(),
            std::ptr::null(),
            lists.as_ptr(),
        )
    };
    if code != 0 {
        return Err(IndexerError::VectorIndex {
            stage: "add",
            reason: last_faiss_error(),
        });
    }
    times.add = started.elapsed().as_secs_f64();
    Ok(ivf.upcast())
}

/// An HNSW index whose links quarry's graph build made (`index/graph/`), as the
/// `IndexHNSWFlat` file FAISS would write, streamed from the graph and the vectors: with
/// `out`, written there alone; without, read by FAISS.
fn hnsw_from_graph(
    dim: usize,
    m: usize,
    ef_construction: usize,
    ef_search: usize,
    data: &[f32],
    out: Option<&mut (dyn Write + Send)>,
    options: &GraphBuildOptions,
) -> Result<GraphFile> {
    let kernels = super::vector_kernels();
    let started = Instant::now();
    let (graph, times) = super::graph::build_hnsw_graph(kernels.as_ref(), data, dim, m, ef_construction, options)?;
    let built = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let file = graph_file(&graph, data, dim, ef_construction, ef_search, out)?;
    let to = match file {
        GraphFile::Read(_) => "read by FAISS",
        GraphFile::Written => "written",
    };
    drop(graph);
    let pruning = match options.prune {
        GraphPrune::Detours => "detour counts",
        GraphPrune::Neighbourhood => "neighbourhood pruning",
    };
    tracing::info!(
        "vector index HNSW{m},Flat over {} rows by the graph build on {}: copies of another row {} ({:.2} s to find and link them), kNN lists {:.2} s ({} lists a row; upper levels {:.2} s beside them), {pruning} {:.2} s, reverse and long links {:.2} s (links given to {} rows no row linked to, {} into and {} out of parts that linked only among themselves; {:.2} s of these two and the copies' time) ({built:.2} s), its file {to} in {:.2} s; {:.1} base links a row",
        data.len() / dim.max(1),
        kernels.device(),
        times.copies,
        times.copies_secs,
        times.knn,
        options.memberships,
        times.upper,
        times.detours,
        times.links,
        times.reachability.orphans,
        times.reachability.links_in,
        times.reachability.links_out,
        times.reachability_secs,
        started.elapsed().as_secs_f64(),
        times.base_links
    );
    Ok(file)
}

/// `M`, efConstruction and efSearch of an HNSW that the graph build makes (`spec` asks for it
/// and there are rows), None for any other build.
fn graph_built(spec: &IndexSpec, rows: usize) -> Option<(usize, usize, usize)> {
    match spec {
        IndexSpec::Hnsw {
            m,
            ef_construction,
            ef_search,
            builder,
        } if builder.resolved() == HnswBuilder::Graph && rows > 0 => Some((*m, *ef_construction, *ef_search)),
        _ => None,
    }
}

/// Seconds spent in each step of one build, logged so that a slow build says where its
/// time went.
#[derive(Debug, Default)]
struct BuildTimes {
    sample: f64,
    train: f64,
    /// Lists computed apart from FAISS (quarry's kernels); FAISS's own add assigns inside `add`.
    assign: Option<f64>,
    add: f64,
}

impl BuildTimes {
    fn log(&self, spec: &IndexSpec, rows: usize, training_rows: usize, trainer: &str) {
        let factory = spec.factory();
        if training_rows == 0 {
            tracing::info!("vector index {factory} over {rows} rows: add {:.2} s", self.add);
            return;
        }
        let assign = self
            .assign
            .map(|secs| format!(", assign {secs:.2} s"))
            .unwrap_or_default();
        tracing::info!(
            "vector index {factory} over {rows} rows: training sample of {training_rows} rows {:.2} s, train ({trainer}) {:.2} s{assign}, add {:.2} s",
            self.sample,
            self.train,
            self.add
        );
    }
}

/// A seeded sample of `count` rows for training ([`super::seeded_rows`]), timed into `times`.
fn timed_sample<'a>(data: &'a [f32], dim: usize, count: usize, times: &mut BuildTimes) -> Cow<'a, [f32]> {
    let started = Instant::now();
    let sample = super::seeded_rows(data, dim, count, TRAINING_SAMPLE_SEED);
    times.sample = started.elapsed().as_secs_f64();
    sample
}

/// A vector index built with its file written.
pub enum BuiltVectorIndex {
    /// Built in memory (by FAISS, or read by FAISS from quarry's file when no file was
    /// written), its file written from it.
    InMemory(FaissIndex),
    /// An HNSW whose file quarry writes itself (graph-built, or FAISS's over rows with
    /// copies): written, never read into memory. [`Self::searchable`] maps it from there.
    Written,
}

impl BuiltVectorIndex {
    /// The index to search: the one in memory, or FAISS's map of the file at `path` it was
    /// written to (as a server loads it: the vectors and links are page cache, not a copy).
    pub fn searchable(self, path: &Path, spec: &IndexSpec) -> Result<FaissIndex> {
        match self {
            Self::InMemory(index) => Ok(index),
            Self::Written => load_vector_index(path, spec),
        }
    }

    /// The index in memory, for builds that write no file.
    fn held(self) -> Result<FaissIndex> {
        match self {
            Self::InMemory(index) => Ok(index),
            Self::Written => Err(IndexerError::VectorIndex {
                stage: "build",
                reason: "the index was written to a file, not kept in memory".into(),
            }),
        }
    }
}

impl GraphFile {
    /// What the build made of the file: FAISS's index in memory, ready for `spec`, or the
    /// file written.
    fn built(self, spec: &IndexSpec) -> Result<BuiltVectorIndex> {
        match self {
            GraphFile::Read(inner) => FaissIndex::ready(inner, spec).map(BuiltVectorIndex::InMemory),
            GraphFile::Written => Ok(BuiltVectorIndex::Written),
        }
    }
}

/// Builds an index over `rows` unit vectors (row-major, `dim` columns).
pub fn build_vector_index(spec: &IndexSpec, dim: usize, data: &[f32]) -> Result<FaissIndex> {
    build(spec, dim, data, None)?.held()
}

/// [`build_vector_index`]; with `out`, a flat index, or an HNSW whose file quarry writes
/// itself (a graph-built one, or FAISS's over rows with copies), is written there and not read.
fn build(spec: &IndexSpec, dim: usize, data: &[f32], out: Option<&mut (dyn Write + Send)>) -> Result<BuiltVectorIndex> {
    let rows = data.len() / dim.max(1);
    let out = match (spec, out) {
        (IndexSpec::Flat, Some(out)) if !data.is_empty() => return flat_file(dim, data, out),
        (_, out) => out,
    };
    let mut times = BuildTimes::default();
    if let IndexSpec::IvfFlat {
        nlist,
        train_sample,
        trainer,
        ..
    } = spec
    {
        if trainer.resolved() == IvfTrainer::Kernels {
            let training = timed_sample(data, dim, *train_sample, &mut times);
            let inner = ivf_from_kernels(dim, *nlist, &training, data, &mut times)?;
            times.log(spec, rows, training.len() / dim.max(1), "quarry kernels");
            return FaissIndex::ready(inner, spec).map(BuiltVectorIndex::InMemory);
        }
    }
    if let Some((m, ef_construction, ef_search)) = graph_built(spec, rows) {
        return hnsw_from_graph(
            dim,
            m,
            ef_construction,
            ef_search,
            data,
            out,
            &GraphBuildOptions::default(),
        )?
        .built(spec);
    }
    if let IndexSpec::Hnsw {
        m,
        ef_construction,
        ef_search,
        ..
    } = spec
    {
        if let Some(file) = faiss_hnsw_over_distinct_rows(dim, *m, *ef_construction, *ef_search, data, out)? {
            return file.built(spec);
        }
    }
    let mut inner = index_factory(dim as u32, spec.factory(), MetricType::InnerProduct).map_err(err("create"))?;
    if let IndexSpec::Hnsw { ef_construction, .. } = spec {
        ParameterSpace::new()
            .and_then(|space| space.set_index_parameter(&inner, "efConstruction", *ef_construction as f64))
            .map_err(err("parameters"))?;
    }
    let mut training_rows = 0;
    if let IndexSpec::IvfFlat { train_sample, .. } | IndexSpec::IvfPq { train_sample, .. } = spec {
        // A seeded sample keeps the build reproducible.
        let training = timed_sample(data, dim, *train_sample, &mut times);
        training_rows = training.len() / dim.max(1);
        let started = Instant::now();
        inner.train(&training).map_err(err("train"))?;
        times.train = started.elapsed().as_secs_f64();
    }
    let started = Instant::now();
    inner.add(data).map_err(err("add"))?;
    times.add = started.elapsed().as_secs_f64();
    times.log(spec, rows, training_rows, "FAISS");
    FaissIndex::ready(inner, spec).map(BuiltVectorIndex::InMemory)
}

/// A flat index's file written to `out` straight from the rows: the same bytes FAISS writes
/// for the index its `add` would build, without that copy of every vector (1.5 GB at 1M rows
/// of 384 dimensions).
fn flat_file(dim: usize, data: &[f32], out: &mut (dyn Write + Send)) -> Result<BuiltVectorIndex> {
    let started = Instant::now();
    super::graph::write_flat_file(data, dim, out).map_err(|e| IndexerError::VectorIndex {
        stage: "write",
        reason: e.to_string(),
    })?;
    tracing::info!(
        "vector index Flat over {} rows: its file written from the rows in {:.2} s",
        data.len() / dim.max(1),
        started.elapsed().as_secs_f64()
    );
    Ok(BuiltVectorIndex::Written)
}

/// [`build_vector_index`], with the index's file (the bytes [`VectorIndex::save`] writes)
/// written into `out`: a flat index's, and an HNSW's whose file quarry writes (graph-built,
/// or FAISS's over rows with copies), straight from the vectors (and the links), and not read
/// into memory; any other index's by FAISS once it is built.
pub fn build_vector_index_into(
    spec: &IndexSpec,
    dim: usize,
    data: &[f32],
    out: &mut (dyn Write + Send),
) -> Result<BuiltVectorIndex> {
    let built = build(spec, dim, data, Some(&mut *out))?;
    if let BuiltVectorIndex::InMemory(index) = &built {
        index.write_to(out)?;
    }
    Ok(built)
}

/// The HNSW index `spec` names (its `M`, efConstruction and efSearch) built by the graph
/// build with `options`: what `--hnsw-builder graph` builds, with other choices below the
/// index's parameters (`quarry bench-hnsw-build --graph-variants` compares them).
pub fn build_graph_hnsw(spec: &IndexSpec, dim: usize, data: &[f32], options: &GraphBuildOptions) -> Result<FaissIndex> {
    let IndexSpec::Hnsw {
        m,
        ef_construction,
        ef_search,
        ..
    } = spec
    else {
        return Err(IndexerError::VectorIndex {
            stage: "build",
            reason: format!("the graph build makes HNSW indexes, not {}", spec.factory()),
        });
    };
    if data.is_empty() {
        return build_vector_index(spec, dim, data);
    }
    hnsw_from_graph(dim, *m, *ef_construction, *ef_search, data, None, options)?
        .built(spec)?
        .held()
}

impl FaissIndex {
    /// A built or loaded index, made ready to be shared: its search-time parameters set and
    /// its stored vectors made readable.
    pub(super) fn ready(inner: IndexImpl, spec: &IndexSpec) -> Result<Self> {
        apply_search_params(&inner, spec)?;
        let mut index = FaissIndex {
            inner,
            spec: spec.clone(),
        };
        index.prepare_stored_vectors()?;
        Ok(index)
    }

    /// FAISS's search of `queries` (row-major) for `k` each, through its C API on a shared
    /// reference: labels (-1 where fewer than k were found) and scores, k per query. FAISS
    /// documents searches of a CPU index as safe to run concurrently (they only read it);
    /// nothing changes this index once built — its search-time parameters are set before it
    /// is shared, a filter travels in the call's own `params`.
    fn search_raw(
        &self,
        queries: &[f32],
        k: usize,
        params: Option<&SearchParametersImpl>,
    ) -> Result<(Vec<i64>, Vec<f32>)> {
        let dim = self.inner.d() as usize;
        if dim == 0 || !queries.len().is_multiple_of(dim) {
            return Err(IndexerError::VectorIndex {
                stage: "search",
                reason: format!("{} query values are not rows of {dim}", queries.len()),
            });
        }
        let n = queries.len() / dim;
        let (mut labels, mut scores) = (vec![-1i64; n * k], vec![0f32; n * k]);
        let index = self.inner.inner_ptr() as *const faiss_sys::FaissIndex;
        // SAFETY: `index` is this live index, read only; `queries` holds n rows of its dimension;
        // `labels` and `scores` hold n·k entries each; `params` (when given) lives through the call.
        let code = unsafe {
            match params {
                None => faiss_sys::faiss_Index_search(
                    index,
                    n as i64,
                    queries.as_ptr(),
                    k as i64,
                    scores.as_mut_ptr(),
                    labels.as_mut_ptr(),
                ),
                Some(params) => faiss_sys::faiss_Index_search_with_params(
                    index,
                    n as i64,
                    queries.as_ptr(),
                    k as i64,
                    params.inner_ptr(),
                    scores.as_mut_ptr(),
                    labels.as_mut_ptr(),
                ),
            }
        };
        if code != 0 {
            return Err(IndexerError::VectorIndex {
                stage: "search",
                reason: last_faiss_error(),
            });
        }
        Ok((labels, scores))
    }
}

/// The hits among FAISS's labels (those that are not -1) with their scores.
fn hits(labels: &[i64], scores: &[f32]) -> Vec<Hit> {
    labels
        .iter()
        .zip(scores)
        .filter(|(label, _)| **label >= 0)
        .map(|(&label, &score)| Hit {
            row: label as u64,
            score,
        })
        .collect()
}

/// FAISS's message for the last failed call on this thread (its C API keeps one per thread).
pub(super) fn last_faiss_error() -> String {
    // SAFETY: FAISS returns a null-terminated message owned by the thread's last error, or null.
    let message = unsafe { faiss_sys::faiss_get_last_error() };
    if message.is_null() {
        return "FAISS reported an error without a message".to_string();
    }
    // SAFETY: non-null, null-terminated (above).
    unsafe { std::ffi::CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned()
}

/// FAISS's `IO_FLAG_MMAP_IFC` (faiss/index_io.h): flat vectors and HNSW links read as views
/// of a memory-mapped file.
const IO_FLAG_MMAP_IFC: i32 = 1 << 9;

/// Loads an index file written by [`VectorIndex::save`].
pub fn load_vector_index(path: &Path, spec: &IndexSpec) -> Result<FaissIndex> {
    let path_str = path
        .to_str()
        .ok_or_else(|| IndexerError::Config(format!("non-UTF-8 path {}", path.display())))?;
    let inner = match spec {
        // Their vectors (and HNSW's graph) are mapped from the file, not copied into memory.
        IndexSpec::Flat | IndexSpec::Hnsw { .. } => {
            faiss::index::io::read_index_with_flags(path_str, IoFlags::from(IO_FLAG_MMAP_IFC))
        }
        IndexSpec::IvfFlat { .. } | IndexSpec::IvfPq { .. } => faiss::read_index(path_str),
    }
    .map_err(err("read"))?;
    FaissIndex::ready(inner, spec)
}

impl VectorIndex for FaissIndex {
    fn spec(&self) -> &IndexSpec {
        &self.spec
    }

    fn len(&self) -> usize {
        self.inner.ntotal() as usize
    }

    fn search(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<Hit>>> {
        let k = k.min(self.len()).max(1);
        let (labels, scores) = self.search_raw(queries, k, None)?;
        Ok(labels
            .chunks(k)
            .zip(scores.chunks(k))
            .map(|(labels, scores)| hits(labels, scores))
            .collect())
    }

    fn search_in(&self, query: &[f32], k: usize, allowed: &RowSet) -> Result<Vec<Hit>> {
        if allowed.is_empty() {
            return Ok(Vec::new());
        }
        let k = k.min(allowed.count()).max(1);
        // The selector reads the bitmap in place; `allowed` outlives the search.
        let selector = IdSelector::bitmap(allowed.bitmap()).map_err(err("filter"))?;
        let params = match &self.spec {
            IndexSpec::IvfFlat { nprobe, .. } | IndexSpec::IvfPq { nprobe, .. } => {
                SearchParametersIVFImpl::new_with(selector, *nprobe, 0)
                    .map_err(err("filter"))?
                    .upcast()
            }
            _ => SearchParametersImpl::new(selector).map_err(err("filter"))?,
        };
        let (labels, scores) = self.search_raw(query, k, Some(&params))?;
        Ok(hits(&labels, &scores))
    }

    fn save(&self, path: &Path) -> Result<()> {
        let path_str = path
            .to_str()
            .ok_or_else(|| IndexerError::Config(format!("non-UTF-8 path {}", path.display())))?;
        faiss::write_index(&self.inner, path_str).map_err(err("write"))
    }

    fn write_to(&self, out: &mut dyn std::io::Write) -> Result<()> {
        super::faiss_bytes::write_index_to(&self.inner, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexKind, IndexOptions};

    #[test]
    fn ivf_from_kernel_centroids_matches_faiss_training() {
        let dim = 32;
        let data = crate::index::test_unit_vectors(4000, dim);
        let queries = crate::index::sample_rows(&data, dim, 100);
        let recall_of = |trainer| {
            let spec = IndexSpec::IvfFlat {
                nlist: 32,
                nprobe: 4,
                train_sample: 4000,
                trainer,
            };
            let index = build_vector_index(&spec, dim, &data).unwrap();
            assert_eq!(index.len(), 4000);
            let dir = tempfile::tempdir().unwrap();
            index.save(&dir.path().join("ivf.faiss")).unwrap();
            let reloaded = load_vector_index(&dir.path().join("ivf.faiss"), &spec).unwrap();
            let recall = crate::index::ann_recall(&reloaded, &data, dim, &queries, 10).unwrap();
            assert_eq!(
                recall,
                crate::index::ann_recall(&index, &data, dim, &queries, 10).unwrap(),
                "the saved index is the same index"
            );
            recall
        };
        let faiss = recall_of(IvfTrainer::Faiss);
        let kernels = recall_of(IvfTrainer::Kernels);
        assert!(
            kernels >= faiss - 0.05,
            "kernel centroids recall {kernels} vs FAISS training {faiss}"
        );
        assert!(kernels > 0.2);
    }

    #[test]
    fn every_kind_finds_a_stored_vector_and_survives_a_round_trip() {
        let dim = 32;
        let data = crate::index::test_unit_vectors(3000, dim);
        let dir = tempfile::tempdir().unwrap();
        for kind in [IndexKind::Flat, IndexKind::Hnsw, IndexKind::IvfFlat, IndexKind::IvfPq] {
            let options = IndexOptions {
                kind,
                nlist: Some(16),
                nprobe: Some(16),
                pq_m: Some(8),
                ..Default::default()
            };
            let spec = options.resolve(3000, dim).unwrap();
            let index = build_vector_index(&spec, dim, &data).unwrap();
            assert_eq!(index.len(), 3000);
            let query = &data[123 * dim..124 * dim];
            let hits = index.search(query, 5).unwrap();
            assert_eq!(hits[0][0].row, 123, "{kind:?}: {:?}", hits[0]);
            if kind != IndexKind::IvfPq {
                assert!(
                    (hits[0][0].score - 1.0).abs() < 1e-4,
                    "{kind:?} score {}",
                    hits[0][0].score
                );
            }
            let path = dir.path().join(format!("{}.faiss", spec.name()));
            index.save(&path).unwrap();
            // Written into a writer, the same bytes as the file.
            let mut written = Vec::new();
            index.write_to(&mut written).unwrap();
            assert!(
                written == std::fs::read(&path).unwrap(),
                "{kind:?}: written bytes differ"
            );
            let loaded = load_vector_index(&path, &spec).unwrap();
            assert_eq!(loaded.search(query, 5).unwrap(), hits, "{kind:?} after reload");
            // Filtered search returns only allowed rows, as many as asked for.
            let mut allowed = crate::index::RowSet::empty(3000);
            (0..3000).filter(|r| r % 3 == 1).for_each(|r| allowed.insert(r));
            let filtered = loaded.search_in(query, 10, &allowed).unwrap();
            assert_eq!(filtered.len(), 10, "{kind:?}");
            assert!(filtered.iter().all(|h| h.row % 3 == 1), "{kind:?}: {filtered:?}");
            // The vectors as added, read back from the built and from the loaded index (not
            // from IVF-PQ, whose codes are lossy).
            for (when, index) in [("built", &index), ("loaded", &loaded)] {
                assert_eq!(index.stores_vectors(), kind != IndexKind::IvfPq, "{kind:?}");
                match index.stored_vectors(2990, 10) {
                    Ok(rows) => assert!(rows == data[2990 * dim..], "{kind:?} {when}: stored rows differ"),
                    Err(e) => assert!(
                        kind == IndexKind::IvfPq && e.to_string().contains("lossy codes"),
                        "{kind:?} {when}: {e}"
                    ),
                }
            }
        }
    }

    /// A writer that takes `room` bytes, then fails (or panics).
    struct FullDisk {
        room: usize,
        panics: bool,
    }

    impl std::io::Write for FullDisk {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                assert!(!self.panics, "the writer panics");
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left"));
            }
            let taken = bytes.len().min(self.room);
            self.room -= taken;
            Ok(taken)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_writer_that_fails_or_panics_fails_the_write_with_its_reason() {
        let dim = 16;
        let data = crate::index::test_unit_vectors(2000, dim);
        let index = build_vector_index(&IndexSpec::Flat, dim, &data).unwrap();
        for room in [0, 100, 60_000] {
            let error = index
                .write_to(&mut FullDisk { room, panics: false })
                .unwrap_err()
                .to_string();
            assert!(error.contains("no space left"), "room {room}: {error}");
            let error = index
                .write_to(&mut FullDisk { room, panics: true })
                .unwrap_err()
                .to_string();
            assert!(error.contains("the writer panicked"), "room {room}: {error}");
        }
    }

    #[test]
    fn threads_searching_one_index_at_once_get_the_serial_answers() {
        let (dim, rows) = (32, 3000);
        let data = crate::index::test_unit_vectors(rows, dim);
        let mut allowed = crate::index::RowSet::empty(rows);
        (0..rows).filter(|r| r % 5 == 2).for_each(|r| allowed.insert(r));
        for kind in [IndexKind::Flat, IndexKind::Hnsw, IndexKind::IvfFlat, IndexKind::IvfPq] {
            let options = IndexOptions {
                kind,
                nlist: Some(16),
                nprobe: Some(4),
                pq_m: Some(8),
                ..Default::default()
            };
            let index = build_vector_index(&options.resolve(rows, dim).unwrap(), dim, &data).unwrap();
            let queries: Vec<&[f32]> = (0..64).map(|i| &data[i * 37 * dim..(i * 37 + 1) * dim]).collect();
            let serial: Vec<_> = queries
                .iter()
                .map(|q| (index.search(q, 10).unwrap(), index.search_in(q, 10, &allowed).unwrap()))
                .collect();
            // Eight threads, each through every query several times, all on the one index.
            std::thread::scope(|scope| {
                for thread in 0..8 {
                    let (index, queries, serial, allowed) = (&index, &queries, &serial, &allowed);
                    scope.spawn(move || {
                        for round in 0..5 {
                            for (i, query) in queries.iter().enumerate().skip((thread + round) % 3) {
                                assert_eq!(index.search(query, 10).unwrap(), serial[i].0, "{kind:?} query {i}");
                                assert_eq!(
                                    index.search_in(query, 10, allowed).unwrap(),
                                    serial[i].1,
                                    "{kind:?} filtered query {i}"
                                );
                            }
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn a_flat_index_is_written_from_its_rows_as_faiss_writes_the_index_it_builds() {
        let (dim, rows) = (24, 3_001);
        let data = crate::index::test_clustered_vectors(rows, dim);
        let mut written = Vec::new();
        let built = build_vector_index_into(&IndexSpec::Flat, dim, &data, &mut written).unwrap();
        assert!(matches!(built, BuiltVectorIndex::Written));
        // FAISS's own: built by its `add`, then written.
        let faiss = build_vector_index(&IndexSpec::Flat, dim, &data).unwrap();
        let mut faiss_bytes = Vec::new();
        faiss.write_to(&mut faiss_bytes).unwrap();
        assert!(written == faiss_bytes, "the flat file differs from FAISS's");
        // Mapped from its file, it answers as FAISS's index in memory does.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flat.faiss");
        std::fs::write(&path, &written).unwrap();
        let mapped = built.searchable(&path, &IndexSpec::Flat).unwrap();
        assert_eq!(mapped.len(), rows);
        let queries = &data[..5 * dim];
        assert_eq!(mapped.search(queries, 10).unwrap(), faiss.search(queries, 10).unwrap());
        assert_eq!(mapped.stored_vectors(rows - 2, 2).unwrap(), data[(rows - 2) * dim..]);
        // No rows: FAISS's build, held in memory as before.
        let mut empty = Vec::new();
        let built = build_vector_index_into(&IndexSpec::Flat, dim, &[], &mut empty).unwrap();
        assert!(matches!(built, BuiltVectorIndex::InMemory(_)));
    }

    #[test]
    fn a_graph_built_hnsw_is_read_and_searched_by_faiss_as_well_as_its_own_build() {
        // Above the graph build's exact size, so its lists come from the k-means split.
        let (dim, rows) = (32, 20_000);
        let data = crate::index::test_clustered_vectors(rows, dim);
        let queries = crate::index::test_clustered_vectors(rows + 300, dim)[rows * dim..].to_vec();
        let dir = tempfile::tempdir().unwrap();
        let recall_of = |builder| {
            let spec = IndexSpec::Hnsw {
                m: 16,
                ef_construction: 80,
                ef_search: 48,
                builder,
            };
            // Its file written as it is built: FAISS's own build held in memory, the graph
            // build's written alone, read from the file (mapped) to be searched.
            let mut written = Vec::new();
            let built = build_vector_index_into(&spec, dim, &data, &mut written).unwrap();
            assert_eq!(
                matches!(built, BuiltVectorIndex::Written),
                builder == HnswBuilder::Graph,
                "{builder:?}"
            );
            let path = dir.path().join(format!("{builder:?}.faiss"));
            if matches!(built, BuiltVectorIndex::Written) {
                // What is searched is what was written: a file cut short is refused.
                std::fs::write(&path, &written[..written.len() - 4]).unwrap();
                let error = BuiltVectorIndex::Written.searchable(&path, &spec).err().unwrap();
                assert!(error.to_string().contains("read"), "{error}");
            }
            std::fs::write(&path, &written).unwrap();
            let index = built.searchable(&path, &spec).unwrap();
            // The bytes FAISS writes of the index it read (or built) are the file's.
            let mut rewritten = Vec::new();
            index.write_to(&mut rewritten).unwrap();
            assert!(
                written == rewritten,
                "{builder:?}: the file written with the build differs"
            );
            assert_eq!(index.len(), rows);
            let recall = crate::index::ann_recall(&index, &data, dim, &queries, 10).unwrap();
            let path = dir.path().join("hnsw.faiss");
            index.save(&path).unwrap();
            let loaded = load_vector_index(&path, &spec).unwrap();
            assert_eq!(
                crate::index::ann_recall(&loaded, &data, dim, &queries, 10).unwrap(),
                recall,
                "{builder:?}: the saved index is the same index"
            );
            let query = &data[4321 * dim..4322 * dim];
            assert_eq!(loaded.search(query, 1).unwrap()[0][0].row, 4321, "{builder:?}");
            let mut allowed = crate::index::RowSet::empty(rows);
            (0..rows).filter(|r| r % 4 == 3).for_each(|r| allowed.insert(r));
            let filtered = loaded.search_in(query, 10, &allowed).unwrap();
            assert_eq!(filtered.len(), 10, "{builder:?}");
            assert!(filtered.iter().all(|hit| hit.row % 4 == 3), "{builder:?}");
            assert_eq!(loaded.stored_vectors(rows - 3, 3).unwrap(), data[(rows - 3) * dim..]);
            recall
        };
        let faiss = recall_of(HnswBuilder::Faiss);
        let graph = recall_of(HnswBuilder::Graph);
        eprintln!("recall@10 at efSearch 48: FAISS's build {faiss:.4}, the graph build {graph:.4}");
        assert!(graph >= 0.9, "graph-built recall {graph}");
        assert!(graph >= faiss - 0.03, "graph-built {graph} vs FAISS-built {faiss}");
    }

    #[test]
    fn a_graph_built_hnsw_of_a_few_rows_finds_each_of_them() {
        let dim = 16;
        let spec = IndexSpec::Hnsw {
            m: 8,
            ef_construction: 40,
            ef_search: 16,
            builder: HnswBuilder::Graph,
        };
        for rows in [1, 2, 5, 300] {
            let data = crate::index::test_unit_vectors(rows, dim);
            let index = build_vector_index(&spec, dim, &data).unwrap();
            assert_eq!(index.len(), rows);
            for row in 0..rows {
                let hits = index.search(&data[row * dim..(row + 1) * dim], rows.min(3)).unwrap();
                assert_eq!(hits[0][0].row, row as u64, "{rows} rows: {:?}", hits[0]);
                assert_eq!(hits[0].len(), rows.min(3), "{rows} rows");
            }
        }
    }

    #[test]
    fn a_query_of_the_wrong_width_is_refused_with_the_widths() {
        let data = crate::index::test_unit_vectors(100, 8);
        let index = build_vector_index(&IndexSpec::Flat, 8, &data).unwrap();
        let error = index.search(&data[..12], 3).unwrap_err().to_string();
        assert!(error.contains("12 query values are not rows of 8"), "{error}");
    }
}
