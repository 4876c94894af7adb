//! The encoder's fused CUDA kernels (kernels/cuda/encoder.cu) against their CPU twins on
//! fresh random inputs, odd sizes included, at every precision: the bias add (+ erf GELU)
//! against candle's broadcast add and `gelu_erf` in f32, the query-key-value product with its
//! bias in cuBLASLt's epilogue against the f32 product and bias, the length-masked softmax against
//! `quarry_kernels::masked_softmax_rows`, the packed attention (every GPU kernel: CUDA cores
//! and both on tensor cores; the register kernel in its ragged layout too) and the bias + residual + layer norm against the same
//! `encoder_ops` on the CPU (`quarry_kernels::packed_attention`,
//! `bias_residual_layer_norm_rows`), the fused token embedding against candle's gather, add
//! and layer norm in f32, and the mean pooling against `mean_pool` + `l2_normalize`. Needs a CUDA GPU (`scripts/gpu-check.sh golden`).
#![cfg(feature = "cuda")]

use candle_core::{DType, Device, Tensor};
use quarry_indexer::embed::cuda_bias_gemm::{dense_with_bias, dense_with_bias_gelu};
use quarry_indexer::embed::cuda_encoder_ops::{bias_activation, masked_softmax};
use quarry_indexer::embed::encoder_ops::{
    bias_residual_layer_norm, mean_pool_normalize_padded, packed_attention, packed_attention_by, ragged_attention,
    AttentionKernel,
};
use quarry_indexer::embed::token_embedding::embed_tokens;

const PRECISIONS: [(DType, f32); 3] = [(DType::F32, 1e-5), (DType::F16, 2e-3), (DType::BF16, 1.5e-2)];

fn gpu() -> Device {
    Device::new_cuda(0).expect("this test needs a CUDA GPU")
}

fn host_f32(tensor: &Tensor) -> Vec<f32> {
    tensor
        .to_dtype(DType::F32)
        .unwrap()
        .to_device(&Device::Cpu)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap()
}

/// ‖got − want‖ / ‖want‖.
fn relative_error(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len());
    assert!(got.iter().all(|x| x.is_finite()), "a value that is not finite");
    let difference: f64 = got.iter().zip(want).map(|(g, w)| ((g - w) as f64).powi(2)).sum();
    let norm: f64 = want.iter().map(|w| (*w as f64).powi(2)).sum();
    (difference / norm.max(1e-30)).sqrt() as f32
}

/// `x` (2-D) copied to the GPU `offset` values into its buffer: off the alignment the
/// vectorized kernels need when `offset` is not a multiple of their vector.
fn on_gpu_at_offset(x: &Tensor, offset: usize, gpu: &Device) -> Tensor {
    let padded = Tensor::cat(
        &[
            &Tensor::zeros(offset, x.dtype(), &Device::Cpu).unwrap(),
            &x.flatten_all().unwrap(),
        ],
        0,
    )
    .unwrap();
    padded
        .to_device(gpu)
        .unwrap()
        .narrow(0, offset, x.elem_count())
        .unwrap()
        .reshape(x.dims())
        .unwrap()
}

#[test]
fn bias_activation_matches_candle_at_every_precision() {
    let gpu = gpu();
    // 70,000 rows pass the grid's 65,535 row blocks, so blocks stride over rows. Widths that
    // are a multiple of 8 take the vectorized kernel (16 bytes a load), the others the one
    // value per thread; `offset` puts x one value into its buffer, off the 16 bytes the
    // vectorized kernel needs, so 384 columns go the scalar way there.
    for (rows, cols, offset) in [
        (1, 1, 0),
        (7, 383, 0),
        (1000, 1536, 0),
        (70_000, 3, 0),
        (70_000, 8, 0),
        (5, 384, 1),
    ] {
        for (dtype, bound) in PRECISIONS {
            let x = Tensor::randn(0f32, 2.0, (rows, cols), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let bias = Tensor::randn(0f32, 1.0, cols, &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let sum = x
                .to_dtype(DType::F32)
                .unwrap()
                .broadcast_add(&bias.to_dtype(DType::F32).unwrap())
                .unwrap();
            for gelu in [false, true] {
                let want = if gelu { sum.gelu_erf().unwrap() } else { sum.clone() };
                let on_gpu = on_gpu_at_offset(&x, offset, &gpu);
                bias_activation(&on_gpu, &bias.to_device(&gpu).unwrap(), gelu).unwrap();
                let error = relative_error(&host_f32(&on_gpu), &host_f32(&want));
                assert!(
                    error < bound,
                    "{rows}x{cols} at offset {offset} {dtype:?} gelu {gelu}: relative error {error}"
                );
            }
        }
    }
}

#[test]
fn the_bias_and_gelu_in_the_products_epilogue_match_the_product_plus_the_bias() {
    // The query-key-value layer's shape (384 inputs, 1,152 outputs) and the feed-forward
    // layer's (1,536 outputs) at 1, 7 and 1,000 tokens, and odd sizes; against the f32
    // product and bias on the CPU, then candle's tanh-form GELU (cuBLASLt's form) for the GELU
    // epilogue, and within the forms' 4.8e-4 of the model's erf GELU.
    let gpu = gpu();
    let shapes = [
        (1, 384, 1152),
        (7, 384, 1152),
        (1000, 384, 1152),
        (1000, 384, 1536),
        (300, 40, 24),
    ];
    for (rows, inputs, outputs) in shapes {
        for (dtype, bound) in [(DType::F16, 2e-3), (DType::BF16, 1.5e-2)] {
            let random = |shape: (usize, usize), scale: f64| {
                (Tensor::randn(0f32, 1.0, shape, &Device::Cpu).unwrap() * scale)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap()
            };
            let x = random((rows, inputs), 1.0);
            let weight = random((outputs, inputs), 1.0 / (inputs as f64).sqrt());
            let bias = random((1, outputs), 1.0).flatten_all().unwrap();
            let f32_of = |t: &Tensor| t.to_dtype(DType::F32).unwrap();
            let want = f32_of(&x)
                .matmul(&f32_of(&weight).t().unwrap())
                .unwrap()
                .broadcast_add(&f32_of(&bias))
                .unwrap();
            let on_gpu = |t: &Tensor| t.to_device(&gpu).unwrap();
            let got = dense_with_bias(&on_gpu(&x), &on_gpu(&weight), &on_gpu(&bias)).unwrap();
            let got_gelu = dense_with_bias_gelu(&on_gpu(&x), &on_gpu(&weight), &on_gpu(&bias)).unwrap();
            for (how, got, want) in [
                ("bias", &got, want.clone()),
                ("bias + tanh GELU", &got_gelu, want.gelu().unwrap()),
            ] {
                assert_eq!(got.dims(), [rows, outputs]);
                let error = relative_error(&host_f32(got), &host_f32(&want));
                assert!(
                    error < bound,
                    "{how}: {rows}x{inputs} · {inputs}x{outputs} {dtype:?}: relative error {error}"
                );
            }
            // Against the erf form: the largest gap is the forms' own plus the rounding.
            let erf = host_f32(&want.gelu_erf().unwrap());
            let worst = host_f32(&got_gelu)
                .iter()
                .zip(&erf)
                .map(|(got, want)| (got - want).abs() / want.abs().max(1.0))
                .fold(0f32, f32::max);
            let rounding = if dtype == DType::F16 { 2e-3 } else { 1.6e-2 };
            assert!(worst < 4.8e-4 + rounding, "{dtype:?}: erf GELU off by {worst}");
        }
    }
    let f32_rows = Tensor::zeros((2, 8), DType::F32, &gpu).unwrap();
    for product in [dense_with_bias, dense_with_bias_gelu] {
        let error = product(
            &f32_rows,
            &Tensor::zeros((4, 8), DType::F32, &gpu).unwrap(),
            &Tensor::zeros(4, DType::F32, &gpu).unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("f16 or bf16"), "{error}");
    }
}

#[test]
fn masked_softmax_matches_the_cpu_twin() {
    let gpu = gpu();
    for (batch, heads, tokens) in [(1, 1, 1), (3, 2, 37), (2, 3, 65), (5, 12, 256)] {
        // Lengths from 1 to all tokens, a fresh draw each run.
        let draws = host_f32(&Tensor::rand(0f32, 1.0, batch, &Device::Cpu).unwrap());
        let lengths: Vec<usize> = draws
            .iter()
            .enumerate()
            .map(|(b, d)| {
                if b == 0 {
                    tokens
                } else {
                    1 + (d * tokens as f32) as usize % tokens
                }
            })
            .collect();
        for (dtype, bound) in PRECISIONS {
            let scores = (Tensor::randn(0f32, 1.0, (batch, heads, tokens, tokens), &Device::Cpu).unwrap() * 4.0)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let mut want = host_f32(&scores);
            quarry_kernels::masked_softmax_rows(&mut want, tokens, |row| lengths[row / (heads * tokens)]);
            let on_gpu = scores.to_device(&gpu).unwrap();
            let device_lengths =
                Tensor::from_vec(lengths.iter().map(|&l| l as u32).collect::<Vec<u32>>(), batch, &gpu).unwrap();
            masked_softmax(&on_gpu, &device_lengths).unwrap();
            let got = host_f32(&on_gpu);
            let error = relative_error(&got, &want);
            assert!(
                error < bound,
                "{batch}x{heads}x{tokens} {dtype:?}: relative error {error}"
            );
            for (row, values) in got.chunks(tokens).enumerate() {
                let length = lengths[row / (heads * tokens)];
                assert!(
                    values[length..].iter().all(|&v| v == 0.0),
                    "row {row}: padding not zero"
                );
                let total: f32 = values[..length].iter().sum();
                assert!(
                    (total - 1.0).abs() < 10.0 * bound.max(1e-4),
                    "row {row}: sums to {total}"
                );
            }
        }
    }
}

/// Lengths from 1 to `tokens` (the first sequence full, one of 0: clamped to 1), a fresh draw.
fn random_lengths(batch: usize, tokens: usize) -> Vec<u32> {
    let draws = host_f32(&Tensor::rand(0f32, 1.0, batch, &Device::Cpu).unwrap());
    draws
        .iter()
        .enumerate()
        .map(|(b, d)| match b {
            0 => tokens as u32,
            1 => 0,
            _ => 1 + (d * tokens as f32) as u32 % tokens as u32,
        })
        .collect()
}

#[test]
fn every_attention_kernel_matches_the_cpu_twin_at_every_precision() {
    let gpu = gpu();
    // (sequences, tokens, heads, head size): one token; 33 tokens (a second warp, two key
    // tiles of the CUDA-core kernel); 70 (two query blocks, the tensor-core kernel's second
    // tile partial); 256 x 12 heads (MiniLM's widest batch rows); head size 64 (BERT-base).
    for (batch, tokens, heads, head_size) in [
        (1, 1, 1, 32),
        (3, 33, 2, 32),
        (4, 70, 3, 32),
        (9, 256, 12, 32),
        (3, 41, 2, 64),
    ] {
        let lengths = random_lengths(batch, tokens);
        let qkv = Tensor::randn(0f32, 0.6, (batch * tokens, 3 * heads * head_size), &Device::Cpu).unwrap();
        for (dtype, bound) in PRECISIONS {
            let input = qkv.to_dtype(dtype).unwrap();
            let want = packed_attention(
                &input.to_dtype(DType::F32).unwrap(),
                &Tensor::new(lengths.as_slice(), &Device::Cpu).unwrap(),
                heads,
            )
            .unwrap();
            let kernels: &[AttentionKernel] = if dtype == DType::F32 {
                &[AttentionKernel::CudaCores]
            } else {
                &[
                    AttentionKernel::CudaCores,
                    AttentionKernel::TensorCores,
                    AttentionKernel::TensorCoreRegisters,
                ]
            };
            for &kernel in kernels {
                let got = packed_attention_by(
                    &input.to_device(&gpu).unwrap(),
                    &Tensor::new(lengths.as_slice(), &gpu).unwrap(),
                    heads,
                    kernel,
                )
                .unwrap();
                assert_eq!(got.dims(), want.dims());
                let error = relative_error(&host_f32(&got), &host_f32(&want));
                assert!(
                    error < bound,
                    "{batch}x{tokens}x{heads}x{head_size} {dtype:?} {kernel:?}: relative error {error}"
                );
            }
        }
    }
}

#[test]
fn the_ragged_attention_matches_the_cpu_twin_in_f16_and_bf16() {
    let gpu = gpu();
    // Sequences back to back, no padding rows: (lengths, heads, head size). One token; a
    // sequence of 0 between others; 256 tokens beside short ones (blocks past a short
    // sequence return); head size 64.
    for (lengths, heads, head_size) in [
        (vec![1u32], 1, 32),
        (vec![70, 0, 33, 1], 3, 32),
        (vec![256, 17, 130, 64, 5], 12, 32),
        (vec![41, 3, 9], 2, 64),
    ] {
        let rows: usize = lengths.iter().map(|&l| l as usize).sum();
        let starts: Vec<u32> = lengths
            .iter()
            .scan(0u32, |start, &length| {
                let first = *start;
                *start += length;
                Some(first)
            })
            .collect();
        let longest = lengths.iter().copied().max().unwrap_or(0) as usize;
        let qkv = Tensor::randn(0f32, 0.6, (rows, 3 * heads * head_size), &Device::Cpu).unwrap();
        for (dtype, bound) in &PRECISIONS[1..] {
            let input = qkv.to_dtype(*dtype).unwrap();
            let on = |device: &Device| {
                ragged_attention(
                    &input
                        .to_device(device)
                        .unwrap()
                        .to_dtype(if device.is_cpu() { DType::F32 } else { *dtype })
                        .unwrap(),
                    &Tensor::new(lengths.as_slice(), device).unwrap(),
                    &Tensor::new(starts.as_slice(), device).unwrap(),
                    longest,
                    heads,
                )
                .unwrap()
            };
            let (want, got) = (on(&Device::Cpu), on(&gpu));
            assert_eq!(got.dims(), want.dims());
            let error = relative_error(&host_f32(&got), &host_f32(&want));
            assert!(
                error < *bound,
                "{lengths:?}x{heads}x{head_size} {dtype:?}: relative error {error}"
            );
        }
    }
    // f32 is refused by name.
    let f32_product = Tensor::zeros((5, 3 * 64), DType::F32, &gpu).unwrap();
    let error = ragged_attention(
        &f32_product,
        &Tensor::new(&[5u32], &gpu).unwrap(),
        &Tensor::new(&[0u32], &gpu).unwrap(),
        5,
        2,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("f16 or bf16"), "{error}");
}

#[test]
fn tensor_core_attention_refuses_f32_and_an_unaligned_product() {
    let gpu = gpu();
    let lengths = Tensor::new(&[5u32], &gpu).unwrap();
    let f32_product = Tensor::zeros((5, 3 * 64), DType::F32, &gpu).unwrap();
    // A view one element into its buffer: 2 bytes off the 16 the kernels load at a time.
    let shifted = Tensor::zeros(5 * 3 * 64 + 1, DType::F16, &gpu)
        .unwrap()
        .narrow(0, 1, 5 * 3 * 64)
        .unwrap()
        .reshape((5, 3 * 64))
        .unwrap();
    for kernel in [AttentionKernel::TensorCores, AttentionKernel::TensorCoreRegisters] {
        let error = packed_attention_by(&f32_product, &lengths, 2, kernel)
            .unwrap_err()
            .to_string();
        assert!(error.contains("f16 or bf16"), "{kernel:?}: {error}");
        let error = packed_attention_by(&shifted, &lengths, 2, kernel)
            .unwrap_err()
            .to_string();
        assert!(error.contains("aligned"), "{kernel:?}: {error}");
    }
    // Auto takes the CUDA cores there instead.
    assert_eq!(
        packed_attention_by(&shifted, &lengths, 2, AttentionKernel::Auto)
            .unwrap()
            .dims(),
        [5, 64]
    );
}

#[test]
fn bias_residual_layer_norm_matches_the_cpu_twin_at_every_precision() {
    let gpu = gpu();
    // Widths that are a multiple of 4 take the vectorized kernel (four values a load): 1,024
    // columns fill every lane's registers, 1,000 leave the last lane's last four past the row.
    // The others, and x one value into its buffer (`offset`, off the four-value alignment),
    // take the one value a lane kernel: 1,000 columns there are 32 values a lane.
    for (rows, cols, offset) in [
        (1, 1, 0),
        (5, 384, 0),
        (70_001, 384, 0),
        (3, 1000, 0),
        (3, 1024, 0),
        (17, 37, 0),
        (5, 384, 1),
        (3, 1000, 1),
    ] {
        let x = (Tensor::randn(0f32, 2.0, (rows, cols), &Device::Cpu).unwrap() + 5.0).unwrap();
        let residual = Tensor::randn(0f32, 1.0, (rows, cols), &Device::Cpu).unwrap();
        let parameters = Tensor::randn(0f32, 1.0, (3, cols), &Device::Cpu).unwrap();
        for (dtype, bound) in PRECISIONS {
            let (x, residual, parameters) = (
                x.to_dtype(dtype).unwrap(),
                residual.to_dtype(dtype).unwrap(),
                parameters.to_dtype(dtype).unwrap(),
            );
            let f32 = |t: &Tensor| t.to_dtype(DType::F32).unwrap();
            // A deep copy: at f32 `to_dtype` shares x's storage, and the twin writes in place.
            let want = f32(&x).copy().unwrap();
            bias_residual_layer_norm(&want, &f32(&residual), &f32(&parameters), 1e-12).unwrap();
            let got = on_gpu_at_offset(&x, offset, &gpu);
            bias_residual_layer_norm(
                &got,
                &residual.to_device(&gpu).unwrap(),
                &parameters.to_device(&gpu).unwrap(),
                1e-12,
            )
            .unwrap();
            let error = relative_error(&host_f32(&got), &host_f32(&want));
            assert!(
                error < bound,
                "{rows}x{cols} at offset {offset} {dtype:?}: relative error {error}"
            );
        }
    }
}

#[test]
fn the_fused_token_embedding_matches_gather_add_and_layer_norm_at_every_precision() {
    let gpu = gpu();
    // 384 columns (MiniLM) over 300 sequences; 1,024 (every register of a lane); 36 (most
    // lanes idle); tokens up to the last position row.
    for (batch, tokens, positions, vocabulary, hidden) in
        [(300, 37, 512, 1000, 384), (2, 8, 8, 30, 1024), (5, 3, 4, 7, 36)]
    {
        let words = Tensor::randn(0f32, 1.0, (vocabulary, hidden), &Device::Cpu).unwrap();
        let position_rows = Tensor::randn(0f32, 0.5, (positions, hidden), &Device::Cpu).unwrap();
        let weight = (Tensor::randn(0f32, 0.2, hidden, &Device::Cpu).unwrap() + 1.0).unwrap();
        let shift = Tensor::randn(0f32, 0.2, hidden, &Device::Cpu).unwrap();
        let prologue = Tensor::cat(
            &[
                &position_rows,
                &weight.unsqueeze(0).unwrap(),
                &shift.unsqueeze(0).unwrap(),
            ],
            0,
        )
        .unwrap();
        let ids: Vec<u32> = (0..batch * tokens)
            .map(|i| ((i * 7919 + 13) % vocabulary) as u32)
            .collect();
        let ids = Tensor::from_vec(ids, (batch, tokens), &Device::Cpu).unwrap();
        for (dtype, bound) in PRECISIONS {
            let (words, prologue) = (words.to_dtype(dtype).unwrap(), prologue.to_dtype(dtype).unwrap());
            let f32 = |t: &Tensor| t.to_dtype(DType::F32).unwrap();
            let norm = candle_nn::LayerNorm::new(
                f32(&prologue.get(positions).unwrap()),
                f32(&prologue.get(positions + 1).unwrap()),
                1e-12,
            );
            let want = f32(&words)
                .index_select(&ids.flatten_all().unwrap(), 0)
                .unwrap()
                .reshape((batch, tokens, hidden))
                .unwrap()
                .broadcast_add(&f32(&prologue.narrow(0, 0, tokens).unwrap()))
                .unwrap()
                .reshape((batch * tokens, hidden))
                .unwrap();
            let want = candle_core::Module::forward(&norm, &want).unwrap();
            let got = embed_tokens(
                &ids.to_device(&gpu).unwrap(),
                &words.to_device(&gpu).unwrap(),
                &prologue.to_device(&gpu).unwrap(),
                1e-12,
            )
            .unwrap();
            assert_eq!(got.dims(), [batch * tokens, hidden]);
            let error = relative_error(&host_f32(&got), &host_f32(&want));
            assert!(
                error < bound,
                "{batch}x{tokens} of {vocabulary}x{hidden} {dtype:?}: relative error {error}"
            );
        }
    }
}

#[test]
fn mean_pooling_matches_the_cpu_twin_at_every_precision() {
    let gpu = gpu();
    // Sequences of no tokens and of more than the batch is wide, rows wider than a lane's
    // 32 values, more sequences than one launch's warps in a block.
    for (tokens, cols, lengths) in [
        (7, 384, vec![5u32, 0, 9, 1, 7, 3, 2]),
        (4, 1000, vec![3]),
        (33, 37, vec![17, 4, 33]),
        (256, 384, random_lengths(100, 256)),
    ] {
        let batch = lengths.len();
        let states = Tensor::randn(0f32, 1.0, (batch, tokens, cols), &Device::Cpu).unwrap();
        let lengths_cpu = Tensor::new(lengths.as_slice(), &Device::Cpu).unwrap();
        for (dtype, bound) in PRECISIONS {
            let states = states.to_dtype(dtype).unwrap();
            let want = mean_pool_normalize_padded(&states.to_dtype(DType::F32).unwrap(), &lengths_cpu).unwrap();
            let got =
                mean_pool_normalize_padded(&states.to_device(&gpu).unwrap(), &lengths_cpu.to_device(&gpu).unwrap())
                    .unwrap();
            assert_eq!(got.dtype(), DType::F32);
            assert_eq!(got.dims(), [batch, cols]);
            let error = relative_error(&host_f32(&got), &host_f32(&want));
            assert!(
                error < bound,
                "{batch}x{tokens}x{cols} {dtype:?}: relative error {error}"
            );
        }
    }
}
