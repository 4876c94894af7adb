//! The benchmark harness. So far: embedding throughput under different batch policies
//! ([`embed_batching`]), in-process search latency per mode ([`search_latency`]) and seeded
//! synthetic snapshots at scale ([`synthetic_snapshot`]); the declarative workload runner
//! comes with `quarry bench`.

pub mod embed_batching;
pub mod search_latency;
pub mod synthetic_snapshot;
