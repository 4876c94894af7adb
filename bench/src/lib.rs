//! The benchmark harness. So far: embedding throughput under different batch policies
//! ([`embed_batching`]); the declarative workload runner comes with `quarry bench`.

pub mod embed_batching;
