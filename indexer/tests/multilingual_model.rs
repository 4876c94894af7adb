//! A multilingual model loads and embeds as its architecture says: an XLM-RoBERTa-style
//! sentence-transformers folder (positions counted from after the padding index, a Unigram /
//! SentencePiece tokenizer with `<s> … </s>`) made here with random weights and a tokenizer
//! built with the `tokenizers` crate, embedded by quarry's CPU encoder and compared with a
//! reference forward pass written below in plain loops (no candle).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use quarry_indexer::embed::{BatchPolicy, BertEmbedder, EmbedOptions, Embedder, ModelDir, Precision};
use rand::{Rng, SeedableRng};

const HIDDEN: usize = 32;
const HEADS: usize = 4;
const INTERMEDIATE: usize = 64;
const LAYERS: usize = 2;
const MAX_POSITIONS: usize = 40;
const PAD: usize = 1;
const EPS: f32 = 1e-5;

/// The pieces of the Unigram vocabulary (after the four specials), with their log-probabilities.
const PIECES: [(&str, f64); 24] = [
    ("▁", -3.0),
    ("▁the", -2.0),
    ("▁house", -4.0),
    ("▁houses", -4.5),
    ("▁haus", -4.5),
    ("▁häuser", -5.0),
    ("s", -3.5),
    ("▁stadt", -5.0),
    ("▁東京", -5.0),
    ("東", -6.0),
    ("京", -6.0),
    ("タワー", -5.5),
    ("の", -4.0),
    ("▁dom", -5.0),
    ("ом", -6.0),
    ("▁до", -5.5),
    ("a", -4.0),
    ("e", -4.0),
    ("h", -4.5),
    ("o", -4.0),
    ("u", -4.0),
    ("t", -4.0),
    ("r", -4.5),
    ("▁m", -5.0),
];

/// Random weights of every tensor the checkpoint holds, row-major as PyTorch stores them.
fn weights(vocab: usize) -> HashMap<String, (Vec<usize>, Vec<f32>)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut w = HashMap::new();
    let mut put = |name: String, shape: Vec<usize>, scale: f32, offset: f32| {
        let n = shape.iter().product();
        let data = (0..n)
            .map(|_| offset + scale * rng.random_range(-1.0f32..1.0))
            .collect();
        w.insert(name, (shape, data));
    };
    put(
        "embeddings.word_embeddings.weight".into(),
        vec![vocab, HIDDEN],
        0.5,
        0.0,
    );
    put(
        "embeddings.position_embeddings.weight".into(),
        vec![MAX_POSITIONS, HIDDEN],
        0.5,
        0.0,
    );
    put(
        "embeddings.token_type_embeddings.weight".into(),
        vec![1, HIDDEN],
        0.1,
        0.0,
    );
    put("embeddings.LayerNorm.weight".into(), vec![HIDDEN], 0.1, 1.0);
    put("embeddings.LayerNorm.bias".into(), vec![HIDDEN], 0.1, 0.0);
    for layer in 0..LAYERS {
        let p = format!("encoder.layer.{layer}.");
        for name in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ] {
            put(format!("{p}{name}.weight"), vec![HIDDEN, HIDDEN], 0.3, 0.0);
            put(format!("{p}{name}.bias"), vec![HIDDEN], 0.1, 0.0);
        }
        put(
            format!("{p}intermediate.dense.weight"),
            vec![INTERMEDIATE, HIDDEN],
            0.3,
            0.0,
        );
        put(format!("{p}intermediate.dense.bias"), vec![INTERMEDIATE], 0.1, 0.0);
        put(format!("{p}output.dense.weight"), vec![HIDDEN, INTERMEDIATE], 0.3, 0.0);
        put(format!("{p}output.dense.bias"), vec![HIDDEN], 0.1, 0.0);
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            put(format!("{p}{norm}.weight"), vec![HIDDEN], 0.1, 1.0);
            put(format!("{p}{norm}.bias"), vec![HIDDEN], 0.1, 0.0);
        }
    }
    w
}

/// A sentence-transformers folder of an XLM-RoBERTa-style model: config, weights, tokenizer, mean pooling.
fn write_model(dir: &Path, weights: &HashMap<String, (Vec<usize>, Vec<f32>)>, vocab: usize) {
    let config = serde_json::json!({
        "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "vocab_size": vocab, "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": MAX_POSITIONS,
        "type_vocab_size": 1, "initializer_range": 0.02, "layer_norm_eps": EPS, "pad_token_id": PAD, "bos_token_id": 0,
        "eos_token_id": 2, "position_embedding_type": "absolute", "use_cache": true, "classifier_dropout": null
    });
    std::fs::write(dir.join("config.json"), serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    std::fs::write(dir.join("1_Pooling/config.json"), r#"{"word_embedding_dimension": 32, "pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false, "pooling_mode_max_tokens": false}"#).unwrap();
    let tensors: HashMap<String, Tensor> = weights
        .iter()
        .map(|(name, (shape, data))| {
            (
                name.clone(),
                Tensor::from_vec(data.clone(), shape.as_slice(), &Device::Cpu).unwrap(),
            )
        })
        .collect();
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    // The tokenizer, as XLM-R's: NFKC, SentencePiece's metaspace, a Unigram model, <s> $A </s>.
    use tokenizers::models::unigram::Unigram;
    use tokenizers::normalizers::unicode::NFKC;
    use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
    use tokenizers::processors::template::TemplateProcessing;
    let mut vocab_list: Vec<(String, f64)> = ["<s>", "<pad>", "</s>", "<unk>"]
        .iter()
        .map(|t| (t.to_string(), 0.0))
        .collect();
    vocab_list.extend(PIECES.iter().map(|(p, s)| (p.to_string(), *s)));
    let model = Unigram::from(vocab_list, Some(3), false).unwrap();
    let mut tokenizer = tokenizers::Tokenizer::new(model);
    tokenizer.with_normalizer(Some(NFKC));
    tokenizer.with_pre_tokenizer(Some(Metaspace::new('▁', PrependScheme::Always, true)));
    tokenizer.with_decoder(Some(tokenizers::decoders::metaspace::Metaspace::new(
        '▁',
        PrependScheme::Always,
        true,
    )));
    let template = TemplateProcessing::builder()
        .try_single("<s> $A </s>")
        .unwrap()
        .special_tokens(vec![("<s>", 0), ("</s>", 2)])
        .build()
        .unwrap();
    tokenizer.with_post_processor(Some(template));
    tokenizer.add_special_tokens(&[
        tokenizers::AddedToken::from("<s>", true),
        tokenizers::AddedToken::from("<pad>", true),
        tokenizers::AddedToken::from("</s>", true),
        tokenizers::AddedToken::from("<unk>", true),
    ]);
    tokenizer.save(dir.join("tokenizer.json"), false).unwrap();
}

fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32]) {
    let n = x.len() as f32;
    let mean = x.iter().sum::<f32>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    for (i, v) in x.iter_mut().enumerate() {
        *v = (*v - mean) / (var + EPS).sqrt() * gamma[i] + beta[i];
    }
}

/// `x W^T + b` for one row (W stored [out, in]).
fn linear(x: &[f32], w: &[f32], b: &[f32]) -> Vec<f32> {
    let (out, inp) = (b.len(), x.len());
    (0..out)
        .map(|o| b[o] + (0..inp).map(|i| x[i] * w[o * inp + i]).sum::<f32>())
        .collect()
}

fn erf(x: f64) -> f64 {
    // Abramowitz and Stegun 7.1.26 is too coarse here; a series / continued fraction is not needed
    // for |x| this small: use the complementary error function's Chebyshev fit (Numerical Recipes erfc).
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - r
    } else {
        r - 1.0
    }
}

/// The reference embedding of one text's ids: BERT's forward pass with positions from `PAD + 1`,
/// mean-pooled over every token, L2-normalized.
fn reference(ids: &[u32], w: &HashMap<String, (Vec<usize>, Vec<f32>)>) -> Vec<f32> {
    let g = |name: &str| w[name].1.as_slice();
    let n = ids.len();
    let mut x: Vec<Vec<f32>> = (0..n)
        .map(|t| {
            let mut row: Vec<f32> = (0..HIDDEN)
                .map(|h| {
                    g("embeddings.word_embeddings.weight")[ids[t] as usize * HIDDEN + h]
                        + g("embeddings.position_embeddings.weight")[(PAD + 1 + t) * HIDDEN + h]
                        + g("embeddings.token_type_embeddings.weight")[h]
                })
                .collect();
            layer_norm(
                &mut row,
                g("embeddings.LayerNorm.weight"),
                g("embeddings.LayerNorm.bias"),
            );
            row
        })
        .collect();
    let dh = HIDDEN / HEADS;
    for layer in 0..LAYERS {
        let p = |name: &str| format!("encoder.layer.{layer}.{name}");
        let proj = |name: &str, x: &Vec<Vec<f32>>| -> Vec<Vec<f32>> {
            x.iter()
                .map(|r| linear(r, g(&p(&format!("{name}.weight"))), g(&p(&format!("{name}.bias")))))
                .collect()
        };
        let (q, k, v) = (
            proj("attention.self.query", &x),
            proj("attention.self.key", &x),
            proj("attention.self.value", &x),
        );
        let mut context = vec![vec![0.0f32; HIDDEN]; n];
        for head in 0..HEADS {
            let r = head * dh..(head + 1) * dh;
            for i in 0..n {
                let scores: Vec<f32> = (0..n)
                    .map(|j| {
                        q[i][r.clone()]
                            .iter()
                            .zip(&k[j][r.clone()])
                            .map(|(a, b)| a * b)
                            .sum::<f32>()
                            / (dh as f32).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f32::MIN, f32::max);
                let exp: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f32 = exp.iter().sum();
                for j in 0..n {
                    for (c, d) in r.clone().enumerate() {
                        context[i][head * dh + c] += exp[j] / sum * v[j][d];
                    }
                }
            }
        }
        let attended = proj("attention.output.dense", &context);
        for i in 0..n {
            let mut row: Vec<f32> = x[i].iter().zip(&attended[i]).map(|(a, b)| a + b).collect();
            layer_norm(
                &mut row,
                g(&p("attention.output.LayerNorm.weight")),
                g(&p("attention.output.LayerNorm.bias")),
            );
            let inner: Vec<f32> = linear(
                &row,
                g(&p("intermediate.dense.weight")),
                g(&p("intermediate.dense.bias")),
            )
            .iter()
            .map(|&u| (0.5 * u as f64 * (1.0 + erf(u as f64 / std::f64::consts::SQRT_2))) as f32)
            .collect();
            let out = linear(&inner, g(&p("output.dense.weight")), g(&p("output.dense.bias")));
            let mut next: Vec<f32> = row.iter().zip(&out).map(|(a, b)| a + b).collect();
            layer_norm(
                &mut next,
                g(&p("output.LayerNorm.weight")),
                g(&p("output.LayerNorm.bias")),
            );
            x[i] = next;
        }
    }
    let mut pooled: Vec<f32> = (0..HIDDEN)
        .map(|h| x.iter().map(|r| r[h]).sum::<f32>() / n as f32)
        .collect();
    let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
    pooled.iter_mut().for_each(|v| *v /= norm);
    pooled
}

#[test]
fn an_xlm_roberta_style_model_embeds_as_the_reference_forward_pass() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = 4 + PIECES.len();
    let weights = weights(vocab);
    write_model(dir.path(), &weights, vocab);
    let model = ModelDir::open(dir.path()).unwrap();
    // XLM-R's positions start after the padding index: the window is 40 - 2 tokens.
    assert_eq!(model.info().unwrap().max_tokens, MAX_POSITIONS - PAD - 1);
    let tokenizer = tokenizers::Tokenizer::from_file(dir.path().join("tokenizer.json")).unwrap();
    // Texts of different lengths in one batch (padding with id 1), several scripts, an unknown character.
    let texts = [
        "the houses",
        "Häuser der Stadt",
        "東京タワーの",
        "дом",
        "the house ☃ haus",
        "a",
    ];
    for precision in [Precision::F32, Precision::Auto] {
        let embedder = BertEmbedder::load(
            &model,
            EmbedOptions {
                batch: Some(BatchPolicy::default()),
                precision,
                ..Default::default()
            },
        )
        .unwrap();
        let got = embedder.embed(&texts).unwrap();
        for (i, text) in texts.iter().enumerate() {
            let ids = tokenizer.encode(*text, true).unwrap().get_ids().to_vec();
            assert_eq!((ids[0], *ids.last().unwrap()), (0, 2), "{text}: {ids:?}");
            let want = reference(&ids, &weights);
            let cosine: f32 = got.row(i).iter().zip(&want).map(|(a, b)| a * b).sum();
            let bar = if precision == Precision::F32 { 0.9999 } else { 0.999 };
            assert!(
                cosine >= bar,
                "{precision:?} {text}: cosine {cosine} against the reference ({ids:?})"
            );
        }
    }
    // Position ids from 0 (BERT's) would give other vectors: the offset is what makes them match.
    let embedder = BertEmbedder::load(
        &model,
        EmbedOptions {
            precision: Precision::F32,
            ..Default::default()
        },
    )
    .unwrap();
    let ids = tokenizer.encode("the houses", true).unwrap().get_ids().to_vec();
    let mut shifted = weights.clone();
    let table = &mut shifted.get_mut("embeddings.position_embeddings.weight").unwrap().1;
    table.rotate_right((PAD + 1) * HIDDEN);
    let wrong = reference(&ids, &shifted);
    let got = embedder.embed(&["the houses"]).unwrap();
    let cosine: f32 = got.row(0).iter().zip(&wrong).map(|(a, b)| a * b).sum();
    assert!(cosine < 0.999, "positions from 0 should not match: {cosine}");
}
