//! The thread pool a segment's vector index is built on, apart from the one its keyword index
//! and row files use.
//!
//! They run side by side. On one rayon pool, a thread of the vector build that waits in a
//! `join` (for the GPU's answers, a k-means step, a merge) helps with whatever else the pool
//! queues: a keyword part or a row group of seconds, which the vector build then waits for. On
//! an H200 at 1M chunks its k-means took 5.55 s beside them against 0.21 s alone, its merges
//! 1.75 s against 0.40 s (bench/RESULTS.md). On a pool of its own its waits help only its own
//! work; the operating system shares the cores between the two pools.

use std::sync::OnceLock;

/// Runs `build` on the vector build's own pool (as many threads as the global one; where that
/// pool cannot be made, on the caller's). The caller blocks until it ends.
pub fn on_vector_pool<R: Send>(build: impl FnOnce() -> R + Send) -> R {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("quarry-vector-{i}"))
            .build()
            .map_err(|error| tracing::warn!("no thread pool of its own for the vector index ({error}): the shared one"))
            .ok()
    });
    match pool {
        // From a thread of another pool, `install` would let that thread take that pool's
        // work while it waits; a scoped thread of its own just waits.
        Some(pool) => std::thread::scope(|scope| {
            scope
                .spawn(|| pool.install(build))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }),
        None => build(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_runs_on_a_pool_of_its_own_and_hands_its_result_back() {
        let outer = rayon::current_thread_index();
        let (name, sum) = on_vector_pool(|| {
            use rayon::prelude::*;
            let name = std::thread::current().name().map(str::to_string);
            (name, (0..1000u64).into_par_iter().sum::<u64>())
        });
        assert_eq!(sum, 499_500);
        assert!(
            name.unwrap_or_default().starts_with("quarry-vector-"),
            "ran on {outer:?}"
        );
    }

    #[test]
    #[should_panic(expected = "the build's own panic")]
    fn a_panic_in_the_build_reaches_the_caller() {
        on_vector_pool(|| panic!("the build's own panic"));
    }
}
