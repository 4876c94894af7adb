//! Numeric primitives with a CPU reference that is always compiled (the CUDA twins come
//! behind the `cuda` feature and are tested against these): exact top-k inner-product
//! search, spherical k-means for IVF, mean pooling and L2 normalization.

mod kmeans;
mod pool;
mod topk;

pub use kmeans::{kmeans_assign, kmeans_train, KMeansConfig};
pub use pool::{l2_normalize, mean_pool};
pub use topk::{exact_top_k, exact_top_k_in, Scored};
