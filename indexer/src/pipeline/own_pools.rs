//! The thread pools a segment's vector index and its row files are built on, apart from the
//! global one its keyword index uses.
//!
//! The three run side by side. On one rayon pool, a thread that waits in a `join` (the vector
//! build for the GPU's answers, a k-means step, a merge; a wave of row groups for its last
//! group) helps with whatever else the pool queues: a keyword part or a row group of seconds,
//! which the waiting work then waits for. On an H200 at 1M chunks the vector build's k-means
//! took 5.55 s beside them against 0.21 s alone, its merges 1.75 s against 0.40 s
//! (bench/RESULTS.md). On a pool of its own, a part's waits help only its own work; the
//! operating system shares the cores between the pools.

use std::sync::OnceLock;

/// A rayon pool made on first use, with as many threads as the global one.
pub struct OwnPool {
    name: &'static str,
    pool: OnceLock<Option<rayon::ThreadPool>>,
}

/// The vector index's pool.
pub static VECTOR_POOL: OwnPool = OwnPool::new("vector");

/// The row files' pool.
pub static ROW_FILES_POOL: OwnPool = OwnPool::new("row-files");

impl OwnPool {
    const fn new(name: &'static str) -> Self {
        Self {
            name,
            pool: OnceLock::new(),
        }
    }

    /// Runs `work` on this pool (where it cannot be made, on the caller's). The caller blocks
    /// until it ends; a panic in `work` reaches the caller.
    pub fn run<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        let pool = self.pool.get_or_init(|| {
            let name = self.name;
            rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(move |i| format!("quarry-{name}-{i}"))
                .build()
                .map_err(|error| {
                    tracing::warn!("no thread pool of its own for the {name} work ({error}): the shared one")
                })
                .ok()
        });
        match pool {
            // From a thread of another pool, `install` would let that thread take that pool's
            // work while it waits; a scoped thread of its own just waits.
            Some(pool) => std::thread::scope(|scope| {
                scope
                    .spawn(|| pool.install(work))
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }),
            None => work(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_its_own_pool_and_hands_its_result_back() {
        for (pool, prefix) in [(&VECTOR_POOL, "quarry-vector-"), (&ROW_FILES_POOL, "quarry-row-files-")] {
            let outer = rayon::current_thread_index();
            let (name, sum) = pool.run(|| {
                use rayon::prelude::*;
                let name = std::thread::current().name().map(str::to_string);
                (name, (0..1000u64).into_par_iter().sum::<u64>())
            });
            assert_eq!(sum, 499_500);
            assert!(name.unwrap_or_default().starts_with(prefix), "ran on {outer:?}");
        }
    }

    #[test]
    #[should_panic(expected = "the work's own panic")]
    fn a_panic_in_the_work_reaches_the_caller() {
        ROW_FILES_POOL.run(|| panic!("the work's own panic"));
    }
}
