//! Numeric primitives with a CPU reference that is always compiled, and CUDA twins behind
//! the `cuda` feature that are tested against them: exact top-k inner-product search (also
//! among chosen rows of a matrix kept on the device: [`ResidentRows`]), spherical k-means for
//! IVF and each row's nearest few centroids, a kNN graph's pruning by detour count (CAGRA's), mean pooling
//! and L2 normalization; and the embedding model's
//! fused steps on the CPU: erf GELU, masked attention softmax, attention read from the packed
//! query-key-value product, bias + residual + layer norm (on a GPU: their twins in the PTX
//! `ENCODER_PTX` and `ATTENTION_PTX`, launched by the embedder), a dense layer's product
//! over a query's few rows and a dense layer's product in bf16 with f32 sums (AVX512-BF16;
//! the CPU only: a GPU has cuBLAS). [`VectorKernels`] is the
//! swappable part; [`best_available`] picks the device. On the CPU, many queries (or rows to
//! assign) are scored against a base by blocked matrix products (`gemm_scores.rs`).

mod activation;
mod attention;
mod backend;
mod bf16_product;
#[cfg(feature = "cuda")]
mod cuda;
mod detours;
mod dot;
mod error;
mod few_rows;
mod gemm_scores;
mod kmeans;
mod layer_norm;
mod nearest_centroids;
mod pool;
mod resident_rows;
mod sequences;
mod slice_lists;
mod softmax;
#[cfg(test)]
mod test_lcg;
mod topk;

pub use activation::{bias_activation_in_place, erf, gelu_erf_in_place};
pub use attention::{packed_attention, packed_attention_tiled, ragged_attention, PackedHeads};
pub use backend::{best_available, CpuKernels, FlatSearch, VectorKernels};
pub use bf16_product::{bf16_products_native, Bf16Weights};
#[cfg(feature = "cuda")]
pub use cuda::{CudaKernels, DeviceMatrix, ATTENTION_PTX, ENCODER_PTX, GPU_MAX_K};
pub use detours::{order_by_detours, NO_NEIGHBOUR};
pub use dot::dot;
pub use error::{KernelError, Result};
pub use few_rows::few_rows_product;
pub use kmeans::{cluster_sums, kmeans_assign, kmeans_train, kmeans_train_with, ClusterSums, KMeansConfig};
pub use layer_norm::{bias_residual_layer_norm_rows, NormParameters};
pub use nearest_centroids::{check_nearest, nearest_centroids, MAX_NEAREST_CENTROIDS, NO_CENTROID};
pub use pool::{l2_normalize, mean_pool, mean_pool_normalize_sequences};
pub use resident_rows::{gather_listed_rows, gather_rows, ListHits, ResidentRows, NO_POSITION};
pub use slice_lists::{merge_slice_lists, EMPTY_ROW};
pub use softmax::{exp, masked_softmax_rows};
pub use topk::{best_first, exact_top_k, exact_top_k_in, top_k_of_scores, Scored};
