//! An [`Embedder`] that gives each text a seeded, clustered unit vector instead of running the
//! model: `quarry bench-pipeline` runs the batch path with it, to time every other stage and
//! measure the run's memory at corpus sizes the CPU could not embed in reasonable time. It keeps
//! the model's name, dimension, window and tokenizer, so chunking and the model ids the chunker
//! hands on are what a real run has; the same ids always give the same vector, and texts
//! spread over [`CLUSTERS`] clusters, so ANN indexes and their recall check see structure.

use std::sync::Arc;

use rayon::prelude::*;

use quarry_datasets::synthetic::{ClusterCentres, SeededRng};
use quarry_indexer::embed::{Embedder, Embeddings, ModelDir, ModelInfo, ModelTokenizer};

/// Clusters the vectors are drawn around.
pub const CLUSTERS: usize = 256;

pub struct SeededEmbedder {
    info: ModelInfo,
    tokenizer: Arc<ModelTokenizer>,
    centres: ClusterCentres,
}

impl SeededEmbedder {
    /// The model in `model`'s name, dimension and tokenizer; its weights are never read.
    pub fn new(model: &ModelDir) -> quarry_indexer::Result<Self> {
        let info = model.info()?;
        let tokenizer = Arc::new(ModelTokenizer::from_file(&model.tokenizer_file(), info.max_tokens)?);
        let centres = ClusterCentres::draw(CLUSTERS, info.dim, &mut SeededRng::new(0x5EED));
        Ok(Self {
            info,
            tokenizer,
            centres,
        })
    }

    /// The unit vector of one text's model ids, appended to `out`.
    fn push_vector(&self, ids: &[u32], out: &mut Vec<f32>) {
        // FNV-1a over the ids: the text's seed.
        let seed = ids.iter().fold(0xCBF2_9CE4_8422_2325u64, |hash, &id| {
            (hash ^ id as u64).wrapping_mul(0x0100_0000_01B3)
        });
        self.centres.push_vector(&mut SeededRng::new(seed), out);
    }
}

impl Embedder for SeededEmbedder {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        &self.tokenizer
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> quarry_indexer::Result<Embeddings> {
        let dim = self.info.dim;
        let data = ids
            .par_iter()
            .flat_map_iter(|ids| {
                let mut row = Vec::with_capacity(dim);
                self.push_vector(ids, &mut row);
                row
            })
            .collect();
        Ok(Embeddings { dim, data })
    }

    fn device_name(&self) -> String {
        "seeded vectors (no model)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_ids_give_the_same_unit_vector_and_others_differ() {
        let model = ModelDir::open(&quarry_indexer::embed::default_model_dir().unwrap()).unwrap();
        let embedder = SeededEmbedder::new(&model).unwrap();
        let ids = embedder
            .tokenize(&[
                "tide tables for the harbour",
                "court of appeal ruling",
                "tide tables for the harbour",
            ])
            .unwrap();
        let rows = embedder.embed_tokens(&ids).unwrap();
        let dim = embedder.info().dim;
        let row = |i: usize| &rows.data[i * dim..(i + 1) * dim];
        assert_eq!(rows.data.len(), 3 * dim);
        assert_eq!(row(0), row(2));
        assert_ne!(row(0), row(1));
        for i in 0..3 {
            let norm: f32 = row(i).iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "row {i} norm {norm}");
        }
    }
}
