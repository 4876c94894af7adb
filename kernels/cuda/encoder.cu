// Fused steps of the BERT encoder on the GPU, applied in place to tensors candle owns
// (indexer/src/embed/cuda_encoder_ops.rs launches them). They replace candle's broadcast
// adds (a 64-bit division and modulo per dimension per element) and its separate mask
// add + softmax, which together were two thirds of the encoder's GPU time on an H100.
// CPU twins: candle's broadcast_add + gelu_erf, and kernels/src/softmax.rs masked_softmax_rows.

#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

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
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (unsigned int c = lane; c < columns; c += 32) {
        row[c] = from_float<T>(c < length ? expf(to_float(row[c]) - maximum) * inverse : 0.0f);
    }
}

#define ENCODER_KERNELS(SUFFIX, T) \
extern "C" __global__ void bias_activation_##SUFFIX(T* x, const T* bias, unsigned int rows, unsigned int cols, int gelu) \
{ bias_activation<T>(x, bias, rows, cols, gelu); } \
extern "C" __global__ void masked_softmax_##SUFFIX(T* scores, const unsigned int* lengths, unsigned int rows, unsigned int rows_per_sequence, unsigned int columns) \
{ masked_softmax<T>(scores, lengths, rows, rows_per_sequence, columns); }

ENCODER_KERNELS(f32, float)
ENCODER_KERNELS(f16, __half)
ENCODER_KERNELS(bf16, __nv_bfloat16)
