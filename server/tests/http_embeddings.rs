//! The embeddings routes over real HTTP: OpenAI's POST /v1/embeddings driven by the real
//! `openai` Python client (PyPI, installed into .venv by scripts/python-tools.sh), and Text
//! Embeddings Inference's POST /embed. The vectors match the golden file (cosine >= 0.9999 on
//! the CPU) and the model's own embed call (what `quarry embed` writes), base64 and float
//! carry the same numbers, `usage` counts the model's tokens, and every refusal comes in its
//! surface's shape.

use crate::http_common;

use std::path::PathBuf;
use std::process::Command;

use http_common::{common, options, TestServer};
use serde_json::{json, Value};

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn floats(value: &Value) -> Vec<f64> {
    value.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn golden() -> (PathBuf, Vec<(String, Vec<f64>)>) {
    let path = common::shared_dir().join("reference/minilm-golden.jsonl");
    let rows = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            (row["text"].as_str().unwrap().to_string(), floats(&row["embedding"]))
        })
        .collect();
    (path, rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_openai_client_gets_golden_vectors_and_clear_refusals() {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/openai_embeddings.py");
    assert!(
        python.exists(),
        "{} missing: run scripts/python-tools.sh (scripts/test.sh does)",
        python.display()
    );
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (golden_path, golden) = golden();
    let base = server.url("");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(base)
            .arg(golden_path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "the openai client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let texts: Vec<&str> = report["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), golden.iter().filter(|(text, _)| !text.is_empty()).count());
    assert_eq!(
        (&report["object"], &report["model"]),
        (&json!("list"), &json!("all-MiniLM-L6-v2"))
    );
    assert_eq!(
        report["indexes"],
        json!((0..texts.len()).collect::<Vec<_>>()),
        "one vector per input, in order"
    );
    for (i, text) in texts.iter().enumerate() {
        let reference = &golden.iter().find(|(t, _)| t == text).unwrap().1;
        let decoded = floats(&report["default"][i]);
        let plain = floats(&report["float"][i]);
        let similarity = cosine(&decoded, reference);
        assert!(
            similarity >= 0.9999,
            "{text:?}: cosine {similarity} to the golden vector"
        );
        let largest_gap = decoded
            .iter()
            .zip(&plain)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            largest_gap < 1e-6,
            "base64 and float differ by {largest_gap} for {text:?}"
        );
    }
    assert!(cosine(&floats(&report["one"]), &floats(&report["default"][0])) > 0.99999);
    // The same vectors `quarry embed` writes: the model's own embed call on the same texts.
    let direct = common::embedder().embed(&texts).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let own: Vec<f64> = direct.row(i).iter().map(|&x| f64::from(x)).collect();
        let similarity = cosine(&floats(&report["float"][i]), &own);
        assert!(
            similarity > 0.99999,
            "{text:?}: cosine {similarity} to the model's own vector"
        );
    }

    // usage: the model's tokens, specials included, the long text's first 256 of them.
    let tokenizer = common::embedder().tokenizer().clone();
    let tokens: usize = texts
        .iter()
        .map(|t| tokenizer.model_ids(t).unwrap().text_tokens().min(254) + 2)
        .sum();
    assert_eq!(
        report["usage"],
        json!({ "prompt_tokens": tokens, "total_tokens": tokens }),
        "{}",
        report["usage"]
    );
    let one_tokens = tokenizer.model_ids(texts[0]).unwrap().text_tokens() + 2;
    assert_eq!(report["one_usage"]["prompt_tokens"], json!(one_tokens));

    let refused = &report["refused"];
    assert_eq!(refused["too_long"]["status"], 400, "{refused}");
    let message = refused["too_long"]["message"].as_str().unwrap();
    assert!(
        message.contains("input[1]") && message.contains("at most 256") && message.contains("truncate"),
        "{message}"
    );
    assert_eq!(refused["empty"]["status"], 400, "{refused}");
    assert!(
        refused["empty"]["message"].as_str().unwrap().contains("empty"),
        "{refused}"
    );
    assert_eq!(refused["dimensions"]["status"], 400, "{refused}");
    assert!(
        refused["dimensions"]["message"].as_str().unwrap().contains("384"),
        "{refused}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tei_embed_answers_vectors_and_refuses_in_its_shape() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let (_, golden) = golden();
    let (text, reference) = golden.iter().find(|(t, _)| !t.is_empty()).unwrap();

    let (status, one) = server.post("/embed", json!({ "inputs": text })).await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert!(cosine(&floats(&one[0]), reference) >= 0.9999);
    let (status, two) = server
        .post("/embed", json!({ "inputs": [text, "a second text"] }))
        .await;
    assert_eq!((status, two.as_array().unwrap().len()), (200, 2));
    let (_, openai) = server
        .post(
            "/v1/embeddings",
            json!({ "input": text, "model": "any", "encoding_format": "float" }),
        )
        .await;
    assert!(cosine(&floats(&openai["data"][0]["embedding"]), &floats(&two[0])) > 0.99999);

    // One text takes the searches' path: the same text again is a query-cache hit.
    let hits = || server.metric("quarry_query_cache_total{result=\"hit\"}");
    let before = hits().await;
    for _ in 0..2 {
        let (status, _) = server
            .post(
                "/v1/embeddings",
                json!({ "input": "cached text", "encoding_format": "float" }),
            )
            .await;
        assert_eq!(status, 200);
    }
    assert_eq!(hits().await, before + 1, "the second request is a query-cache hit");

    let long = "word ".repeat(400);
    let (status, refused) = server.post("/embed", json!({ "inputs": long })).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error_type"], "Validation", "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("at most 256"), "{refused}");
    let (status, cut) = server.post("/embed", json!({ "inputs": long, "truncate": true })).await;
    assert_eq!((status, cut.as_array().unwrap().len()), (200, 1));
    for body in [
        json!({ "inputs": 5 }),
        json!({ "inputs": "x", "normalize": false }),
        json!({ "inputs": [""] }),
    ] {
        let (status, refused) = server.post("/embed", body.clone()).await;
        assert_eq!(
            (status, &refused["error_type"]),
            (422, &json!("Validation")),
            "{body}: {refused}"
        );
    }
    let many: Vec<&str> = vec!["x"; 2049];
    let (status, refused) = server.post("/embed", json!({ "inputs": many })).await;
    assert_eq!(status, 413, "{refused}");

    // /v1/embeddings: a malformed body in OpenAI's shape.
    let response = server
        .client
        .post(server.url("/v1/embeddings"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"]["type"], "invalid_request_error", "{refused}");
    let (status, refused) = server.post("/v1/embeddings", json!({ "input": [1, 2, 999999] })).await;
    assert_eq!(
        (status, &refused["error"]["param"]),
        (400, &json!("input")),
        "{refused}"
    );
    let (status, tokens) = server
        .post(
            "/v1/embeddings",
            json!({ "input": [[7592, 2088]], "encoding_format": "float" }),
        )
        .await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["usage"]["prompt_tokens"], 4, "two ids and the two specials");
    server.stop().await;
}
