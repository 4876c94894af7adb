//! The CUDA twins, launched through cudarc: cuBLAS SGEMM for the scores, then the PTX
//! kernels of kernels/cuda/*.cu (compiled by build.rs) for selection, assignment, sums,
//! pooling, gathering rows and a kNN graph's pruning. Each is tested against its CPU twin in kernels/tests/cuda_parity.rs.

mod detours;
mod gather;
mod kmeans;
mod list_search;
mod pool;
mod topk;

use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut};
use cudarc::nvrtc::Ptx;

pub use topk::GPU_MAX_K;

use crate::backend::{FlatSearch, VectorKernels};
use crate::error::{rows_of, KernelError, Result};
use crate::resident_rows::ResidentRows;
use crate::{KMeansConfig, Scored};

/// PTX of kernels/cuda/encoder.cu: the embedding model's fused steps (bias + activation,
/// masked softmax, bias + residual + layer norm), which the embedder loads into candle's own
/// CUDA device.
pub const ENCODER_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/encoder.ptx"));
/// PTX of kernels/cuda/attention.cu: the packed attention on CUDA cores and on tensor cores,
/// loaded the same way.
pub const ATTENTION_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/attention.ptx"));

/// Bytes of GEMM output one step may hold: larger inputs are scored in row chunks.
const SCORE_BYTES: usize = 1 << 30;

pub(crate) fn cuda_err(e: impl std::fmt::Debug) -> KernelError {
    KernelError::Cuda(format!("{e:?}"))
}

/// The kernels loaded on one GPU, with one stream and one cuBLAS handle.
pub struct CudaKernels {
    ordinal: usize,
    name: String,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    select_top_k: CudaFunction,
    select_top_k_sorted: CudaFunction,
    select_top_k_sorted_lists: CudaFunction,
    merge_sorted_lists: CudaFunction,
    nearest_centroid: CudaFunction,
    nearest_centroids: CudaFunction,
    accumulate_clusters: CudaFunction,
    mean_pool_normalize: CudaFunction,
    order_by_detours: CudaFunction,
    gather_rows: CudaFunction,
}

/// A row-major f32 matrix resident on the GPU (a base to search, data to cluster).
pub struct DeviceMatrix {
    pub(crate) data: CudaSlice<f32>,
    pub(crate) rows: usize,
    pub(crate) dim: usize,
}

impl DeviceMatrix {
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rows `start..start + count` as a device view.
    pub(crate) fn rows_view(&self, start: usize, count: usize) -> CudaView<'_, f32> {
        self.data.slice(start * self.dim..(start + count) * self.dim)
    }
}

impl CudaKernels {
    /// Opens GPU `ordinal` and loads the kernels.
    pub fn new(ordinal: usize) -> Result<Self> {
        let context = CudaContext::new(ordinal).map_err(cuda_err)?;
        let name = context.name().map_err(cuda_err)?;
        let stream = context.default_stream();
        let blas = CudaBlas::new(stream.clone()).map_err(cuda_err)?;
        let load = |ptx: &str| context.load_module(Ptx::from_src(ptx)).map_err(cuda_err);
        let function = |module: &Arc<CudaModule>, name: &str| module.load_function(name).map_err(cuda_err);
        let topk = load(include_str!(concat!(env!("OUT_DIR"), "/topk.ptx")))?;
        let kmeans = load(include_str!(concat!(env!("OUT_DIR"), "/kmeans.ptx")))?;
        let pool = load(include_str!(concat!(env!("OUT_DIR"), "/pool.ptx")))?;
        let detours = load(include_str!(concat!(env!("OUT_DIR"), "/detours.ptx")))?;
        let gather = load(include_str!(concat!(env!("OUT_DIR"), "/gather.ptx")))?;
        Ok(Self {
            ordinal,
            name,
            select_top_k: function(&topk, "select_top_k")?,
            select_top_k_sorted: function(&topk, "select_top_k_sorted")?,
            select_top_k_sorted_lists: function(&topk, "select_top_k_sorted_lists")?,
            merge_sorted_lists: function(&topk, "merge_sorted_lists")?,
            nearest_centroid: function(&kmeans, "nearest_centroid")?,
            nearest_centroids: function(&kmeans, "nearest_centroids")?,
            accumulate_clusters: function(&kmeans, "accumulate_clusters")?,
            mean_pool_normalize: function(&pool, "mean_pool_normalize")?,
            order_by_detours: function(&detours, "order_by_detours")?,
            gather_rows: function(&gather, "gather_rows")?,
            stream,
            blas,
        })
    }

    /// Copies a row-major matrix to the GPU.
    pub fn upload(&self, data: &[f32], dim: usize) -> Result<DeviceMatrix> {
        let rows = rows_of(data, dim, "matrix")?;
        Ok(DeviceMatrix {
            data: self.stream.clone_htod(data).map_err(cuda_err)?,
            rows,
            dim,
        })
    }

    /// Waits for every queued kernel (for timing).
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(cuda_err)
    }

    /// `out[j][i] = a_i · b_j` for `a` rows `m`, `b` rows `n`, both with `dim` columns
    /// (row-major): column-major `out = aᵀ·b`, so each row of `b` gets `m` contiguous scores.
    pub(crate) fn inner_products(
        &self,
        a: &CudaView<'_, f32>,
        m: usize,
        b: &CudaView<'_, f32>,
        n: usize,
        dim: usize,
        out: &mut CudaViewMut<'_, f32>,
    ) -> Result<()> {
        let config = GemmConfig {
            transa: cublasOperation_t::CUBLAS_OP_T,
            transb: cublasOperation_t::CUBLAS_OP_N,
            m: m as i32,
            n: n as i32,
            k: dim as i32,
            alpha: 1.0f32,
            lda: dim as i32,
            ldb: dim as i32,
            beta: 0.0f32,
            ldc: m as i32,
        };
        // SAFETY: a holds m·dim, b n·dim and out m·n values (checked by the callers' slicing).
        unsafe { self.blas.gemm(config, a, b, out) }.map_err(cuda_err)
    }
}

/// A base matrix resident on the GPU, searched by [`CudaKernels::top_k`].
struct GpuFlat<'a> {
    kernels: &'a CudaKernels,
    base: DeviceMatrix,
}

impl FlatSearch for GpuFlat<'_> {
    fn top_k(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<Scored>>> {
        self.kernels.top_k(&self.base, queries, k)
    }
}

impl VectorKernels for CudaKernels {
    fn device(&self) -> String {
        format!("cuda:{} ({})", self.ordinal, self.name)
    }

    fn is_gpu(&self) -> bool {
        true
    }

    fn prepare_flat<'a>(&'a self, base: &'a [f32], dim: usize) -> Result<Box<dyn FlatSearch + 'a>> {
        Ok(Box::new(GpuFlat {
            kernels: self,
            base: self.upload(base, dim)?,
        }))
    }

    fn prepare_rows<'a>(&'a self, data: &'a [f32], dim: usize) -> Result<Box<dyn ResidentRows + 'a>> {
        Ok(Box::new(gather::GpuRows {
            kernels: self,
            matrix: self.upload(data, dim)?,
        }))
    }

    fn kmeans_train(&self, data: &[f32], dim: usize, config: KMeansConfig) -> Result<Vec<f32>> {
        let resident = self.upload(data, dim)?;
        crate::kmeans_train_with(data, dim, config, |centroids| self.cluster_sums(&resident, centroids))
    }

    fn kmeans_assign(&self, data: &[f32], centroids: &[f32], dim: usize) -> Result<Vec<(u32, f32)>> {
        let resident = self.upload(data, dim)?;
        let (assignment, best) = self.assign(&resident, centroids)?;
        Ok(assignment.into_iter().zip(best).collect())
    }

    fn order_by_detours(&self, lists: &[u32], k: usize, degree: usize) -> Result<Vec<u32>> {
        CudaKernels::order_by_detours(self, lists, k, degree)
    }
}
