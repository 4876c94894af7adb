//! Several model replicas (one per GPU for `--device cuda:0,1`) sharing one embedding call:
//! the token-budget batches go to whichever replica is free next.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::bert::scatter_rows;
use super::{plan_batches, BertEmbedder, Embedder, Embeddings, ModelInfo, ModelTokenizer};
use crate::error::{IndexerError, Result};

/// An [`Embedder`] over several [`BertEmbedder`]s of the same model.
pub struct ReplicatedEmbedder {
    replicas: Vec<BertEmbedder>,
}

impl ReplicatedEmbedder {
    /// Replicas must hold the same model (same weights hash).
    pub fn new(replicas: Vec<BertEmbedder>) -> Result<Self> {
        let first = replicas.first().ok_or_else(|| IndexerError::Config("no model replicas".into()))?;
        if let Some(other) = replicas.iter().find(|r| r.info() != first.info()) {
            return Err(IndexerError::Config(format!("replicas differ: {} on {} vs {} on {}", first.info().name, first.device_name(), other.info().name, other.device_name())));
        }
        Ok(Self { replicas })
    }
}

impl Embedder for ReplicatedEmbedder {
    fn info(&self) -> &ModelInfo {
        self.replicas[0].info()
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        self.replicas[0].tokenizer()
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        self.embed_tokens_reporting(ids, &|_| {})
    }

    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        let dim = self.info().dim;
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        // The smallest budget of the replicas, so every batch fits every GPU.
        let policy = self.replicas.iter().map(BertEmbedder::batch_policy).min_by_key(|p| match p {
            super::BatchPolicy::TokenBudget { max_tokens } => *max_tokens,
            super::BatchPolicy::Fixed { size } => *size,
        });
        let batches = plan_batches(&lengths, policy.unwrap_or_default());
        let next = AtomicUsize::new(0);
        let parts: Vec<Result<Vec<(&[usize], Vec<f32>)>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = self
                .replicas
                .iter()
                .map(|replica| {
                    let (batches, next) = (&batches, &next);
                    scope.spawn(move || {
                        let claimed = std::iter::from_fn(|| batches.get(next.fetch_add(1, Ordering::Relaxed)));
                        let mut finished = Vec::new();
                        replica.run_batches(ids, claimed, |batch, vectors| {
                            done(batch.len());
                            finished.push((batch, vectors));
                        })?;
                        Ok(finished)
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(IndexerError::Embed("a model replica panicked".into())))).collect()
        });
        let mut data = vec![0f32; ids.len() * dim];
        for part in parts {
            for (batch, vectors) in part? {
                scatter_rows(&mut data, dim, batch, &vectors);
            }
        }
        Ok(Embeddings { dim, data })
    }

    fn device_name(&self) -> String {
        self.replicas.iter().map(BertEmbedder::device_name).collect::<Vec<_>>().join(",")
    }
}
