//! Searches run on the blocking pool, at most `workers` at once, with at most `queue`
//! more waiting; beyond that a search is refused at once with 503 instead of queueing
//! without bound.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;

use crate::http::api_error::ApiError;
use crate::metrics::Metrics;

pub struct SearchQueue {
    slots: Semaphore,
    admitted: AtomicUsize,
    limit: usize,
}

impl SearchQueue {
    pub fn new(workers: usize, queue: usize) -> Self {
        Self {
            slots: Semaphore::new(workers.max(1)),
            admitted: AtomicUsize::new(0),
            limit: workers.max(1) + queue,
        }
    }

    /// Runs `work` off the async runtime, or refuses when the queue is full.
    pub async fn run<T: Send + 'static>(
        &self,
        metrics: &Metrics,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let admitted = self.admitted.fetch_add(1, Ordering::SeqCst);
        if admitted >= self.limit {
            self.admitted.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::Busy(format!(
                "search queue is full ({} in flight); retry shortly",
                self.limit
            )));
        }
        metrics.queue_depth.set((admitted + 1) as i64);
        let outcome = async {
            let _slot = self
                .slots
                .acquire()
                .await
                .map_err(|_| ApiError::Unavailable("server is shutting down".into()))?;
            tokio::task::spawn_blocking(work)
                .await
                .map_err(|e| ApiError::Internal(format!("search worker failed: {e}")))
        }
        .await;
        let left = self.admitted.fetch_sub(1, Ordering::SeqCst) - 1;
        metrics.queue_depth.set(left as i64);
        outcome
    }
}
