//! The embedder against ../shared/reference/minilm-golden.jsonl (an independent float64
//! implementation): cosine >= 0.9999 for every text, alone and inside mixed-length batches.

mod common;

use quarry_indexer::embed::{BatchPolicy, Embedder};

fn golden() -> Vec<(String, Vec<f32>)> {
    let text = std::fs::read_to_string(common::shared_dir().join("reference/minilm-golden.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let embedding = value["embedding"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
            (value["text"].as_str().unwrap().to_string(), embedding)
        })
        .collect()
}

fn assert_matches(embedder: &dyn Embedder, texts: &[&str], expected: &[&Vec<f32>], how: &str) {
    let embeddings = embedder.embed(texts).unwrap();
    assert_eq!(embeddings.rows(), texts.len());
    for (i, want) in expected.iter().enumerate() {
        let got = embeddings.row(i);
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{how}: row {i} not unit length ({norm})");
        let cosine = common::cosine(got, want);
        assert!(cosine >= 0.9999, "{how}: text {:?} has cosine {cosine}", texts[i]);
    }
}

#[test]
fn every_golden_text_alone() {
    let golden = golden();
    assert_eq!(golden.len(), 22);
    let embedder = common::embedder();
    assert_eq!(embedder.info().dim, 384);
    for (text, want) in &golden {
        assert_matches(embedder.as_ref(), &[text.as_str()], &[want], "alone");
    }
}

#[test]
fn golden_texts_inside_mixed_length_batches() {
    let golden = golden();
    // Interleave long and short texts so padding is exercised under every policy.
    let mut order: Vec<usize> = (0..golden.len()).collect();
    order.sort_by_key(|&i| (i % 3, std::cmp::Reverse(golden[i].0.len())));
    let texts: Vec<&str> = order.iter().map(|&i| golden[i].0.as_str()).collect();
    let expected: Vec<&Vec<f32>> = order.iter().map(|&i| &golden[i].1).collect();
    for policy in [
        BatchPolicy::TokenBudget { max_tokens: 600 },
        BatchPolicy::TokenBudget { max_tokens: 100_000 },
        BatchPolicy::Fixed { size: 5 },
        BatchPolicy::Fixed { size: 64 },
    ] {
        let embedder = common::load_embedder(policy);
        assert_matches(&embedder, &texts, &expected, &format!("{policy:?}"));
    }
}
