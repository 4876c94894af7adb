//! Numeric primitives (normalize, mean-pool, exact top-k, k-means): CPU reference, CUDA behind `cuda`.
