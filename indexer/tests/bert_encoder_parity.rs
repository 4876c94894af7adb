//! quarry's BERT encoder against candle-transformers' `BertModel` on the real weights: the
//! same token vectors (within float rounding) for padded and unpadded batches.

mod common;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::BertModel;
use quarry_indexer::embed::{BertEncoder, ModelDir};

/// Deterministic pseudo-random ids in the vocabulary (not special tokens), with [CLS] first
/// and [SEP] last on each row's real tokens and [PAD] after.
fn batch(lengths: &[usize], tokens: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let (mut ids, mut mask) = (Vec::new(), Vec::new());
    for &length in lengths {
        for t in 0..tokens {
            let id = match t {
                0 => 101,
                t if t + 1 == length => 102,
                t if t < length => 1000 + next() % 29_000,
                _ => 0,
            };
            ids.push(id);
            mask.push(u32::from(t < length));
        }
    }
    (ids, mask)
}

#[test]
fn same_token_vectors_as_candle_transformers() {
    let dir = ModelDir::open(&common::model_dir()).unwrap();
    let device = Device::Cpu;
    // SAFETY: the weights file is only read, and not modified during the test.
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[dir.weights()], DType::F32, &device) }.unwrap();
    let reference = BertModel::load(vb.clone(), &dir.bert_config).unwrap();
    let ours = BertEncoder::load(vb, &dir.bert_config).unwrap();
    let hidden = dir.hidden_size;
    // Padded rows of odd lengths (the mask path), then rows of one length (no mask).
    for (lengths, tokens, seed) in [(vec![37, 5, 61, 2, 61], 61, 7), (vec![19, 19, 19], 19, 11), (vec![256], 256, 13)] {
        let (ids, mask) = batch(&lengths, tokens, seed);
        let shape = (lengths.len(), tokens);
        let ids = Tensor::from_vec(ids, shape, &device).unwrap();
        let mask = Tensor::from_vec(mask, shape, &device).unwrap();
        let want = reference.forward(&ids, &ids.zeros_like().unwrap(), Some(&mask)).unwrap().to_vec3::<f32>().unwrap();
        let got = ours.forward(&ids, &lengths).unwrap().to_vec3::<f32>().unwrap();
        let mut worst = 0f32;
        for (row, &length) in lengths.iter().enumerate() {
            for t in 0..length {
                assert_eq!(got[row][t].len(), hidden);
                for (a, b) in got[row][t].iter().zip(&want[row][t]) {
                    worst = worst.max((a - b).abs());
                }
            }
        }
        assert!(worst < 2e-5, "lengths {lengths:?}: largest difference {worst}");
    }
}
