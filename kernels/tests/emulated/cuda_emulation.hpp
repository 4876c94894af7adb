// Just enough of CUDA's execution model to run a kernel's source on the CPU: every thread of
// a block is an OS thread, blocks run one after another (so a `__shared__` variable, made a
// function-local static here, is the block's own), `__syncthreads` is a barrier of the
// block's threads, `__shfl_xor_sync` / `__shfl_down_sync` swap through a per-warp array
// between two barriers of the warp, and `atomicAdd` is a std::atomic_ref add. It checks a
// kernel's logic — indexing, tiling, edges, barriers placed where every thread reaches
// them — compiled by g++, not nvcc, and says nothing of its speed; the
// GPU parity tests (kernels/tests/cuda_parity.rs, indexer/tests/cuda_encoder_parity.rs) are
// what check the real thing.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstddef>
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

struct dim3 {
    unsigned int x = 1, y = 1, z = 1;
};

inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace emulation {
inline std::unique_ptr<std::barrier<>> block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
inline std::vector<std::uint64_t> exchange;

inline unsigned int thread_in_block() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
}  // namespace emulation

inline void __syncthreads() { emulation::block_barrier->arrive_and_wait(); }

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
