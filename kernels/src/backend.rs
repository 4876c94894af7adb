//! [`VectorKernels`]: the swappable device behind exact top-k search and k-means.
//! [`CpuKernels`] is always compiled; a `cuda` build adds [`crate::CudaKernels`], and
//! [`best_available`] picks it when a GPU answers.

use std::sync::Arc;

use crate::error::{rows_of, Result};
use crate::resident_rows::{CpuRows, ResidentRows};
use crate::{kmeans, topk, KMeansConfig, Scored};

/// Exact top-k over one base matrix, prepared once (copied to the GPU there) and searched
/// many times.
pub trait FlatSearch: Send + Sync {
    /// Top-`k` rows of the base for each query, best first (higher score, then lower row).
    fn top_k(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<Scored>>>;
}

/// Exact top-k inner-product search and spherical k-means on one device.
pub trait VectorKernels: Send + Sync {
    /// Where the kernels run, for logs and reports (`cpu`, `cuda:0 (NVIDIA H100 ...)`).
    fn device(&self) -> String;
    /// Whether they run on a GPU (where they build IVF far faster than FAISS on the CPU).
    fn is_gpu(&self) -> bool {
        false
    }
    /// Prepares `base` (row-major, `dim` columns) for repeated exact searches.
    fn prepare_flat<'a>(&'a self, base: &'a [f32], dim: usize) -> Result<Box<dyn FlatSearch + 'a>>;
    /// Top-`k` rows of `base` for each query, best first (higher score, then lower row).
    fn exact_top_k(&self, queries: &[f32], base: &[f32], dim: usize, k: usize) -> Result<Vec<Vec<Scored>>> {
        self.prepare_flat(base, dim)?.top_k(queries, k)
    }
    /// Keeps `data` (row-major, `dim` columns) where the kernels run (on a GPU: uploaded
    /// once) for searches among chosen rows of it.
    fn prepare_rows<'a>(&'a self, data: &'a [f32], dim: usize) -> Result<Box<dyn ResidentRows + 'a>> {
        rows_of(data, dim, "rows")?;
        Ok(Box::new(CpuRows { data, dim }))
    }
    /// Trains `config.k` unit-length centroids (seeded k-means++, Lloyd iterations).
    fn kmeans_train(&self, data: &[f32], dim: usize, config: KMeansConfig) -> Result<Vec<f32>>;
    /// The nearest centroid of every row, with its inner product.
    fn kmeans_assign(&self, data: &[f32], centroids: &[f32], dim: usize) -> Result<Vec<(u32, f32)>>;
    /// Each row's first `degree` links of its kNN list (`k` distinct ids a row, nearest
    /// first, [`crate::NO_NEIGHBOUR`] padding the end) ordered by detour count, as CAGRA
    /// prunes ([`crate::order_by_detours`]).
    fn order_by_detours(&self, lists: &[u32], k: usize, degree: usize) -> Result<Vec<u32>> {
        crate::order_by_detours(lists, k, degree)
    }
}

/// The CPU twins (rayon over queries / rows).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuKernels;

impl VectorKernels for CpuKernels {
    fn device(&self) -> String {
        "cpu".into()
    }

    fn prepare_flat<'a>(&'a self, base: &'a [f32], dim: usize) -> Result<Box<dyn FlatSearch + 'a>> {
        rows_of(base, dim, "base")?;
        Ok(Box::new(CpuFlat { base, dim }))
    }

    fn kmeans_train(&self, data: &[f32], dim: usize, config: KMeansConfig) -> Result<Vec<f32>> {
        rows_of(data, dim, "training data")?;
        Ok(kmeans::kmeans_train(data, dim, config))
    }

    fn kmeans_assign(&self, data: &[f32], centroids: &[f32], dim: usize) -> Result<Vec<(u32, f32)>> {
        rows_of(data, dim, "data")?;
        rows_of(centroids, dim, "centroids")?;
        Ok(kmeans::kmeans_assign(data, centroids, dim))
    }
}

/// The CPU twin's flat search: the base stays where it is.
struct CpuFlat<'a> {
    base: &'a [f32],
    dim: usize,
}

impl FlatSearch for CpuFlat<'_> {
    fn top_k(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<Scored>>> {
        rows_of(queries, self.dim, "queries")?;
        Ok(topk::exact_top_k(queries, self.base, self.dim, k))
    }
}

/// The CUDA kernels on GPU `gpu` when this is a `cuda` build and that GPU answers, else the
/// CPU twins. `None` always gives the CPU.
pub fn best_available(gpu: Option<usize>) -> Arc<dyn VectorKernels> {
    #[cfg(feature = "cuda")]
    if let Some(ordinal) = gpu {
        if let Ok(kernels) = crate::CudaKernels::new(ordinal) {
            return Arc::new(kernels);
        }
    }
    let _ = gpu;
    Arc::new(CpuKernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_kernels_check_shapes_and_name_the_input() {
        let cpu = best_available(None);
        assert_eq!(cpu.device(), "cpu");
        let error = cpu
            .exact_top_k(&[1.0, 0.0, 0.5], &[1.0, 0.0], 2, 1)
            .unwrap_err()
            .to_string();
        assert!(error.contains("queries") && error.contains("3 values"), "{error}");
        let error = cpu.kmeans_assign(&[1.0, 0.0], &[1.0], 2).unwrap_err().to_string();
        assert!(error.contains("centroids"), "{error}");
        let hits = cpu.exact_top_k(&[1.0, 0.0], &[0.0, 1.0, 1.0, 0.0], 2, 1).unwrap();
        assert_eq!(hits[0][0].row, 1);
    }
}
