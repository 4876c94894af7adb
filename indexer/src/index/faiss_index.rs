//! [`VectorIndex`] on FAISS: builds (training IVF on a seeded sample), searches, saves and loads.

use std::path::Path;

use faiss::index::flat::FlatIndex;
use faiss::index::ivf_flat::IVFFlatIndexImpl;
use faiss::index::{autotune::ParameterSpace, IndexImpl, NativeIndex, SearchWithParamsMut, UpcastIndex};
use faiss::search_params::{SearchParametersIVFImpl, SearchParametersImpl};
use faiss::selector::IdSelector;
use faiss::{index_factory, Index, MetricType};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;

use super::spec::IvfTrainer;
use super::{Hit, IndexSpec, RowSet, VectorIndex};
use crate::error::{IndexerError, Result};

/// A FAISS index with the spec it was built from.
pub struct FaissIndex {
    inner: IndexImpl,
    spec: IndexSpec,
}

fn err(stage: &'static str) -> impl Fn(faiss::error::Error) -> IndexerError {
    move |e| IndexerError::VectorIndex { stage, reason: e.to_string() }
}

/// Applies the search-time parameters (efSearch, nprobe) of a spec.
fn apply_search_params(index: &IndexImpl, spec: &IndexSpec) -> Result<()> {
    let space = ParameterSpace::new().map_err(err("parameters"))?;
    match spec {
        IndexSpec::Hnsw { ef_search, .. } => space.set_index_parameter(index, "efSearch", *ef_search as f64),
        IndexSpec::IvfFlat { nprobe, .. } | IndexSpec::IvfPq { nprobe, .. } => space.set_index_parameter(index, "nprobe", *nprobe as f64),
        IndexSpec::Flat => Ok(()),
    }
    .map_err(err("parameters"))
}

/// Lloyd iterations of the kernel-trained IVF centroids.
pub const KERNEL_KMEANS_ITERATIONS: usize = 20;
/// Seed of the kernel-trained IVF centroids (k-means++ draws).
pub const KERNEL_KMEANS_SEED: u64 = 0x1f1f;

/// An IVF-Flat index built by quarry's vector kernels (the GPU in a `cuda` build, else the
/// CPU twins): they train the centroids on the sample and assign every row to its list;
/// FAISS takes the centroids as its coarse quantizer and the rows with their precomputed
/// lists (`add_core`), so it never scores rows against centroids itself.
fn ivf_from_kernels(dim: usize, nlist: usize, training: &[f32], data: &[f32]) -> Result<IndexImpl> {
    let kernels = super::vector_kernels();
    let centroids = kernels.kmeans_train(training, dim, quarry_kernels::KMeansConfig { k: nlist, iterations: KERNEL_KMEANS_ITERATIONS, seed: KERNEL_KMEANS_SEED })?;
    let mut quantizer = FlatIndex::new_ip(dim as u32).map_err(err("quantizer"))?;
    quantizer.add(&centroids).map_err(err("quantizer"))?;
    let ivf = IVFFlatIndexImpl::new(quantizer, dim as u32, (centroids.len() / dim) as u32, MetricType::InnerProduct).map_err(err("create"))?;
    let lists: Vec<i64> = kernels.kmeans_assign(data, &centroids, dim)?.into_iter().map(|(list, _)| i64::from(list)).collect();
    // SAFETY: `ivf` is a live IndexIVFFlat of dimension `dim`; `data` holds lists.len() rows
    // of `dim` floats and `lists` one list number below nlist per row; null ids mean
    // sequential ids from ntotal, as `add` gives.
    let code = unsafe { faiss_sys::faiss_IndexIVFFlat_add_core(ivf.inner_ptr(), lists.len() as i64, data.as_ptr(), std::ptr::null(), lists.as_ptr()) };
    if code != 0 {
        // SAFETY: FAISS keeps the last error message of this thread alive until the next call.
        let message = unsafe { std::ffi::CStr::from_ptr(faiss_sys::faiss_get_last_error()) }.to_string_lossy().into_owned();
        return Err(IndexerError::VectorIndex { stage: "add", reason: message });
    }
    Ok(ivf.upcast())
}

/// A seeded sample of rows, for training.
fn training_sample(data: &[f32], dim: usize, count: usize) -> Vec<f32> {
    let rows = data.len() / dim.max(1);
    let mut rng = StdRng::seed_from_u64(0x9e37_79b9);
    let mut picked = sample(&mut rng, rows, count.min(rows)).into_vec();
    picked.sort_unstable();
    picked.iter().flat_map(|&row| data[row * dim..(row + 1) * dim].iter().copied()).collect()
}

/// Builds an index over `rows` unit vectors (row-major, `dim` columns).
pub fn build_vector_index(spec: &IndexSpec, dim: usize, data: &[f32]) -> Result<FaissIndex> {
    if let IndexSpec::IvfFlat { nlist, train_sample, trainer: IvfTrainer::Kernels, .. } = spec {
        let inner = ivf_from_kernels(dim, *nlist, &training_sample(data, dim, *train_sample), data)?;
        apply_search_params(&inner, spec)?;
        return Ok(FaissIndex { inner, spec: spec.clone() });
    }
    let mut inner = index_factory(dim as u32, spec.factory(), MetricType::InnerProduct).map_err(err("create"))?;
    if let IndexSpec::Hnsw { ef_construction, .. } = spec {
        ParameterSpace::new()
            .and_then(|space| space.set_index_parameter(&inner, "efConstruction", *ef_construction as f64))
            .map_err(err("parameters"))?;
    }
    if let IndexSpec::IvfFlat { train_sample, .. } | IndexSpec::IvfPq { train_sample, .. } = spec {
        // A seeded sample keeps the build reproducible.
        inner.train(&training_sample(data, dim, *train_sample)).map_err(err("train"))?;
    }
    inner.add(data).map_err(err("add"))?;
    apply_search_params(&inner, spec)?;
    Ok(FaissIndex { inner, spec: spec.clone() })
}

/// Loads an index file written by [`VectorIndex::save`].
pub fn load_vector_index(path: &Path, spec: &IndexSpec) -> Result<FaissIndex> {
    let path_str = path.to_str().ok_or_else(|| IndexerError::Config(format!("non-UTF-8 path {}", path.display())))?;
    let inner = faiss::read_index(path_str).map_err(err("read"))?;
    apply_search_params(&inner, spec)?;
    Ok(FaissIndex { inner, spec: spec.clone() })
}

impl VectorIndex for FaissIndex {
    fn spec(&self) -> &IndexSpec {
        &self.spec
    }

    fn len(&self) -> usize {
        self.inner.ntotal() as usize
    }

    fn search(&mut self, queries: &[f32], k: usize) -> Result<Vec<Vec<Hit>>> {
        let k = k.min(self.len()).max(1);
        let result = self.inner.search(queries, k).map_err(err("search"))?;
        Ok(result
            .labels
            .chunks(k)
            .zip(result.distances.chunks(k))
            .map(|(labels, scores)| {
                labels
                    .iter()
                    .zip(scores)
                    .filter_map(|(label, score)| label.get().map(|row| Hit { row, score: *score }))
                    .collect()
            })
            .collect())
    }

    fn search_in(&mut self, query: &[f32], k: usize, allowed: &RowSet) -> Result<Vec<Hit>> {
        if allowed.is_empty() {
            return Ok(Vec::new());
        }
        let k = k.min(allowed.count()).max(1);
        // The selector reads the bitmap in place; `allowed` outlives the search.
        let selector = IdSelector::bitmap(allowed.bitmap()).map_err(err("filter"))?;
        let params = match &self.spec {
            IndexSpec::IvfFlat { nprobe, .. } | IndexSpec::IvfPq { nprobe, .. } => {
                SearchParametersIVFImpl::new_with(selector, *nprobe, 0).map_err(err("filter"))?.upcast()
            }
            _ => SearchParametersImpl::new(selector).map_err(err("filter"))?,
        };
        let result = self.inner.search_with_params(query, k, &params).map_err(err("search"))?;
        Ok(result
            .labels
            .iter()
            .zip(&result.distances)
            .filter_map(|(label, score)| label.get().map(|row| Hit { row, score: *score }))
            .collect())
    }

    fn save(&self, path: &Path) -> Result<()> {
        let path_str = path.to_str().ok_or_else(|| IndexerError::Config(format!("non-UTF-8 path {}", path.display())))?;
        faiss::write_index(&self.inner, path_str).map_err(err("write"))
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
            let spec = IndexSpec::IvfFlat { nlist: 32, nprobe: 4, train_sample: 4000, trainer };
            let mut index = build_vector_index(&spec, dim, &data).unwrap();
            assert_eq!(index.len(), 4000);
            let dir = tempfile::tempdir().unwrap();
            index.save(&dir.path().join("ivf.faiss")).unwrap();
            let mut reloaded = load_vector_index(&dir.path().join("ivf.faiss"), &spec).unwrap();
            let recall = crate::index::ann_recall(&mut reloaded, &data, dim, &queries, 10).unwrap();
            assert_eq!(recall, crate::index::ann_recall(&mut index, &data, dim, &queries, 10).unwrap(), "the saved index is the same index");
            recall
        };
        let faiss = recall_of(IvfTrainer::Faiss);
        let kernels = recall_of(IvfTrainer::Kernels);
        assert!(kernels >= faiss - 0.05, "kernel centroids recall {kernels} vs FAISS training {faiss}");
        assert!(kernels > 0.2);
    }

    #[test]
    fn every_kind_finds_a_stored_vector_and_survives_a_round_trip() {
        let dim = 32;
        let data = crate::index::test_unit_vectors(3000, dim);
        let dir = tempfile::tempdir().unwrap();
        for kind in [IndexKind::Flat, IndexKind::Hnsw, IndexKind::IvfFlat, IndexKind::IvfPq] {
            let options = IndexOptions { kind, nlist: Some(16), nprobe: Some(16), pq_m: Some(8), ..Default::default() };
            let spec = options.resolve(3000, dim).unwrap();
            let mut index = build_vector_index(&spec, dim, &data).unwrap();
            assert_eq!(index.len(), 3000);
            let query = &data[123 * dim..124 * dim];
            let hits = index.search(query, 5).unwrap();
            assert_eq!(hits[0][0].row, 123, "{kind:?}: {:?}", hits[0]);
            if kind != IndexKind::IvfPq {
                assert!((hits[0][0].score - 1.0).abs() < 1e-4, "{kind:?} score {}", hits[0][0].score);
            }
            let path = dir.path().join(format!("{}.faiss", spec.name()));
            index.save(&path).unwrap();
            let mut loaded = load_vector_index(&path, &spec).unwrap();
            assert_eq!(loaded.search(query, 5).unwrap(), hits, "{kind:?} after reload");
            // Filtered search returns only allowed rows, as many as asked for.
            let mut allowed = crate::index::RowSet::empty(3000);
            (0..3000).filter(|r| r % 3 == 1).for_each(|r| allowed.insert(r));
            let filtered = loaded.search_in(query, 10, &allowed).unwrap();
            assert_eq!(filtered.len(), 10, "{kind:?}");
            assert!(filtered.iter().all(|h| h.row % 3 == 1), "{kind:?}: {filtered:?}");
        }
    }
}
