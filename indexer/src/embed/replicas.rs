//! Several model replicas (one per GPU for `--device cuda:0,1`) sharing one embedding call:
//! the token-budget batches go to whichever replica is free next.

use std::sync::Arc;

use super::shared_batches::{gather, Finished, SharedBatches};
use super::{plan_batches, BertEmbedder, Embedder, Embeddings, ModelInfo, ModelTokenizer};
use crate::error::{IndexerError, Result};

/// An [`Embedder`] over several [`BertEmbedder`]s of the same model.
pub struct ReplicatedEmbedder {
    replicas: Vec<BertEmbedder>,
}

impl ReplicatedEmbedder {
    /// Replicas must hold the same model (same weights hash).
    pub fn new(replicas: Vec<BertEmbedder>) -> Result<Self> {
        let first = replicas
            .first()
            .ok_or_else(|| IndexerError::Config("no model replicas".into()))?;
        if let Some(other) = replicas.iter().find(|r| r.info() != first.info()) {
            return Err(IndexerError::Config(format!(
                "replicas differ: {} on {} vs {} on {}",
                first.info().name,
                first.device_name(),
                other.info().name,
                other.device_name()
            )));
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

    /// A batch for each replica at once, each within the smallest replica's budget.
    fn batch_tokens(&self) -> Option<usize> {
        let smallest = self.replicas.iter().filter_map(Embedder::batch_tokens).min()?;
        Some(smallest.saturating_mul(self.replicas.len()))
    }

    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        let dim = self.info().dim;
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        // The smallest budget of the replicas, so every batch fits every GPU.
        let policy = self
            .replicas
            .iter()
            .map(BertEmbedder::batch_policy)
            .min_by_key(|p| match p {
                super::BatchPolicy::TokenBudget { max_tokens } => *max_tokens,
                super::BatchPolicy::Fixed { size } => *size,
            });
        let batches = plan_batches(&lengths, policy.unwrap_or_default());
        let shared = SharedBatches::new(&batches);
        let parts: Vec<Result<Finished>> = std::thread::scope(|scope| {
            let workers: Vec<_> = self
                .replicas
                .iter()
                .map(|replica| {
                    let shared = &shared;
                    scope.spawn(move || shared.run(replica, ids, done))
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err(IndexerError::Embed("a model replica panicked".into())))
                })
                .collect()
        });
        gather(parts, ids.len(), dim)
    }

    fn device_name(&self) -> String {
        self.replicas
            .iter()
            .map(BertEmbedder::device_name)
            .collect::<Vec<_>>()
            .join(",")
    }
}
