// Just enough of CUDA's execution model to run a kernel's source on the CPU: every thread of
// a block is an OS thread, blocks run one after another (so a `__shared__` variable, made a
// function-local static here, is the block's own), `__syncthreads` is a barrier of the
// block's threads, `__shfl_xor_sync` / `__shfl_down_sync` swap through a per-warp array
// between two barriers of the warp, `__syncwarp` is a barrier of the warp's threads,
// `atomicAdd` is a std::atomic_ref add, `__half` is g++'s _Float16 and `__nv_bfloat16` its
// bits with round-to-nearest-even conversions, and WMMA (nvcuda::wmma) keeps a whole tile in
// every lane's fragment (the API hides which lane holds what, so a kernel that only goes
// through it cannot tell), checking each pointer's 32-byte alignment and each stride's
// 16-byte multiple as CUDA requires; each lane stores every 32nd element, so a store that
// not all 32 lanes make leaves holes. PTX mma.sync (`mma_m16n8k16`, kernels/cuda/mma.cuh)
// does expose which lane holds which element: the lanes swap their registers and each
// computes its own elements of the product from the PTX ISA's layout; ldmatrix
// (`load_matrices`) swaps row addresses the same way, and cp.async (`copy_async`) copies
// land only at the wait that covers them. It checks a
// kernel's logic — indexing, tiling, edges, barriers placed where every thread reaches
// them — compiled by g++, not nvcc, and says nothing of its speed; the
// GPU parity tests (kernels/tests/cuda_parity.rs, indexer/tests/cuda_encoder_parity.rs) are
// what check the real thing.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <type_traits>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#define QUARRY_CUDA_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
    unsigned int x = 1, y = 1, z = 1;
};

inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace emulation {
inline std::unique_ptr<std::barrier<>> block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
inline std::vector<std::uint64_t> exchange;
// Each thread's operands of an mma_m16n8k16: a[4], b[2], then d[4]'s bits.
inline std::vector<std::array<std::uint32_t, 10>> fragments;

inline unsigned int thread_in_block() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
}  // namespace emulation

inline void __syncthreads() { emulation::block_barrier->arrive_and_wait(); }
inline void __syncwarp(unsigned int = 0xffffffffu) { emulation::warp_barriers[emulation::thread_in_block() / 32]->arrive_and_wait(); }

namespace emulation {
// `value` of the warp's lane `source(lane)` (its own when that is past the warp). Every lane
// of the warp must call it (full mask), as the kernels here do.
template <typename T, typename Source>
T shuffle(T value, Source source)
{
    static_assert(sizeof(T) <= sizeof(std::uint64_t));
    const unsigned int me = thread_in_block();
    auto& warp = *warp_barriers[me / 32];
    std::memcpy(&exchange[me], &value, sizeof(T));
    warp.arrive_and_wait();
    const unsigned int lane = source(me % 32);
    T other = value;
    if (lane < 32) std::memcpy(&other, &exchange[(me & ~31u) | lane], sizeof(T));
    warp.arrive_and_wait();
    return other;
}
}  // namespace emulation

template <typename T>
T __shfl_xor_sync(unsigned int, T value, int offset) { return emulation::shuffle(value, [=](unsigned int lane) { return lane ^ (unsigned int)offset; }); }
template <typename T>
T __shfl_down_sync(unsigned int, T value, unsigned int delta) { return emulation::shuffle(value, [=](unsigned int lane) { return lane + delta; }); }

template <typename T>
T atomicAdd(T* address, T value) { return std::atomic_ref<T>(*address).fetch_add(value); }

using std::max;
using std::min;

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

using __half = _Float16;
inline float __half2float(__half x) { return (float)x; }
inline __half __float2half_rn(float x) { return (__half)x; }

struct __nv_bfloat16 {
    std::uint16_t bits;
};
inline float __bfloat162float(__nv_bfloat16 x)
{
    const std::uint32_t word = (std::uint32_t)x.bits << 16;
    float value;
    std::memcpy(&value, &word, sizeof value);
    return value;
}
inline __nv_bfloat16 __float2bfloat16_rn(float x)
{
    std::uint32_t word;
    std::memcpy(&word, &x, sizeof word);
    if (std::isnan(x)) return {0x7fc0};
    return {(std::uint16_t)((word + 0x7fffu + ((word >> 16) & 1u)) >> 16)};
}

namespace nvcuda::wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

inline float element_value(float x) { return x; }
inline float element_value(__half x) { return __half2float(x); }
inline float element_value(__nv_bfloat16 x) { return __bfloat162float(x); }

// The whole ROWS x COLS tile, row-major, in every lane.
template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
    static constexpr int ROWS = std::is_same_v<Use, matrix_b> ? K : M;
    static constexpr int COLS = std::is_same_v<Use, matrix_a> ? K : N;
    float tile[ROWS * COLS];
};

template <typename T>
void check_operand(const T* pointer, unsigned int ldm)
{
    if ((std::uintptr_t)pointer % 32 != 0 || (ldm * sizeof(T)) % 16 != 0) {
        std::fprintf(stderr, "wmma: pointer %p or stride %u elements breaks CUDA's alignment rules\n", (const void*)pointer, ldm);
        std::abort();
    }
}

template <typename Use, int M, int N, int K, typename T, typename Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& into, const T* pointer, unsigned int ldm)
{
    check_operand(pointer, ldm);
    using F = fragment<Use, M, N, K, T, Layout>;
    for (int r = 0; r < F::ROWS; ++r)
        for (int c = 0; c < F::COLS; ++c)
            into.tile[r * F::COLS + c] = element_value(std::is_same_v<Layout, col_major> ? pointer[(size_t)c * ldm + r] : pointer[(size_t)r * ldm + c]);
}

template <int M, int N, int K>
void fill_fragment(fragment<accumulator, M, N, K, float>& into, float value) { std::fill(std::begin(into.tile), std::end(into.tile), value); }

template <int M, int N, int K, typename T, typename LA, typename LB>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LA>& a, const fragment<matrix_b, M, N, K, T, LB>& b, const fragment<accumulator, M, N, K, float>& c)
{
    float result[M * N];
    for (int r = 0; r < M; ++r)
        for (int n = 0; n < N; ++n) {
            float sum = c.tile[r * N + n];
            for (int k = 0; k < K; ++k) sum += a.tile[r * K + k] * b.tile[k * N + n];
            result[r * N + n] = sum;
        }
    std::copy(std::begin(result), std::end(result), d.tile);
}

template <int M, int N, int K>
void store_matrix_sync(float* pointer, const fragment<accumulator, M, N, K, float>& from, unsigned int ldm, layout_t layout)
{
    check_operand(pointer, ldm);
    for (int i = emulation::thread_in_block() % 32; i < M * N; i += 32) {
        const int r = i / N, c = i % N;
        pointer[layout == mem_row_major ? (size_t)r * ldm + c : (size_t)c * ldm + r] = from.tile[i];
    }
}
}  // namespace nvcuda::wmma

// d += a · b for the warp, every lane with its fragments as PTX lays them out (mma.cuh):
// lane = 4 * group + pair; A [16][16] row-major, B [16][8], D [16][8]; each register's
// first element in its low 16 bits. Every lane of the warp must call it, as on the GPU.
template <typename T>
void mma_m16n8k16(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2])
{
    static_assert(sizeof(T) == 2, "16-bit element types");
    const unsigned int me = emulation::thread_in_block(), base = me & ~31u;
    auto& warp = *emulation::warp_barriers[me / 32];
    auto& own = emulation::fragments[me];
    std::copy(std::begin(a), std::end(a), own.begin());
    std::copy(std::begin(b), std::end(b), own.begin() + 4);
    std::memcpy(own.data() + 6, d, sizeof d);
    warp.arrive_and_wait();
    auto element = [](std::uint32_t bits, int second) {
        const std::uint16_t half = second ? bits >> 16 : bits & 0xffffu;
        T value;
        std::memcpy(&value, &half, sizeof value);
        return nvcuda::wmma::element_value(value);
    };
    float left[16][16], right[16][8], sums[16][8];
    for (unsigned int lane = 0; lane < 32; ++lane) {
        const auto& f = emulation::fragments[base + lane];
        const unsigned int group = lane / 4, pair = lane % 4;
        for (int e = 0; e < 2; ++e) {
            left[group][2 * pair + e] = element(f[0], e);
            left[group + 8][2 * pair + e] = element(f[1], e);
            left[group][2 * pair + 8 + e] = element(f[2], e);
            left[group + 8][2 * pair + 8 + e] = element(f[3], e);
            right[2 * pair + e][group] = element(f[4], e);
            right[2 * pair + 8 + e][group] = element(f[5], e);
            std::memcpy(&sums[group][2 * pair + e], &f[6 + e], sizeof(float));
            std::memcpy(&sums[group + 8][2 * pair + e], &f[8 + e], sizeof(float));
        }
    }
    warp.arrive_and_wait();
    const unsigned int group = me % 32 / 4, pair = me % 4;
    for (int i = 0; i < 4; ++i) {
        const unsigned int row = group + 8 * (i / 2), column = 2 * pair + i % 2;
        float sum = sums[row][column];
        for (int k = 0; k < 16; ++k) sum += left[row][k] * right[k][column];
        d[i] = sum;
    }
}

// PTX ldmatrix .x4 (mma.cuh load_matrices): lane l gives row l % 8 of matrix l / 8; each
// lane then takes its elements of the four matrices from the rows the warp gave, as the PTX
// ISA lays them out ("Warp-level matrix load instruction: ldmatrix"). A row not 16-byte
// aligned is a fault on the GPU: here it stops the program. Every lane of the warp must
// call it.
template <bool TRANSPOSED>
void load_matrices(unsigned int (&r)[4], const void* row)
{
    const unsigned int me = emulation::thread_in_block(), base = me & ~31u;
    if (reinterpret_cast<std::uintptr_t>(row) % 16 != 0) {
        std::fprintf(stderr, "ldmatrix: lane %u's row %p is not 16-byte aligned\n", me % 32, row);
        std::abort();
    }
    auto& warp = *emulation::warp_barriers[me / 32];
    emulation::exchange[me] = reinterpret_cast<std::uintptr_t>(row);
    warp.arrive_and_wait();
    const unsigned int lane = me % 32;
    auto element = [&](unsigned int matrix, unsigned int r, unsigned int c) {
        const auto* at = reinterpret_cast<const std::uint16_t*>(emulation::exchange[base + 8 * matrix + r]);
        return (std::uint32_t)at[c];
    };
    for (unsigned int i = 0; i < 4; ++i) {
        const unsigned int first = TRANSPOSED ? element(i, 2 * (lane % 4), lane / 4) : element(i, lane / 4, 2 * (lane % 4));
        const unsigned int second = TRANSPOSED ? element(i, 2 * (lane % 4) + 1, lane / 4) : element(i, lane / 4, 2 * (lane % 4) + 1);
        r[i] = first | second << 16;
    }
    warp.arrive_and_wait();
}

namespace emulation {
// One thread's cp.async copies not yet landed: the committed groups, oldest first, and the
// copies made since the last commit. They land only at a wait that covers their group, so a
// kernel that reads a tile before its wait (or before the __syncthreads after every thread's
// wait) reads what was there before.
struct PendingCopy {
    void* shared;
    const void* global;
    bool copy;
};
struct Copies {
    std::vector<std::vector<PendingCopy>> committed;
    std::vector<PendingCopy> open;
};
inline thread_local Copies copies;
}  // namespace emulation

// PTX cp.async (mma.cuh copy_async): 16 bytes, both addresses 16-byte aligned, or zeros.
inline void copy_async(void* shared, const void* global, bool copy)
{
    if (reinterpret_cast<std::uintptr_t>(shared) % 16 != 0 || reinterpret_cast<std::uintptr_t>(global) % 16 != 0) {
        std::fprintf(stderr, "cp.async: %p <- %p is not 16-byte aligned\n", shared, global);
        std::abort();
    }
    emulation::copies.open.push_back({shared, global, copy});
}

inline void commit_copies()
{
    auto& copies = emulation::copies;
    copies.committed.push_back(std::move(copies.open));
    copies.open.clear();
}

template <int PENDING>
void wait_copies()
{
    auto& groups = emulation::copies.committed;
    const size_t landing = groups.size() > PENDING ? groups.size() - PENDING : 0;
    for (size_t g = 0; g < landing; ++g)
        for (const auto& c : groups[g]) {
            if (c.copy) std::memcpy(c.shared, c.global, 16);
            else std::memset(c.shared, 0, 16);
        }
    groups.erase(groups.begin(), groups.begin() + landing);
}

// Runs `kernel` over the grid; blockDim's thread count must be a multiple of 32 whenever the
// kernel uses warp shuffles (the kernels assume it too).
inline void launch(dim3 grid, dim3 block, const std::function<void()>& kernel)
{
    gridDim = grid;
    blockDim = block;
    const unsigned int threads = block.x * block.y * block.z;
    for (unsigned int z = 0; z < grid.z; ++z)
        for (unsigned int y = 0; y < grid.y; ++y)
            for (unsigned int x = 0; x < grid.x; ++x) {
                emulation::block_barrier = std::make_unique<std::barrier<>>(threads);
                emulation::warp_barriers.clear();
                for (unsigned int w = 0; w < (threads + 31) / 32; ++w)
                    emulation::warp_barriers.push_back(std::make_unique<std::barrier<>>(std::min(32u, threads - 32 * w)));
                emulation::exchange.assign(threads, 0);
                emulation::fragments.assign(threads, {});
                std::vector<std::thread> pool;
                for (unsigned int i = 0; i < threads; ++i) {
                    pool.emplace_back([=, &kernel] {
                        threadIdx = {i % block.x, i / block.x % block.y, i / (block.x * block.y)};
                        blockIdx = {x, y, z};
                        kernel();
                        // An exited thread leaves the barriers, as on the GPU.
                        emulation::block_barrier->arrive_and_drop();
                        emulation::warp_barriers[i / 32]->arrive_and_drop();
                    });
                }
                for (auto& thread : pool) thread.join();
            }
}
