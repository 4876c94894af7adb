// Self-attention of the BERT encoder on the GPU, read straight from the query-key-value
// product qkv [batch * tokens][3 * hidden] (each row: the token's query, pre-scaled by
// 1/sqrt(HEAD), key and value; head h at columns h * HEAD of each part; hidden = heads * HEAD)
// into the context [batch * tokens][hidden], each sequence b over its first lengths[b] keys
// (clamped to 1..tokens; padding rows attend like the others, as BERT's additive mask lets
// them). No copy lays the heads out and no score matrix goes through memory. Three kernels
// (indexer/src/embed/cuda_attention.rs picks one):
// - packed_attention: CUDA cores, one query per thread, any element type;
// - tensor_core_attention: f16/bf16 on tensor cores (WMMA), 16 queries per warp, the scores
//   and weights through shared memory;
// - register_attention: f16/bf16 on tensor cores (mma.sync), 16 queries per warp, the
//   scores, weights and output in registers, the next keys and values copied in (cp.async)
//   while the warps work.
// CPU twin: kernels/src/attention.rs packed_attention. kernels/tests/emulated/ runs every
// kernel on the CPU (emulated threads, WMMA and mma.sync) against an f64 reference.

#include "element.cuh"
#include "mma.cuh"
#ifndef QUARRY_CUDA_EMULATION
#include <mma.h>
#endif

// Keys (and values) staged in shared memory per step of packed_attention.
#define ATTENTION_KEYS 32

// CUDA cores. Block (b, h, z) computes queries z * blockDim.x + threadIdx.x of sequence b,
// head h: one query per thread, its HEAD-wide query and output in registers; the sequence's
// keys and values go through shared memory ATTENTION_KEYS at a time, with the online softmax
// (running maximum and sum, the output rescaled when the maximum grows). All in f32.
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

// Tensor cores. A warp computes 16 queries (TENSOR_QUERIES), a block of blockDim.x / 32 <=
// TENSOR_WARPS warps the next ones: block (b, h, z) starts at query z * 16 * warps of
// sequence b, head h. Per tile of TENSOR_KEYS keys (the block stages keys and values in shared
// memory, 16 bytes a load): scores = queries · keysᵀ on tensor cores (f32 accumulators) into
// the warp's scratch; the online softmax in f32, each row by two lanes (lane = row + 16 *
// half, half the tile's keys each), weights rounded to T; the weights · values product on
// tensor cores into the scratch; each lane folds its half row into the output it holds
// (rescaled when the maximum grows). Strides padded (+8 elements, +4 floats) so the row
// starts fall on different banks; every WMMA pointer sits on 32 bytes (the API's rule).
// Needs qkv 16-byte aligned (the host checks it).
#define TENSOR_QUERIES 16
#define TENSOR_WARPS 4
#define TENSOR_KEYS 64
#define SCRATCH_STRIDE (TENSOR_KEYS + 4)
#define WEIGHT_STRIDE (TENSOR_KEYS + 8)

// Keys start.. start + count of the head (`sequence`: its first token's query columns; a
// token's key is `hidden` values on, its value 2 * hidden) staged by the block's threads 16
// bytes at a time: `store(j, v, key, value)` puts vector v of tile row j (zeros past count,
// up to TENSOR_KEYS rows) where the kernel keeps it.
template <int VECTORS_PER_ROW, typename T, typename Store>
__device__ __forceinline__ void stage_tile(const T* sequence, size_t stride, size_t hidden, unsigned int start, unsigned int count, Store store)
{
    constexpr int VECTOR = sizeof(Bits128) / sizeof(T);
    for (unsigned int i = threadIdx.x; i < TENSOR_KEYS * VECTORS_PER_ROW; i += blockDim.x) {
        const unsigned int j = i / VECTORS_PER_ROW, v = i % VECTORS_PER_ROW;
        Bits128 key = {0, 0, 0, 0}, value = {0, 0, 0, 0};
        if (j < count) {
            const T* source = sequence + (size_t)(start + j) * stride + v * VECTOR;
            key = *reinterpret_cast<const Bits128*>(source + hidden);
            value = *reinterpret_cast<const Bits128*>(source + 2 * hidden);
        }
        store(j, v, key, value);
    }
}

// out [16][16 * BLOCKS] (row-major, SCRATCH_STRIDE apart) = A [16][16 * DEPTH] · B by one
// warp on tensor cores, f32 sums: a(k) gives A's k-th 16x16 fragment, b(n, k) B's for output
// block n.
template <int BLOCKS, int DEPTH, typename A, typename B>
__device__ __forceinline__ void warp_product(float* out, A a, B b)
{
    using namespace nvcuda;
#pragma unroll
    for (int n = 0; n < BLOCKS; ++n) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> sum;
        wmma::fill_fragment(sum, 0.0f);
#pragma unroll
        for (int k = 0; k < DEPTH; ++k) wmma::mma_sync(sum, a(k), b(n, k), sum);
        wmma::store_matrix_sync(out + n * 16, sum, SCRATCH_STRIDE, wmma::mem_row_major);
    }
}

template <typename T, int HEAD>
__device__ void tensor_core_attention(const T* __restrict__ qkv, const unsigned int* __restrict__ lengths, T* __restrict__ context, unsigned int tokens, unsigned int heads)
{
    using namespace nvcuda;
    constexpr int TILE_STRIDE = HEAD + 8, VECTOR = 8, VECTORS_PER_ROW = HEAD / VECTOR, HALF = HEAD / 2, KEY_HALF = TENSOR_KEYS / 2;
    static_assert(sizeof(T) == 2 && HEAD % 16 == 0 && HEAD <= TENSOR_KEYS, "16-bit types, head a multiple of 16 and at most a tile");
    __shared__ __align__(32) T key_tile[TENSOR_KEYS * TILE_STRIDE];
    __shared__ __align__(32) T value_tile[TENSOR_KEYS * TILE_STRIDE];
    __shared__ __align__(32) float scratch[TENSOR_WARPS][TENSOR_QUERIES * SCRATCH_STRIDE];
    __shared__ __align__(32) T weights[TENSOR_WARPS][TENSOR_QUERIES * WEIGHT_STRIDE];
    const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32, threads = blockDim.x;
    const unsigned int b = blockIdx.x, h = blockIdx.y;
    const unsigned int first = (blockIdx.z * (threads / 32) + warp) * TENSOR_QUERIES;
    const unsigned int length = max(1u, min(lengths[b], tokens));
    const size_t hidden = (size_t)heads * HEAD, stride = 3 * hidden;
    const T* sequence = qkv + (size_t)b * tokens * stride + (size_t)h * HEAD;
    float* own_scratch = scratch[warp];
    T* own_weights = weights[warp];

    // The warp's queries (zeros past the sequence) into fragments, through the scratch.
    T* staged = reinterpret_cast<T*>(own_scratch);
    for (unsigned int i = lane; i < TENSOR_QUERIES * VECTORS_PER_ROW; i += 32) {
        const unsigned int r = i / VECTORS_PER_ROW, v = i % VECTORS_PER_ROW;
        Bits128 bits = {0, 0, 0, 0};
        if (first + r < tokens) bits = *reinterpret_cast<const Bits128*>(sequence + (size_t)(first + r) * stride + v * VECTOR);
        *reinterpret_cast<Bits128*>(staged + r * HEAD + v * VECTOR) = bits;
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> query[HEAD / 16];
#pragma unroll
    for (int k = 0; k < HEAD / 16; ++k) wmma::load_matrix_sync(query[k], staged + k * 16, HEAD);
    __syncwarp();  // the scratch is the scores' next

    const unsigned int row = lane % TENSOR_QUERIES, half = lane / TENSOR_QUERIES;
    float output[HALF];
#pragma unroll
    for (int d = 0; d < HALF; ++d) output[d] = 0.0f;
    float maximum = -INFINITY, total = 0.0f;
    for (unsigned int start = 0; start < length; start += TENSOR_KEYS) {
        const unsigned int count = min((unsigned int)TENSOR_KEYS, length - start);
        __syncthreads();  // every warp is done with the previous tile
        stage_tile<VECTORS_PER_ROW>(sequence, stride, hidden, start, count, [&](unsigned int j, unsigned int v, const Bits128& key, const Bits128& value) {
            *reinterpret_cast<Bits128*>(key_tile + j * TILE_STRIDE + v * VECTOR) = key;
            *reinterpret_cast<Bits128*>(value_tile + j * TILE_STRIDE + v * VECTOR) = value;
        });
        __syncthreads();

        // scores [16][TENSOR_KEYS] = queries · keysᵀ (keysᵀ: the key tile read column-major).
        warp_product<TENSOR_KEYS / 16, HEAD / 16>(own_scratch, [&](int k) { return query[k]; }, [&](int n, int k) {
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> keys;
            wmma::load_matrix_sync(keys, key_tile + n * 16 * TILE_STRIDE + k * 16, TILE_STRIDE);
            return keys;
        });
        __syncwarp();

        const float* scores = own_scratch + row * SCRATCH_STRIDE + half * KEY_HALF;
        const unsigned int keys_here = count > half * KEY_HALF ? min((unsigned int)KEY_HALF, count - half * KEY_HALF) : 0;
        float tile_maximum = -INFINITY;
        for (unsigned int c = 0; c < keys_here; ++c) tile_maximum = fmaxf(tile_maximum, scores[c]);
        tile_maximum = fmaxf(tile_maximum, __shfl_xor_sync(0xffffffffu, tile_maximum, TENSOR_QUERIES));
        const float next = fmaxf(maximum, tile_maximum);  // finite: count >= 1
        const float rescale = expf(maximum - next);       // 0 on the first tile
        float sum = 0.0f;
        T* row_weights = own_weights + row * WEIGHT_STRIDE + half * KEY_HALF;
#pragma unroll
        for (int c = 0; c < KEY_HALF; ++c) {
            const float weight = (unsigned int)c < keys_here ? expf(scores[c] - next) : 0.0f;
            sum += weight;
            row_weights[c] = from_float<T>(weight);
        }
        total = total * rescale + sum + __shfl_xor_sync(0xffffffffu, sum, TENSOR_QUERIES);
        maximum = next;
        __syncwarp();  // weights written, scores read: the scratch takes the product

        // product [16][HEAD] = weights · values, into the scratch.
        warp_product<HEAD / 16, TENSOR_KEYS / 16>(own_scratch, [&](int k) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> weight;
            wmma::load_matrix_sync(weight, own_weights + k * 16, WEIGHT_STRIDE);
            return weight;
        }, [&](int n, int k) {
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> values;
            wmma::load_matrix_sync(values, value_tile + k * 16 * TILE_STRIDE + n * 16, TILE_STRIDE);
            return values;
        });
        __syncwarp();
        const float* product = own_scratch + row * SCRATCH_STRIDE + half * HALF;
#pragma unroll
        for (int d = 0; d < HALF; ++d) output[d] = output[d] * rescale + product[d];
        __syncwarp();  // the product read before the next tile's scores
    }
    if (first + row >= tokens) return;
    const float inverse = 1.0f / total;  // total >= 1: the maximum's own weight
    T* out = context + ((size_t)b * tokens + first + row) * hidden + (size_t)h * HEAD + half * HALF;
#pragma unroll
    for (int d = 0; d < HALF; ++d) out[d] = from_float<T>(output[d] * inverse);
}

// Tensor cores through mma.sync (mma.cuh), FlashAttention-2's layout: the same grid and
// warps as tensor_core_attention (16 queries a warp, TENSOR_WARPS warps a block at most), but
// no scratch. The block stages keys and values as they are, [key][d], 16 bytes a copy
// (cp.async, global to shared memory without passing through registers), in two buffers:
// the next tile's copies fly while the warps work on this one. The products' B operands come
// from the tiles through ldmatrix (four 8x8 blocks a load: the keys as they are, the values
// transposed; strides padded by 8 elements so the eight rows of a block fall on 32 different
// banks). Each lane holds its two rows' (group and group + 8) scores as the products leave
// them, masks the keys past the sequence, takes the rows' maxima across its 4 lanes, and
// rounds the weights (2^(score·log2 e − maximum·log2 e), one multiply-add before the exp2)
// to T straight into the A fragments of weights · values (the sums of two 8-key blocks side
// by side are the A fragment of their 16 keys); the output stays in the product's
// accumulators, rescaled when the maximum grows. Each lane's running sum covers its own
// columns; the 4 lanes of a row add theirs at the end. Needs qkv 16-byte aligned (the host
// checks it).
// Two layouts of the sequences' rows (in qkv and the context alike): padded (RAGGED false),
// sequence b at rows b · tokens.., tokens of them, its padding rows attending like the others;
// or ragged, sequence b at rows starts[b].., lengths[b] of them and no padding (tokens: the
// longest; a block past its sequence's last row returns at once).
template <typename T, int HEAD, bool RAGGED>
__device__ void register_attention(const T* __restrict__ qkv, const unsigned int* __restrict__ lengths, const unsigned int* __restrict__ starts, T* __restrict__ context, unsigned int tokens, unsigned int heads)
{
    constexpr int STRIDE = HEAD + 8, VECTOR = 8, VECTORS_PER_ROW = HEAD / VECTOR;
    constexpr int PART_KEYS = 32, PART_BLOCKS = PART_KEYS / 8, DIM_BLOCKS = HEAD / 8, DIM_STEPS = HEAD / 16;
    constexpr float LOG2E = 1.44269504088896341f;
    static_assert(sizeof(T) == 2 && HEAD % 32 == 0, "16-bit types, head a multiple of 32 (ldmatrix takes two 16-wide steps a load)");
    __shared__ __align__(16) T key_tiles[2][TENSOR_KEYS * STRIDE];
    __shared__ __align__(16) T value_tiles[2][TENSOR_KEYS * STRIDE];
    const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32, threads = blockDim.x;
    const unsigned int group = lane / 4, pair = lane % 4;
    const unsigned int b = blockIdx.x, h = blockIdx.y;
    const unsigned int first = (blockIdx.z * (threads / 32) + warp) * TENSOR_QUERIES;
    const unsigned int length = RAGGED ? min(lengths[b], tokens) : max(1u, min(lengths[b], tokens));
    const unsigned int sequence_rows = RAGGED ? length : tokens;
    if (blockIdx.z * (threads / 32) * TENSOR_QUERIES >= sequence_rows) return;  // the whole block
    const size_t hidden = (size_t)heads * HEAD, stride = 3 * hidden;
    const size_t first_row = RAGGED ? starts[b] : (size_t)b * tokens;
    const T* sequence = qkv + first_row * stride + (size_t)h * HEAD;
    const unsigned int rows[2] = {first + group, first + group + 8};

    // Keys and values start.. of the sequence (zeros past its length) into buffer `buffer`,
    // as one group of copies in flight.
    auto stage = [&](unsigned int start, unsigned int buffer) {
        const unsigned int count = min((unsigned int)TENSOR_KEYS, length - start);
        for (unsigned int i = threadIdx.x; i < TENSOR_KEYS * VECTORS_PER_ROW; i += threads) {
            const unsigned int j = i / VECTORS_PER_ROW, v = i % VECTORS_PER_ROW;
            // Past the sequence nothing is read: the copy writes zeros (the address stays a row of it).
            const T* source = sequence + (size_t)(start + min(j, count - 1)) * stride + v * VECTOR;
            copy_async(key_tiles[buffer] + j * STRIDE + v * VECTOR, source + hidden, j < count);
            copy_async(value_tiles[buffer] + j * STRIDE + v * VECTOR, source + 2 * hidden, j < count);
        }
        commit_copies();
    };
    stage(0, 0);

    // The warp's queries (zeros past the sequence) as A fragments, straight from memory.
    unsigned int query[DIM_STEPS][4];
#pragma unroll
    for (int k = 0; k < DIM_STEPS; ++k)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const unsigned int row = rows[r % 2], column = k * 16 + 2 * pair + 8 * (r / 2);
            query[k][r] = row < sequence_rows ? load_pair(sequence + (size_t)row * stride + column) : 0u;
        }

    float output[DIM_BLOCKS][4];
#pragma unroll
    for (int n = 0; n < DIM_BLOCKS; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) output[n][e] = 0.0f;
    float maximum[2] = {-INFINITY, -INFINITY}, total[2] = {0.0f, 0.0f};
    const unsigned int tiles = (length + TENSOR_KEYS - 1) / TENSOR_KEYS;
    for (unsigned int tile = 0; tile < tiles; ++tile) {
        const unsigned int start = tile * TENSOR_KEYS, count = min((unsigned int)TENSOR_KEYS, length - start);
        wait_copies<0>();  // this thread's copies of the tile (the only group in flight) landed
        // Every thread's copies visible; every warp done with the previous tile, whose
        // buffers the next tile's copies take.
        __syncthreads();
        if (tile + 1 < tiles) stage(start + TENSOR_KEYS, (tile + 1) % 2);
        const T* key_tile = key_tiles[tile % 2];
        const T* value_tile = value_tiles[tile % 2];

        // The tile in parts of PART_KEYS keys, each an online-softmax step of its own: fewer
        // scores and weights live at once (registers); a part wholly past the sequence is skipped.
#pragma unroll
        for (int part = 0; part < TENSOR_KEYS / PART_KEYS; ++part) {
            const unsigned int part_start = part * PART_KEYS;
            if (part_start >= count) break;  // the same for the whole block

            // scores [16][PART_KEYS] = queries · keysᵀ: block n holds keys 8n.. of the part,
            // each lane its rows' columns 2 * pair and + 1. One load gives two steps' B
            // operands: lane l points at key 8n + l % 8, dimensions 16k + 8 (l / 8)...
            float scores[PART_BLOCKS][4];
#pragma unroll
            for (int n = 0; n < PART_BLOCKS; ++n) {
#pragma unroll
                for (int e = 0; e < 4; ++e) scores[n][e] = 0.0f;
#pragma unroll
                for (int k = 0; k < DIM_STEPS; k += 2) {
                    unsigned int keys[4];
                    load_matrices<false>(keys, key_tile + (part_start + n * 8 + lane % 8) * STRIDE + k * 16 + lane / 8 * 8);
                    const unsigned int step[2] = {keys[0], keys[1]}, next_step[2] = {keys[2], keys[3]};
                    mma_m16n8k16<T>(scores[n], query[k], step);
                    mma_m16n8k16<T>(scores[n], query[k + 1], next_step);
                }
            }

            float next[2] = {maximum[0], maximum[1]};
#pragma unroll
            for (int n = 0; n < PART_BLOCKS; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if (part_start + n * 8 + 2 * pair + e % 2 >= count) scores[n][e] = -INFINITY;
                    next[e / 2] = fmaxf(next[e / 2], scores[n][e]);
                }
            float offset[2];
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                next[r] = fmaxf(next[r], __shfl_xor_sync(0xffffffffu, next[r], 1));
                next[r] = fmaxf(next[r], __shfl_xor_sync(0xffffffffu, next[r], 2));  // finite: the part's first key
                const float rescale = exp2f((maximum[r] - next[r]) * LOG2E);         // 0 at the first part
                total[r] *= rescale;
#pragma unroll
                for (int n = 0; n < DIM_BLOCKS; ++n) {
                    output[n][2 * r] *= rescale;
                    output[n][2 * r + 1] *= rescale;
                }
                maximum[r] = next[r];
                offset[r] = next[r] * LOG2E;
            }

            // The weights, rounded to T, as the A fragments of weights · values.
            unsigned int weights[PART_BLOCKS / 2][4];
#pragma unroll
            for (int n = 0; n < PART_BLOCKS; ++n) {
                float weight[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    weight[e] = exp2f(fmaf(scores[n][e], LOG2E, -offset[e / 2]));  // 0 past count
                    total[e / 2] += weight[e];
                }
                weights[n / 2][2 * (n % 2)] = pack_pair<T>(weight[0], weight[1]);
                weights[n / 2][2 * (n % 2) + 1] = pack_pair<T>(weight[2], weight[3]);
            }

            // output [16][HEAD] += weights · values: block n holds dimensions 8n... One
            // transposed load gives two blocks' B operands: lane l points at key 16k + l % 16
            // of the part, dimensions 8 (n + l / 16)...
#pragma unroll
            for (int n = 0; n < DIM_BLOCKS; n += 2) {
#pragma unroll
                for (int k = 0; k < PART_BLOCKS / 2; ++k) {
                    unsigned int values[4];
                    load_matrices<true>(values, value_tile + (part_start + k * 16 + lane % 16) * STRIDE + (n + lane / 16) * 8);
                    const unsigned int block[2] = {values[0], values[1]}, next_block[2] = {values[2], values[3]};
                    mma_m16n8k16<T>(output[n], weights[k], block);
                    mma_m16n8k16<T>(output[n + 1], weights[k], next_block);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        total[r] += __shfl_xor_sync(0xffffffffu, total[r], 1);
        total[r] += __shfl_xor_sync(0xffffffffu, total[r], 2);  // >= 1: the maximum's own weight
        if (rows[r] >= sequence_rows) continue;
        const float inverse = 1.0f / total[r];
        T* out = context + (first_row + rows[r]) * hidden + (size_t)h * HEAD + 2 * pair;
#pragma unroll
        for (int n = 0; n < DIM_BLOCKS; ++n) {
            const unsigned int bits = pack_pair<T>(output[n][2 * r] * inverse, output[n][2 * r + 1] * inverse);
            *reinterpret_cast<unsigned int*>(out + n * 8) = bits;
        }
    }
}

// Entry points KERNEL_{32,64}_SUFFIX for the head sizes quarry launches.
#define ATTENTION_ENTRY_POINTS(KERNEL, SUFFIX, T) \
extern "C" __global__ void KERNEL##_32_##SUFFIX(const T* qkv, const unsigned int* lengths, T* context, unsigned int tokens, unsigned int heads) \
{ KERNEL<T, 32>(qkv, lengths, context, tokens, heads); } \
extern "C" __global__ void KERNEL##_64_##SUFFIX(const T* qkv, const unsigned int* lengths, T* context, unsigned int tokens, unsigned int heads) \
{ KERNEL<T, 64>(qkv, lengths, context, tokens, heads); }

ATTENTION_ENTRY_POINTS(packed_attention, f32, float)
ATTENTION_ENTRY_POINTS(packed_attention, f16, __half)
ATTENTION_ENTRY_POINTS(packed_attention, bf16, __nv_bfloat16)
ATTENTION_ENTRY_POINTS(tensor_core_attention, f16, __half)
ATTENTION_ENTRY_POINTS(tensor_core_attention, bf16, __nv_bfloat16)

// The register kernel in both layouts: register_attention_{32,64}_SUFFIX (padded, the
// others' arguments) and register_attention_ragged_{32,64}_SUFFIX (starts after lengths).
#define REGISTER_ENTRY_POINTS(HEAD, SUFFIX, T) \
extern "C" __global__ void register_attention_##HEAD##_##SUFFIX(const T* qkv, const unsigned int* lengths, T* context, unsigned int tokens, unsigned int heads) \
{ register_attention<T, HEAD, false>(qkv, lengths, nullptr, context, tokens, heads); } \
extern "C" __global__ void register_attention_ragged_##HEAD##_##SUFFIX(const T* qkv, const unsigned int* lengths, const unsigned int* starts, T* context, unsigned int tokens, unsigned int heads) \
{ register_attention<T, HEAD, true>(qkv, lengths, starts, context, tokens, heads); }

REGISTER_ENTRY_POINTS(32, f16, __half)
REGISTER_ENTRY_POINTS(64, f16, __half)
REGISTER_ENTRY_POINTS(32, bf16, __nv_bfloat16)
REGISTER_ENTRY_POINTS(64, bf16, __nv_bfloat16)
