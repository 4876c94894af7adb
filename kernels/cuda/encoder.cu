// Fused steps of the BERT encoder on the GPU, applied to tensors candle owns
// (indexer/src/embed/cuda_encoder_ops.rs launches them). They replace candle's broadcast
// adds (a 64-bit division and modulo per dimension per element), its separate mask add +
// softmax, the strided copies that lay attention out by head and back, and its residual add
// + layer norm. CPU twins: candle's broadcast_add + gelu_erf, and kernels/src/softmax.rs
// masked_softmax_rows, attention.rs packed_attention, layer_norm.rs
// bias_residual_layer_norm_rows. kernels/tests/emulated/ also runs this file's f32 kernels
// on the CPU (emulated threads) against references, where no GPU is at hand.

#ifndef QUARRY_CUDA_EMULATION
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

template <typename T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
#ifndef QUARRY_CUDA_EMULATION
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
#endif

__device__ __forceinline__ float warp_sum(float value)
{
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

// x [rows][cols] += bias [cols], then the erf GELU when `gelu` is non-zero. Threads run
// along the columns (coalesced), blocks stride over the rows: no division per element.
template <typename T>
__device__ void bias_activation(T* __restrict__ x, const T* __restrict__ bias, unsigned int rows, unsigned int cols, int gelu)
{
    const unsigned int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    const float b = to_float(bias[col]);
    for (unsigned int row = blockIdx.y; row < rows; row += gridDim.y) {
        const size_t i = (size_t)row * cols + col;
        float v = to_float(x[i]) + b;
        if (gelu) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        x[i] = from_float<T>(v);
    }
}

// scores [rows][columns], row r of sequence r / rows_per_sequence: softmax over the first
// lengths[sequence] columns (the real tokens), zeros on the padding. One warp per row.
template <typename T>
__device__ void masked_softmax(T* __restrict__ scores, const unsigned int* __restrict__ lengths, unsigned int rows, unsigned int rows_per_sequence, unsigned int columns)
{
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned int lane = threadIdx.x % 32;
    if (warp >= rows) return;  // the whole warp: blockDim.x is a multiple of 32
    T* row = scores + warp * columns;
    const unsigned int length = min(lengths[warp / rows_per_sequence], columns);
    float maximum = -INFINITY;
    for (unsigned int c = lane; c < length; c += 32) maximum = fmaxf(maximum, to_float(row[c]));
    for (int offset = 16; offset > 0; offset /= 2) maximum = fmaxf(maximum, __shfl_xor_sync(0xffffffffu, maximum, offset));
    float sum = 0.0f;
    for (unsigned int c = lane; c < length; c += 32) sum += expf(to_float(row[c]) - maximum);
    sum = warp_sum(sum);
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (unsigned int c = lane; c < columns; c += 32) {
        row[c] = from_float<T>(c < length ? expf(to_float(row[c]) - maximum) * inverse : 0.0f);
    }
}

// x [rows][cols], a dense layer's product, becomes LayerNorm(x + bias + residual) * weight
// + shift in place; params = [bias | weight | shift], each cols wide (cols <= 32 * PER_LANE).
// One warp per row, the row's values in registers between the passes, statistics in f32,
// the variance of the centred values (not E[v^2] - mean^2, which cancels).
template <typename T, int PER_LANE>
__device__ void bias_residual_layer_norm(T* __restrict__ x, const T* __restrict__ residual, const T* __restrict__ params, unsigned int rows, unsigned int cols, float epsilon)
{
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned int lane = threadIdx.x % 32;
    if (warp >= rows) return;  // the whole warp: blockDim.x is a multiple of 32
    T* row = x + warp * cols;
    const T* skip = residual + warp * cols;
    float values[PER_LANE];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        const unsigned int c = lane + 32 * i;
        values[i] = c < cols ? to_float(row[c]) + to_float(params[c]) + to_float(skip[c]) : 0.0f;
        sum += values[i];
    }
    const float mean = warp_sum(sum) / cols;
    float squares = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        const unsigned int c = lane + 32 * i;
        values[i] = c < cols ? values[i] - mean : 0.0f;
        squares += values[i] * values[i];
    }
    const float inverse = rsqrtf(warp_sum(squares) / cols + epsilon);
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        const unsigned int c = lane + 32 * i;
        if (c < cols) row[c] = from_float<T>(values[i] * inverse * to_float(params[cols + c]) + to_float(params[2 * cols + c]));
    }
}

// Keys (and values) staged in shared memory per step of packed_attention.
#define ATTENTION_KEYS 32

// Self-attention straight from the query-key-value product qkv [batch * tokens][3 * hidden]
// (each row: the token's query, pre-scaled by 1/sqrt(HEAD), key and value, head h at columns
// h * HEAD of each part; hidden = heads * HEAD) into context [batch * tokens][hidden]. Block
// (b, h, z) computes queries z * blockDim.x + threadIdx.x of sequence b, head h: one query per
// thread, its HEAD-wide query and output in registers; the sequence's first lengths[b]
// (clamped to 1..tokens) keys and values go through shared memory ATTENTION_KEYS at a time,
// with the online softmax (running maximum and sum, the output rescaled when the maximum
// grows). Scores and sums in f32. Padding rows attend like the others (as BERT's additive mask).
template <typename T, int HEAD>
__device__ void packed_attention(const T* __restrict__ qkv, const unsigned int* __restrict__ lengths, T* __restrict__ context, unsigned int tokens, unsigned int heads)
{
    __shared__ float key_tile[ATTENTION_KEYS][HEAD];
    __shared__ float value_tile[ATTENTION_KEYS][HEAD];
    const unsigned int b = blockIdx.x, h = blockIdx.y;
    const unsigned int t = blockIdx.z * blockDim.x + threadIdx.x;
    const bool active = t < tokens;
    const unsigned int length = max(1u, min(lengths[b], tokens));
    const size_t hidden = (size_t)heads * HEAD, stride = 3 * hidden;
    const T* sequence = qkv + (size_t)b * tokens * stride + (size_t)h * HEAD;
    float query[HEAD], output[HEAD];
#pragma unroll
    for (int d = 0; d < HEAD; ++d) {
        query[d] = active ? to_float(sequence[(size_t)t * stride + d]) : 0.0f;
        output[d] = 0.0f;
    }
    float maximum = -INFINITY, total = 0.0f;
    for (unsigned int start = 0; start < length; start += ATTENTION_KEYS) {
        const unsigned int count = min((unsigned int)ATTENTION_KEYS, length - start);
        __syncthreads();  // every thread is done with the previous tile
        for (unsigned int i = threadIdx.x; i < ATTENTION_KEYS * HEAD; i += blockDim.x) {
            const unsigned int j = i / HEAD, d = i % HEAD;
            const T* row = sequence + (size_t)(start + j) * stride;
            key_tile[j][d] = j < count ? to_float(row[hidden + d]) : 0.0f;
            value_tile[j][d] = j < count ? to_float(row[2 * hidden + d]) : 0.0f;
        }
        __syncthreads();
        float scores[ATTENTION_KEYS];
        float tile_maximum = -INFINITY;
#pragma unroll
        for (int j = 0; j < ATTENTION_KEYS; ++j) {
            float dot = 0.0f;
#pragma unroll
            for (int d = 0; d < HEAD; ++d) dot += query[d] * key_tile[j][d];
            scores[j] = (unsigned int)j < count ? dot : -INFINITY;
            tile_maximum = fmaxf(tile_maximum, scores[j]);
        }
        const float next = fmaxf(maximum, tile_maximum);  // finite: count >= 1
        const float rescale = expf(maximum - next);       // 0 on the first tile
        total *= rescale;
#pragma unroll
        for (int d = 0; d < HEAD; ++d) output[d] *= rescale;
#pragma unroll
        for (int j = 0; j < ATTENTION_KEYS; ++j) {
            const float weight = expf(scores[j] - next);  // 0 past count
            total += weight;
#pragma unroll
            for (int d = 0; d < HEAD; ++d) output[d] += weight * value_tile[j][d];
        }
        maximum = next;
    }
    if (!active) return;
    const float inverse = 1.0f / total;  // total >= 1: the maximum's own weight
    T* out = context + ((size_t)b * tokens + t) * hidden + (size_t)h * HEAD;
#pragma unroll
    for (int d = 0; d < HEAD; ++d) out[d] = from_float<T>(output[d] * inverse);
}

#define ENCODER_KERNELS(SUFFIX, T) \
extern "C" __global__ void bias_activation_##SUFFIX(T* x, const T* bias, unsigned int rows, unsigned int cols, int gelu) \
{ bias_activation<T>(x, bias, rows, cols, gelu); } \
extern "C" __global__ void masked_softmax_##SUFFIX(T* scores, const unsigned int* lengths, unsigned int rows, unsigned int rows_per_sequence, unsigned int columns) \
{ masked_softmax<T>(scores, lengths, rows, rows_per_sequence, columns); } \
extern "C" __global__ void bias_residual_layer_norm_##SUFFIX(T* x, const T* residual, const T* params, unsigned int rows, unsigned int cols, float epsilon) \
{ bias_residual_layer_norm<T, 32>(x, residual, params, rows, cols, epsilon); } \
extern "C" __global__ void packed_attention_32_##SUFFIX(const T* qkv, const unsigned int* lengths, T* context, unsigned int tokens, unsigned int heads) \
{ packed_attention<T, 32>(qkv, lengths, context, tokens, heads); } \
extern "C" __global__ void packed_attention_64_##SUFFIX(const T* qkv, const unsigned int* lengths, T* context, unsigned int tokens, unsigned int heads) \
{ packed_attention<T, 64>(qkv, lengths, context, tokens, heads); }

ENCODER_KERNELS(f32, float)
#ifndef QUARRY_CUDA_EMULATION
ENCODER_KERNELS(f16, __half)
ENCODER_KERNELS(bf16, __nv_bfloat16)
#endif
