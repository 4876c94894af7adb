//! The thread pools a segment's vector index and its row files are built on, apart from the
//! global one its keyword index uses.
//!
//! The three run side by side. On one rayon pool, a thread that waits in a `join` (the vector
//! build for the GPU's answers, a k-means step, a merge; the row files for their last row
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

    /// Runs `work` on this pool (where it cannot be made, on a thread of its own) while
    /// `here` runs on the calling thread, and hands both results back once both have ended.
    /// `work` is started from a thread of its own: from a thread of another pool, `install`
    /// would let that thread take that pool's work while it waits, and a `rayon::join` would
    /// hold one of that pool's threads for as long as `work` takes. A panic in either reaches
    /// the caller.
    pub fn run_beside<A: Send, B>(&self, work: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
        std::thread::scope(|scope| {
            let work = scope.spawn(|| match self.pool() {
                Some(pool) => pool.install(work),
                None => work(),
            });
            let here = here();
            (
                work.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                here,
            )
        })
    }

    /// Starts `task` on this pool (where it cannot be made, on a thread of its own) and
    /// returns at once; tasks started from outside the pool begin in the order they were
    /// started. `task` must not panic: a rayon pool's spawned task that panics aborts the
    /// process (catch it inside).
    pub fn spawn(&self, task: impl FnOnce() + Send + 'static) {
        match self.pool() {
            Some(pool) => pool.spawn_fifo(task),
            None => drop(std::thread::spawn(task)),
        }
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool
            .get_or_init(|| {
                let name = self.name;
                rayon::ThreadPoolBuilder::new()
                    .num_threads(rayon::current_num_threads())
                    .thread_name(move |i| format!("quarry-{name}-{i}"))
                    .build()
                    .map_err(|error| {
                        tracing::warn!("no thread pool of its own for the {name} work ({error}): a thread of its own")
                    })
                    .ok()
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_its_own_pool_beside_the_callers_and_hands_both_results_back() {
        for (pool, prefix) in [(&VECTOR_POOL, "quarry-vector-"), (&ROW_FILES_POOL, "quarry-row-files-")] {
            let caller = std::thread::current().id();
            let ((name, sum), here) = pool.run_beside(
                || {
                    use rayon::prelude::*;
                    let name = std::thread::current().name().map(str::to_string);
                    (name, (0..1000u64).into_par_iter().sum::<u64>())
                },
                || std::thread::current().id(),
            );
            assert_eq!(sum, 499_500);
            assert!(
                name.as_deref().unwrap_or_default().starts_with(prefix),
                "ran on {name:?}"
            );
            assert_eq!(here, caller, "`here` runs on the calling thread");
        }
    }

    #[test]
    #[should_panic(expected = "the work's own panic")]
    fn a_panic_in_the_work_reaches_the_caller() {
        ROW_FILES_POOL.run_beside(|| panic!("the work's own panic"), || ());
    }
}
