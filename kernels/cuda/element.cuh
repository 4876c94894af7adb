// Element types of the encoder kernels (encoder.cu, attention.cu): every value is computed in
// f32 and stored as the tensor's type (f32, f16 or bf16). Under the CPU emulation
// (kernels/tests/emulated/cuda_emulation.hpp) the half types are emulated ones.
#pragma once

#ifndef QUARRY_CUDA_EMULATION
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

template <typename T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ __forceinline__ float warp_sum(float value)
{
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

// 16 bytes moved as one load or store (8 f16/bf16 values, 4 f32); the pointer must be
// 16-byte aligned.
struct alignas(16) Bits128 {
    unsigned int x, y, z, w;
};
