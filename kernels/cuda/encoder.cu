// Fused steps of the BERT encoder on the GPU, applied to tensors candle owns
// (indexer/src/embed/cuda_encoder_ops.rs launches them; attention itself is attention.cu).
// They replace candle's broadcast adds (a 64-bit division and modulo per dimension per
// element), its separate mask add + softmax, its residual add + layer norm, its embedding
// gather + position add + layer norm, and its mean pooling. CPU twins: candle's broadcast_add
// + gelu_erf, and kernels/src/softmax.rs masked_softmax_rows, layer_norm.rs
// bias_residual_layer_norm_rows, candle's index_select + broadcast_add + LayerNorm, pool.rs
// mean_pool + l2_normalize. kernels/tests/emulated/ also runs this file's
// kernels on the CPU (emulated threads) against references, where no GPU is at hand.

#include "element.cuh"

// value + bias, then the erf GELU when `gelu` is non-zero.
__device__ __forceinline__ float add_bias(float value, float bias, int gelu)
{
    const float v = value + bias;
    return gelu ? 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)) : v;
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
        x[i] = from_float<T>(add_bias(to_float(x[i]), b, gelu));
    }
}

// bias_activation moving 16 bytes per load and store (8 f16/bf16 values, 4 f32): thread v of
// the grid's x holds bias values v * VECTOR.. in registers and runs down the rows. Needs cols
// a multiple of VECTOR and x and bias 16-byte aligned (the host checks, else the kernel above).
template <typename T>
__device__ void bias_activation_vectorized(T* __restrict__ x, const T* __restrict__ bias, unsigned int rows, unsigned int cols, int gelu)
{
    constexpr int VECTOR = sizeof(Bits128) / sizeof(T);
    const unsigned int vector = blockIdx.x * blockDim.x + threadIdx.x;
    if (vector >= cols / VECTOR) return;
    Bits128 bias_bits = *reinterpret_cast<const Bits128*>(bias + (size_t)vector * VECTOR);
    float shift[VECTOR];
#pragma unroll
    for (int i = 0; i < VECTOR; ++i) shift[i] = to_float(reinterpret_cast<const T*>(&bias_bits)[i]);
    for (unsigned int row = blockIdx.y; row < rows; row += gridDim.y) {
        Bits128* at = reinterpret_cast<Bits128*>(x + (size_t)row * cols + (size_t)vector * VECTOR);
        Bits128 bits = *at;
        T* values = reinterpret_cast<T*>(&bits);
#pragma unroll
        for (int i = 0; i < VECTOR; ++i) values[i] = from_float<T>(add_bias(to_float(values[i]), shift[i], gelu));
        *at = bits;
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

// Four values of T moved as one load or store (8 bytes of f16/bf16, 16 of f32).
template <typename T>
struct alignas(4 * sizeof(T)) Four {
    T v[4];
};

// LayerNorm(v) * weight + shift of one row of v, four values per load and store, by one
// warp: `sum_of(f, four)` gives the row's f-th four values (in f32), lane l takes fours l,
// l + 32, ... (cols <= 128 * VECTORS) and holds them in registers between the passes, and
// the result goes to out (which may be where sum_of reads: each lane writes only the fours
// it has read). Statistics in f32, the variance of the centred values.
template <typename T, int VECTORS, typename Sum>
__device__ __forceinline__ void layer_norm_fours(Four<T>* out, Sum sum_of, const Four<T>* __restrict__ weight, const Four<T>* __restrict__ shift, unsigned int cols, float epsilon)
{
    const unsigned int lane = threadIdx.x % 32, fours = cols / 4;
    float values[VECTORS][4];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < VECTORS; ++i) {
        const unsigned int f = lane + 32 * i;
        if (f < fours) {
            sum_of(f, values[i]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) values[i][e] = 0.0f;
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) sum += values[i][e];
    }
    const float mean = warp_sum(sum) / cols;
    float squares = 0.0f;
#pragma unroll
    for (int i = 0; i < VECTORS; ++i) {
        const bool inside = lane + 32 * i < fours;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            values[i][e] = inside ? values[i][e] - mean : 0.0f;
            squares += values[i][e] * values[i][e];
        }
    }
    const float inverse = rsqrtf(warp_sum(squares) / cols + epsilon);
#pragma unroll
    for (int i = 0; i < VECTORS; ++i) {
        const unsigned int f = lane + 32 * i;
        if (f >= fours) continue;
        const Four<T> scale = weight[f], offset = shift[f];
        Four<T> result;
#pragma unroll
        for (int e = 0; e < 4; ++e) result.v[e] = from_float<T>(values[i][e] * inverse * to_float(scale.v[e]) + to_float(offset.v[e]));
        out[f] = result;
    }
}

// bias_residual_layer_norm moving four values per load and store, where the kernel above
// moves one (2 bytes a lane per load in f16, against 8 here). One warp per
// row (layer_norm_fours). Needs cols a multiple of 4 and x, residual and params aligned to
// four values (the host checks, else the kernel above).
template <typename T, int VECTORS>
__device__ void bias_residual_layer_norm_vectorized(T* __restrict__ x, const T* __restrict__ residual, const T* __restrict__ params, unsigned int rows, unsigned int cols, float epsilon)
{
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (warp >= rows) return;  // the whole warp: blockDim.x is a multiple of 32
    Four<T>* row = reinterpret_cast<Four<T>*>(x + warp * cols);
    const Four<T>* skip = reinterpret_cast<const Four<T>*>(residual + warp * cols);
    const Four<T>* bias = reinterpret_cast<const Four<T>*>(params);
    layer_norm_fours<T, VECTORS>(row, [&](unsigned int f, float (&four)[4]) {
        const Four<T> value = row[f], added = bias[f], skipped = skip[f];
#pragma unroll
        for (int e = 0; e < 4; ++e) four[e] = to_float(value.v[e]) + to_float(added.v[e]) + to_float(skipped.v[e]);
    }, reinterpret_cast<const Four<T>*>(params + cols), reinterpret_cast<const Four<T>*>(params + 2 * (size_t)cols), cols, epsilon);
}

// The encoder's first step in one pass: out [rows][cols] row r = LayerNorm(words[ids[r]] +
// prologue[r % tokens]) * weight + shift, where prologue [positions + 2][cols] holds the
// position rows (the token-type row added), then the layer norm's weight and shift. Replaces
// candle's row gather, broadcast add and layer norm (three passes, the add with a 64-bit
// division per element). An id past the table reads its last row (the tokenizer gives none).
// One warp per row (layer_norm_fours); needs cols a multiple of 4, the tables aligned to four
// values and tokens <= positions (the host checks).
template <typename T, int VECTORS>
__device__ void embed_tokens(const unsigned int* __restrict__ ids, const T* __restrict__ words, const T* __restrict__ prologue, T* __restrict__ out, unsigned int rows, unsigned int tokens, unsigned int positions, unsigned int vocabulary, unsigned int cols, float epsilon)
{
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (warp >= rows) return;  // the whole warp: blockDim.x is a multiple of 32
    const unsigned int id = min(ids[warp], vocabulary - 1), position = warp % tokens;
    const Four<T>* word = reinterpret_cast<const Four<T>*>(words + (size_t)id * cols);
    const Four<T>* place = reinterpret_cast<const Four<T>*>(prologue + (size_t)position * cols);
    layer_norm_fours<T, VECTORS>(reinterpret_cast<Four<T>*>(out + warp * cols), [&](unsigned int f, float (&four)[4]) {
        const Four<T> a = word[f], b = place[f];
#pragma unroll
        for (int e = 0; e < 4; ++e) four[e] = to_float(a.v[e]) + to_float(b.v[e]);
    }, reinterpret_cast<const Four<T>*>(prologue + (size_t)positions * cols), reinterpret_cast<const Four<T>*>(prologue + (size_t)(positions + 1) * cols), cols, epsilon);
}

// states [batch][tokens][cols], a padded batch's last token vectors, become out [batch][cols]
// (f32): each sequence's mean over its first lengths[b] tokens (none: zeros), scaled to unit
// length (left as it is at a norm of 1e-12 or less). One block per sequence, its warps
// splitting the tokens, each warp's sums in registers (cols <= 32 * PER_LANE), blocks striding
// over the sequences (one warp per sequence walked its tokens alone: 5.7% of a batch's
// kernel time for one read of the states, bench/RESULTS.md). The CPU twin:
// kernels/src/pool.rs mean_pool + l2_normalize (candle's mask multiply, sum and division
// did the same in four passes over the states, after casting them to f32).
template <typename T, int PER_LANE, int WARPS>
__device__ void mean_pool_normalize_padded(const T* __restrict__ states, const unsigned int* __restrict__ lengths, unsigned int batch, unsigned int tokens, unsigned int cols, float* __restrict__ out)
{
    // One block of WARPS warps per sequence (blocks stride over the sequences; blockDim.x is
    // 32 * WARPS): warp w sums tokens w, w + WARPS, ..., each lane PER_LANE columns; the
    // warps' sums meet in shared memory, where each thread finishes its own columns.
    __shared__ float partial[WARPS][PER_LANE * 32];
    __shared__ float warp_squares[WARPS];
    const unsigned int warp = threadIdx.x / 32;
    const unsigned int lane = threadIdx.x % 32;
    for (size_t sequence = blockIdx.x; sequence < batch; sequence += gridDim.x) {
        const unsigned int length = min(lengths[sequence], tokens);
        float sums[PER_LANE];
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) sums[i] = 0.0f;
        for (unsigned int t = warp; t < length; t += WARPS) {
            const T* row = states + (sequence * tokens + t) * cols;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const unsigned int c = lane + 32 * i;
                if (c < cols) sums[i] += to_float(row[c]);
            }
        }
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            const unsigned int c = lane + 32 * i;
            if (c < cols) partial[warp][c] = sums[i];
        }
        __syncthreads();
        // Each thread reads and then writes back only its own columns of partial[0].
        const float inverse_length = 1.0f / (float)max(length, 1u);
        float squares = 0.0f;
        for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) {
            float total = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) total += partial[w][c];
            total *= inverse_length;
            partial[0][c] = total;
            squares += total * total;
        }
        squares = warp_sum(squares);
        if (lane == 0) warp_squares[warp] = squares;
        __syncthreads();
        float norm_squared = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) norm_squared += warp_squares[w];
        const float norm = sqrtf(norm_squared);
        const float scale = norm > 1e-12f ? 1.0f / norm : 1.0f;
        for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) out[sequence * cols + c] = partial[0][c] * scale;
        // The next sequence writes partial and warp_squares again.
        __syncthreads();
    }
}

#define ENCODER_KERNELS(SUFFIX, T) \
extern "C" __global__ void bias_activation_##SUFFIX(T* x, const T* bias, unsigned int rows, unsigned int cols, int gelu) \
{ bias_activation<T>(x, bias, rows, cols, gelu); } \
extern "C" __global__ void bias_activation_vectorized_##SUFFIX(T* x, const T* bias, unsigned int rows, unsigned int cols, int gelu) \
{ bias_activation_vectorized<T>(x, bias, rows, cols, gelu); } \
extern "C" __global__ void masked_softmax_##SUFFIX(T* scores, const unsigned int* lengths, unsigned int rows, unsigned int rows_per_sequence, unsigned int columns) \
{ masked_softmax<T>(scores, lengths, rows, rows_per_sequence, columns); } \
extern "C" __global__ void bias_residual_layer_norm_##SUFFIX(T* x, const T* residual, const T* params, unsigned int rows, unsigned int cols, float epsilon) \
{ bias_residual_layer_norm<T, 32>(x, residual, params, rows, cols, epsilon); } \
extern "C" __global__ void bias_residual_layer_norm_vectorized_##SUFFIX(T* x, const T* residual, const T* params, unsigned int rows, unsigned int cols, float epsilon) \
{ bias_residual_layer_norm_vectorized<T, 8>(x, residual, params, rows, cols, epsilon); } \
extern "C" __global__ void embed_tokens_##SUFFIX(const unsigned int* ids, const T* words, const T* prologue, T* out, unsigned int rows, unsigned int tokens, unsigned int positions, unsigned int vocabulary, unsigned int cols, float epsilon) \
{ embed_tokens<T, 8>(ids, words, prologue, out, rows, tokens, positions, vocabulary, cols, epsilon); } \
extern "C" __global__ void mean_pool_normalize_padded_##SUFFIX(const T* states, const unsigned int* lengths, unsigned int batch, unsigned int tokens, unsigned int cols, float* out) \
{ mean_pool_normalize_padded<T, 32, 8>(states, lengths, batch, tokens, cols, out); }

ENCODER_KERNELS(f32, float)
ENCODER_KERNELS(f16, __half)
ENCODER_KERNELS(bf16, __nv_bfloat16)
