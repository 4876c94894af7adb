//! The embedder against ../shared/reference/minilm-golden.jsonl (an independent float64
//! implementation): cosine >= 0.9999 for every text, alone and inside mixed-length batches,
//! in f32 and at the default precision (auto: bf16 products on a CPU with AVX512-BF16).

mod common;

use quarry_indexer::embed::{plan_batches, BatchPolicy, Embedder, Precision, ReplicatedEmbedder};

fn golden() -> Vec<(String, Vec<f32>)> {
    let text = std::fs::read_to_string(common::shared_dir().join("reference/minilm-golden.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let embedding = value["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            (value["text"].as_str().unwrap().to_string(), embedding)
        })
        .collect()
}

fn assert_matches(embedder: &dyn Embedder, texts: &[&str], expected: &[&Vec<f32>], how: &str) {
    assert_matches_within(embedder, texts, expected, how, 0.9999);
}

fn assert_matches_within(embedder: &dyn Embedder, texts: &[&str], expected: &[&Vec<f32>], how: &str, min_cosine: f64) {
    let embeddings = embedder.embed(texts).unwrap();
    assert_eq!(embeddings.rows(), texts.len());
    for (i, want) in expected.iter().enumerate() {
        let got = embeddings.row(i);
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{how}: row {i} not unit length ({norm})");
        let cosine = common::cosine(got, want);
        assert!(cosine >= min_cosine, "{how}: text {:?} has cosine {cosine}", texts[i]);
    }
}

#[test]
fn every_golden_text_alone() {
    let golden = golden();
    assert_eq!(golden.len(), 22);
    let f32 = common::load_embedder_at(BatchPolicy::default(), Precision::F32);
    for (embedder, how) in [
        (common::embedder().as_ref(), "alone, auto"),
        (&f32 as &dyn Embedder, "alone, f32"),
    ] {
        assert_eq!(embedder.info().dim, 384);
        for (text, want) in &golden {
            assert_matches(embedder, &[text.as_str()], &[want], how);
        }
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
        for precision in [Precision::F32, Precision::Auto] {
            let embedder = common::load_embedder_at(policy, precision);
            assert_matches(&embedder, &texts, &expected, &format!("{policy:?} {precision:?}"));
        }
    }
}

/// Golden texts in batch-size order, long and short mixed.
fn mixed_order(golden: &[(String, Vec<f32>)]) -> (Vec<&str>, Vec<&Vec<f32>>) {
    let mut order: Vec<usize> = (0..golden.len()).collect();
    order.sort_by_key(|&i| (i % 3, std::cmp::Reverse(golden[i].0.len())));
    (
        order.iter().map(|&i| golden[i].0.as_str()).collect(),
        order.iter().map(|&i| &golden[i].1).collect(),
    )
}

/// On the CPU, no batch policy means the CPU's token budget; one given is kept as it is (a
/// GPU sizes the default from its free memory instead: `golden_texts_on_the_gpu_at_every_precision`).
#[test]
fn the_cpu_keeps_the_batch_policy_it_is_given_else_its_default() {
    use quarry_indexer::embed::{BertEmbedder, DeviceSpec, EmbedOptions, ModelDir, CPU_TOKEN_BUDGET};
    let dir = ModelDir::open(&common::model_dir()).unwrap();
    let load = |batch| {
        BertEmbedder::load(
            &dir,
            EmbedOptions {
                batch,
                device: DeviceSpec::Cpu,
                ..Default::default()
            },
        )
        .unwrap()
        .batch_policy()
    };
    assert_eq!(
        load(None),
        BatchPolicy::TokenBudget {
            max_tokens: CPU_TOKEN_BUDGET
        }
    );
    for given in [
        BatchPolicy::TokenBudget {
            max_tokens: CPU_TOKEN_BUDGET,
        },
        BatchPolicy::TokenBudget { max_tokens: 777 },
        BatchPolicy::Fixed { size: 3 },
    ] {
        assert_eq!(load(Some(given)), given);
    }
}

#[test]
fn replicas_share_the_batches_and_match_one_model() {
    let golden = golden();
    let (texts, expected) = mixed_order(&golden);
    // A small budget makes many batches, so both replicas take some.
    let policy = BatchPolicy::TokenBudget { max_tokens: 300 };
    let replicated =
        ReplicatedEmbedder::new(vec![common::load_embedder(policy), common::load_embedder(policy)]).unwrap();
    // One batch at a time on the CPU (its batches are reported in order below).
    let one = common::load_embedder_with(policy, Precision::Auto, Some(1));
    // Both replicas on the device `auto` picks: "cpu,cpu" here, "cuda:0,cuda:0" on a GPU.
    assert_eq!(replicated.device_name(), format!("{0},{0}", one.device_name()));
    assert_matches(&replicated, &texts, &expected, "two replicas");
    let single = one.embed(&texts).unwrap();
    assert_eq!(
        replicated.embed(&texts).unwrap(),
        single,
        "the same rows in the same order as one model"
    );

    // Each batch is reported as it finishes (a run's progress), by one model in order and by
    // the replicas in whatever order they finish.
    let ids = one.tokenize(&texts).unwrap();
    let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
    let planned: Vec<usize> = plan_batches(&lengths, policy).iter().map(Vec::len).collect();
    assert!(planned.len() > 2, "{planned:?}");
    let reported = |embedder: &dyn Embedder| {
        let sizes = std::sync::Mutex::new(Vec::new());
        let embeddings = embedder
            .embed_tokens_reporting(&ids, &|rows| sizes.lock().unwrap().push(rows))
            .unwrap();
        (embeddings, sizes.into_inner().unwrap())
    };
    let (embeddings, sizes) = reported(&one);
    assert_eq!(sizes, planned, "one model, batch by batch");
    assert!(embeddings == single, "one model reporting: other vectors");
    let (embeddings, mut sizes) = reported(&replicated);
    let mut planned = planned;
    sizes.sort_unstable();
    planned.sort_unstable();
    assert_eq!(sizes, planned, "two replicas");
    assert!(embeddings == single, "two replicas reporting: other vectors");
}

/// On the CPU, several batches of one call run at once (lanes) and give the rows one lane
/// gives, in the callers' order, each batch reported once.
#[test]
fn cpu_lanes_give_the_rows_of_one_batch_at_a_time() {
    let golden = golden();
    let (texts, expected) = mixed_order(&golden);
    let policy = BatchPolicy::TokenBudget { max_tokens: 300 };
    let one_lane = common::load_embedder_with(policy, Precision::Auto, Some(1));
    let ids = one_lane.tokenize(&texts).unwrap();
    let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
    let mut planned: Vec<usize> = plan_batches(&lengths, policy).iter().map(Vec::len).collect();
    assert!(planned.len() > 3, "{planned:?}");
    let single = one_lane.embed_tokens(&ids).unwrap();
    // More lanes than the pool has threads, and than there are batches.
    for lanes in [3, 64] {
        let embedder = common::load_embedder_with(policy, Precision::Auto, Some(lanes));
        assert_matches(&embedder, &texts, &expected, &format!("{lanes} lanes"));
        let sizes = std::sync::Mutex::new(Vec::new());
        let embeddings = embedder
            .embed_tokens_reporting(&ids, &|rows| sizes.lock().unwrap().push(rows))
            .unwrap();
        assert!(
            embeddings == single,
            "{lanes} lanes: other vectors or another order than one lane"
        );
        let mut sizes = sizes.into_inner().unwrap();
        sizes.sort_unstable();
        planned.sort_unstable();
        assert_eq!(sizes, planned, "{lanes} lanes: each batch reported once");
    }
}

/// A stream of calls on one lane (as on a GPU: a batch of the next call queued before the
/// last of the current one is read back) gives each call the rows a call of its own gives, in
/// order, a call without texts an empty result in its place, every batch reported once; and
/// it stops once the sink says so, without reading the stream to its end.
#[test]
fn a_stream_of_calls_on_one_lane_gives_each_call_its_own_rows() {
    let golden = golden();
    let (texts, _) = mixed_order(&golden);
    let policy = BatchPolicy::TokenBudget { max_tokens: 300 };
    let embedder = common::load_embedder_with(policy, Precision::Auto, Some(1));
    let ids = embedder.tokenize(&texts).unwrap();
    // Several batches each (a budget of 300 tokens), one call of nothing, one of one text.
    let (first, rest) = ids.split_at(ids.len() / 2);
    let calls: Vec<Vec<Vec<u32>>> = vec![first.to_vec(), Vec::new(), rest[..1].to_vec(), rest[1..].to_vec()];
    let batches: usize = calls
        .iter()
        .map(|call| plan_batches(&call.iter().map(Vec::len).collect::<Vec<_>>(), policy).len())
        .sum();
    assert!(batches > 4, "{batches} batches");
    let alone: Vec<_> = calls.iter().map(|call| embedder.embed_tokens(call).unwrap()).collect();

    let reported = std::sync::Mutex::new(Vec::new());
    let taken = std::cell::Cell::new(0);
    let (mut handed, mut taken_when_handed) = (Vec::new(), Vec::new());
    let mut stream = calls.clone().into_iter().map(|call| {
        taken.set(taken.get() + 1);
        Ok(call)
    });
    embedder
        .embed_token_calls(&mut stream, &|rows| reported.lock().unwrap().push(rows), &mut |rows| {
            handed.push(rows);
            taken_when_handed.push(taken.get());
            true
        })
        .unwrap();
    assert_eq!(handed.len(), calls.len(), "one result per call");
    // The first call's rows came back after the next call with texts (the third) was taken:
    // a batch of it was queued before the first call's last batch was read back.
    assert_eq!(
        taken_when_handed[0], 3,
        "calls taken when each was handed on: {taken_when_handed:?}"
    );
    for (call, (got, want)) in handed.iter().zip(&alone).enumerate() {
        assert_eq!(got.rows(), calls[call].len(), "call {call}");
        assert!(got == want, "call {call}: other vectors than a call of its own");
    }
    let reported = reported.into_inner().unwrap();
    assert_eq!(reported.len(), batches, "each batch reported once");
    assert_eq!(reported.iter().sum::<usize>(), ids.len());

    // Stopped after the first call: the stream is not read to its end (on one lane the calls
    // up to the next one with texts are taken, to keep a batch queued).
    let mut stream = calls.clone().into_iter().map(Ok);
    let mut results = 0;
    embedder
        .embed_token_calls(&mut stream, &|_| {}, &mut |_| {
            results += 1;
            false
        })
        .unwrap();
    assert_eq!(results, 1);
    assert!(stream.len() >= 1, "the whole stream was taken");
}

/// The run embeds chunks with the model ids the chunker measured them by: the vectors equal
/// those of a fresh tokenization (a chunker with its own copy of the tokenizer, whose ids the
/// embed stage does not take), and match the golden ones.
#[test]
fn chunker_ids_embed_like_a_fresh_tokenization() {
    use std::sync::Arc;

    use quarry_indexer::chunk::{ChunkerConfig, TokenChunker};
    use quarry_indexer::embed::{ModelDir, ModelTokenizer};
    use quarry_indexer::parse::AutoParser;
    use quarry_indexer::pipeline::{embed_documents, parse_and_chunk, ChunkSettings};
    use quarry_indexer::source::RawDocument;

    let golden: Vec<_> = golden()
        .into_iter()
        .filter(|(text, _)| !text.trim().is_empty())
        .collect(); // a file of blanks fails to parse
    let embedder = common::embedder();
    let settings = |tokenizer: Arc<ModelTokenizer>| ChunkSettings {
        parser: Arc::new(AutoParser),
        chunker: Arc::new(TokenChunker::new(ChunkerConfig::default(), tokenizer, "test").unwrap()),
        tags: Vec::new(),
        max_document_tokens: 100_000,
        summarizer: quarry_indexer::summary::default_summarizer(),
        ingested_at: chrono::Utc::now(),
    };
    let model = ModelDir::open(&common::model_dir()).unwrap();
    let own_copy = Arc::new(ModelTokenizer::from_file(&model.tokenizer_file(), embedder.info().max_tokens).unwrap());
    let chunk_all = |settings: &ChunkSettings| -> Vec<_> {
        golden
            .iter()
            .enumerate()
            .flat_map(|(i, (text, _))| {
                let raw = RawDocument {
                    uri: format!("memory://golden/{i}.txt"),
                    relative_path: format!("{i}.txt"),
                    size: text.len() as u64,
                    bytes: text.clone().into_bytes().into(),
                    etag: None,
                    source: "memory".into(),
                    content_type: None,
                };
                let (documents, failures) = parse_and_chunk(&raw, settings);
                assert!(failures.is_empty(), "{failures:?}");
                documents
            })
            .collect()
    };
    let with_ids = chunk_all(&settings(embedder.tokenizer().clone()));
    assert!(
        with_ids.iter().all(|d| d.model_ids.iter().all(Option::is_some)),
        "every chunk comes with its ids"
    );
    let mut swapped = chunk_all(&settings(embedder.tokenizer().clone()));
    let (first, second) = swapped.split_at_mut(1);
    std::mem::swap(&mut first[0].model_ids, &mut second[0].model_ids);
    let with_ids = embed_documents(with_ids, embedder.as_ref(), 64, &|_| {}).unwrap();
    let fresh = embed_documents(chunk_all(&settings(own_copy)), embedder.as_ref(), 64, &|_| {}).unwrap();
    let swapped = embed_documents(swapped, embedder.as_ref(), 64, &|_| {}).unwrap();
    assert_eq!(with_ids.len(), golden.len());
    assert_eq!(with_ids[0].chunks.len(), 1);
    assert_eq!(with_ids[1].chunks.len(), 1);
    assert_eq!(
        (&swapped[0].vectors, &swapped[1].vectors),
        (&with_ids[1].vectors, &with_ids[0].vectors),
        "the embed stage embeds the ids it is handed"
    );
    let mut compared = 0;
    for ((document, again), (text, want)) in with_ids.iter().zip(&fresh).zip(&golden) {
        assert_eq!(document.chunks, again.chunks);
        assert_eq!(document.vectors, again.vectors, "{text:?}");
        if document.chunks.len() == 1 && document.chunks[0].text == *text {
            let cosine = common::cosine(&document.vectors, want);
            assert!(cosine >= 0.9999, "{text:?} has cosine {cosine}");
            compared += 1;
        }
    }
    assert!(
        compared >= golden.len() / 2,
        "only {compared} golden texts chunked to themselves"
    );
}

/// `--precision bf16` on the CPU: with AVX512-BF16 the dense layers' products round both
/// sides to bf16 and sum in f32, and the golden texts, in mixed-length batches and each alone
/// (a query's few rows), still meet f32's bar, cosine >= 0.9999 (half precision's is 0.999;
/// the lowest measured was 0.99997), while they differ from f32's embeddings (the bf16
/// products ran). Without AVX512-BF16 the model runs in f32.
#[test]
fn bf16_products_on_the_cpu_meet_the_golden_bar() {
    use quarry_indexer::embed::{BertEmbedder, DeviceSpec, EmbedOptions, ModelDir};
    let golden = golden();
    let (texts, expected) = mixed_order(&golden);
    let dir = ModelDir::open(&common::model_dir()).unwrap();
    let native = quarry_kernels::bf16_products_native();
    let f32_embedder = BertEmbedder::load(
        &dir,
        EmbedOptions {
            device: DeviceSpec::Cpu,
            batch: Some(BatchPolicy::default()),
            precision: Precision::F32,
            ..Default::default()
        },
    )
    .unwrap();
    let f32_rows = f32_embedder.embed(&texts).unwrap();
    for batch in [BatchPolicy::TokenBudget { max_tokens: 600 }, BatchPolicy::default()] {
        let embedder = BertEmbedder::load(
            &dir,
            EmbedOptions {
                device: DeviceSpec::Cpu,
                batch: Some(batch),
                precision: Precision::Bf16,
                ..Default::default()
            },
        )
        .unwrap();
        let how = format!("bf16 on the CPU, {batch:?}");
        assert_matches_within(&embedder, &texts, &expected, &how, 0.9999);
        let rows = embedder.embed(&texts).unwrap();
        let largest_difference = rows
            .data
            .iter()
            .zip(&f32_rows.data)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        match native {
            true => assert!(
                largest_difference > 1e-4,
                "{how}: the embeddings are f32's (largest difference {largest_difference})"
            ),
            false => eprintln!(
                "this CPU has no AVX512-BF16: bf16 runs in f32 (largest difference from f32 {largest_difference})"
            ),
        }
    }
    let embedder = BertEmbedder::load(
        &dir,
        EmbedOptions {
            device: DeviceSpec::Cpu,
            precision: Precision::Bf16,
            ..Default::default()
        },
    )
    .unwrap();
    let mut largest_difference = 0f32;
    for (text, want) in &golden {
        assert_matches_within(&embedder, &[text.as_str()], &[want], "bf16 on the CPU, alone", 0.9999);
        let (bf16, f32) = (
            embedder.embed(&[text.as_str()]).unwrap(),
            f32_embedder.embed(&[text.as_str()]).unwrap(),
        );
        largest_difference = bf16
            .data
            .iter()
            .zip(&f32.data)
            .map(|(a, b)| (a - b).abs())
            .fold(largest_difference, f32::max);
    }
    assert!(
        !native || largest_difference > 1e-4,
        "bf16 alone: the embeddings are f32's (largest difference {largest_difference})"
    );
}

/// Whether `tuning` names a tensor-core attention kernel with the fused steps not off: f32
/// must then be refused.
#[cfg(feature = "cuda")]
fn tensor_cores_named(tuning: &quarry_indexer::embed::EncoderTuning) -> bool {
    use quarry_indexer::embed::encoder_ops::AttentionKernel;
    tuning.fused_steps != Some(false)
        && matches!(
            tuning.attention_kernel,
            AttentionKernel::TensorCores | AttentionKernel::TensorCoreRegisters
        )
}

/// On a GPU (`--features cuda`, run on a GPU machine): f32 at cosine >= 0.9999, f16 and bf16
/// at >= 0.999, in mixed-length batches (f32 refused where the environment names a
/// tensor-core attention kernel).
#[cfg(feature = "cuda")]
#[test]
fn golden_texts_on_the_gpu_at_every_precision() {
    use quarry_indexer::embed::{BertEmbedder, DeviceSpec, EmbedOptions, ModelDir, Precision};
    let golden = golden();
    let (texts, expected) = mixed_order(&golden);
    let dir = ModelDir::open(&common::model_dir()).unwrap();
    let options_tuning = common::tuning_from_env();
    for (precision, min_cosine) in [
        (Precision::F32, 0.9999),
        (Precision::F16, 0.999),
        (Precision::Bf16, 0.999),
    ] {
        for batch in [BatchPolicy::TokenBudget { max_tokens: 600 }, BatchPolicy::default()] {
            let options = EmbedOptions {
                device: DeviceSpec::Cuda(0),
                batch: Some(batch),
                precision,
                tuning: options_tuning,
                ..Default::default()
            };
            let embedder = BertEmbedder::load(&dir, options).expect("this test needs a CUDA GPU");
            assert_eq!(embedder.device_name(), "cuda:0");
            if precision == Precision::F32 && tensor_cores_named(&options_tuning) {
                // A tensor-core attention kernel named for f32 is refused, by name, not run.
                let error = embedder.embed(&texts).unwrap_err().to_string();
                assert!(error.contains("tensor-core attention takes f16 or bf16"), "{error}");
                continue;
            }
            assert_matches_within(
                &embedder,
                &texts,
                &expected,
                &format!("{precision:?} {batch:?}"),
                min_cosine,
            );
        }
    }
}

/// The encoder in half precision (the precisions a GPU runs; its softmax and bias steps are
/// candle's here, quarry's fused kernels there) at the acceptance bar, run on the CPU: every
/// golden text alone, mean-pooled, at cosine >= 0.999 in f16 and in bf16 (bf16
/// scores attention in f32; with bf16 scores the lowest was 0.9938).
#[test]
fn half_precision_encoder_meets_the_golden_bar_on_the_cpu() {
    use candle_core::{DType, Device, Tensor};
    use quarry_indexer::embed::{BertEncoder, ModelDir, ModelTokenizer};
    let dir = ModelDir::open(&common::model_dir()).unwrap();
    let tokenizer = ModelTokenizer::from_file(&dir.tokenizer_file(), dir.max_tokens).unwrap();
    assert_eq!(dir.pooling, quarry_indexer::embed::Pooling::Mean);
    let golden = golden();
    for dtype in [DType::F16, DType::BF16] {
        // SAFETY: the weights file is only read, and not modified during the test.
        let vb =
            unsafe { candle_nn::VarBuilder::from_mmaped_safetensors(&[dir.weights()], dtype, &Device::Cpu) }.unwrap();
        let encoder = BertEncoder::load(vb, &dir.bert_config).unwrap();
        for (text, want) in &golden {
            let ids = tokenizer.encode_for_model(&[text.as_str()]).unwrap().remove(0);
            let length = ids.len();
            let input = Tensor::from_vec(ids, (1, length), &Device::Cpu).unwrap();
            let tokens = encoder
                .forward(&input, &[length])
                .unwrap()
                .to_dtype(DType::F32)
                .unwrap();
            let pooled: Vec<f32> = tokens.mean(1).unwrap().squeeze(0).unwrap().to_vec1().unwrap();
            let cosine = common::cosine(&pooled, want);
            let start: String = text.chars().take(60).collect();
            assert!(
                cosine >= 0.999,
                "{dtype:?}: text {start:?}... ({length} tokens) has cosine {cosine}"
            );
        }
    }
}

/// A run's default group holds eight full batches of the model's budget at its window, and
/// never fewer than 2,048 chunks: the CPU's 4,096-token batches keep 2,048; a GPU's budget
/// of 349,525 tokens (as a GPU sizes its own) makes 8 × 1,365; two replicas twice that.
#[test]
fn a_runs_default_group_holds_eight_full_batches_of_the_models_budget() {
    use quarry_indexer::pipeline::{embed_group_for, DEFAULT_EMBED_GROUP};
    let cpu = common::load_embedder_at(BatchPolicy::default(), Precision::F32);
    assert_eq!(cpu.batch_tokens(), Some(4_096));
    assert_eq!(embed_group_for(&cpu), DEFAULT_EMBED_GROUP);
    let gpu_sized = || common::load_embedder_at(BatchPolicy::TokenBudget { max_tokens: 349_525 }, Precision::F32);
    let one = gpu_sized();
    assert_eq!(one.info().max_tokens, 256);
    assert_eq!(embed_group_for(&one), 8 * (349_525 / 256));
    let fixed = common::load_embedder_at(BatchPolicy::Fixed { size: 32 }, Precision::F32);
    assert_eq!(fixed.batch_tokens(), Some(32 * 256));
    assert_eq!(embed_group_for(&fixed), DEFAULT_EMBED_GROUP);
    let two = ReplicatedEmbedder::new(vec![gpu_sized(), gpu_sized()]).unwrap();
    assert_eq!(two.batch_tokens(), Some(2 * 349_525));
    assert_eq!(embed_group_for(&two), 2 * 8 * (349_525 / 256));
}
