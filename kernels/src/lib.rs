//! Numeric primitives with a CPU reference that is always compiled (CUDA twins arrive
//! behind the `cuda` feature): exact top-k inner-product search.

mod topk;

pub use topk::{exact_top_k, exact_top_k_in, Scored};
