//! One embedding call's batches shared out among workers (GPU replicas, CPU lanes): each
//! worker claims the next unclaimed batch when it is free, keeps the rows it embedded, and
//! the rows are put back in the callers' order at the end.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{BertEmbedder, Embeddings};
use crate::error::Result;

/// A batch's indices into the call's texts and the rows embedded for it.
pub(super) type Finished<'a> = Vec<(&'a [usize], Vec<f32>)>;

/// The batches of one call, each claimed by exactly one worker.
pub(super) struct SharedBatches<'a> {
    batches: &'a [Vec<usize>],
    next: AtomicUsize,
}

impl<'a> SharedBatches<'a> {
    pub(super) fn new(batches: &'a [Vec<usize>]) -> Self {
        Self {
            batches,
            next: AtomicUsize::new(0),
        }
    }

    /// The batches this worker claims, one at a time, until none is left.
    fn claim(&self) -> impl Iterator<Item = &'a Vec<usize>> + '_ {
        std::iter::from_fn(|| self.batches.get(self.next.fetch_add(1, Ordering::Relaxed)))
    }

    /// One worker: `model` embeds the batches it claims of `ids`, one after another, each
    /// told to `done` as it finishes.
    pub(super) fn run(
        &self,
        model: &BertEmbedder,
        ids: &[Vec<u32>],
        done: &(dyn Fn(usize) + Sync),
    ) -> Result<Finished<'a>> {
        let mut finished = Vec::new();
        model.run_batches(ids, self.claim(), |batch, vectors| {
            done(batch.len());
            finished.push((batch, vectors));
        })?;
        Ok(finished)
    }
}

/// The rows of every worker's batches, in the order of the call's `rows` texts.
pub(super) fn gather<'a>(
    parts: impl IntoIterator<Item = Result<Finished<'a>>>,
    rows: usize,
    dim: usize,
) -> Result<Embeddings> {
    let mut data = vec![0f32; rows * dim];
    for part in parts {
        for (batch, vectors) in part? {
            scatter_rows(&mut data, dim, batch, &vectors);
        }
    }
    Ok(Embeddings { dim, data })
}

/// Writes row `slot` of `vectors` to row `batch[slot]` of `data`.
pub(super) fn scatter_rows(data: &mut [f32], dim: usize, batch: &[usize], vectors: &[f32]) {
    for (slot, &i) in batch.iter().enumerate() {
        data[i * dim..(i + 1) * dim].copy_from_slice(&vectors[slot * dim..(slot + 1) * dim]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_batch_is_claimed_once_and_rows_come_back_in_order() {
        let batches = vec![vec![2, 0], vec![1], vec![4, 3]];
        let shared = SharedBatches::new(&batches);
        // Two workers taking turns.
        let (mut first, mut second) = (shared.claim(), shared.claim());
        let claimed: Vec<&Vec<usize>> = vec![first.next().unwrap(), second.next().unwrap(), first.next().unwrap()];
        assert!(first.next().is_none() && second.next().is_none());
        let embed = |batch: &'static [usize]| {
            (
                batch,
                batch
                    .iter()
                    .flat_map(|&i| [i as f32, 10.0 * i as f32])
                    .collect::<Vec<_>>(),
            )
        };
        let parts = vec![Ok(vec![embed(&[2, 0]), embed(&[4, 3])]), Ok(vec![embed(&[1])])];
        assert_eq!(claimed.len(), 3);
        let embeddings = gather(parts, 5, 2).unwrap();
        assert_eq!(
            embeddings.data,
            vec![0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0]
        );
    }

    #[test]
    fn a_failed_worker_fails_the_call() {
        let parts: Vec<Result<Finished<'static>>> = vec![
            Ok(Vec::new()),
            Err(crate::error::IndexerError::Embed("lane failed".into())),
        ];
        assert!(gather(parts, 1, 2).is_err());
    }
}
