// Runs the three attention kernels of kernels/cuda/attention.cu (the register kernel in both
// of its layouts) on the CPU (cuda_emulation.hpp,
// WMMA and mma.sync included) against an f64 reference, at every element type they are built for, on
// fresh random inputs: several query blocks and warps, several key tiles (the last partial),
// sequences of one real token, lengths of 0 (clamped to 1), padding rows, a block's last warp
// past the sequence. Built and run by kernels/tests/cuda_source_emulated.rs; exit status 1 on
// any mismatch.
#include "cuda_emulation.hpp"
#include "../../cuda/attention.cu"

#include <cstdio>
#include <random>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

template <typename T>
using AttentionKernel = void (*)(const T*, const unsigned int*, T*, unsigned int, unsigned int);

// Queries per block of each kernel, for the grid: the CUDA-core kernel one per thread, the
// tensor-core kernels 16 per warp (as indexer/src/embed/cuda_attention.rs launches them).
enum class Kernel { CudaCores, TensorCores };

template <typename T, int HEAD>
static void check_attention(const char* name, Kernel kind, AttentionKernel<T> kernel, const std::vector<unsigned int>& lengths, unsigned int tokens, unsigned int heads, unsigned int threads, double tolerance)
{
    const unsigned int batch = lengths.size(), hidden = heads * HEAD;
    std::normal_distribution<float> normal(0.0f, 0.6f);
    // 32-byte aligned, as the GPU's allocations are (the tensor-core kernel loads 16 bytes),
    // and exactly as long as the values (6 * hidden bytes a row, a multiple of 32), so a read
    // past them is AddressSanitizer's to report.
    const size_t values = (size_t)batch * tokens * 3 * hidden;
    std::unique_ptr<T, decltype(&std::free)> storage(static_cast<T*>(std::aligned_alloc(32, values * sizeof(T))), &std::free);
    T* qkv = storage.get();
    for (size_t i = 0; i < values; ++i) qkv[i] = from_float<T>(normal(rng));
    std::vector<T> context((size_t)batch * tokens * hidden, from_float<T>(NAN));
    const unsigned int queries_per_block = kind == Kernel::CudaCores ? threads : threads / 32 * TENSOR_QUERIES;
    launch({batch, heads, (tokens + queries_per_block - 1) / queries_per_block}, {threads, 1, 1},
           [&] { kernel(qkv, lengths.data(), context.data(), tokens, heads); });
    auto at = [&](unsigned int b, unsigned int t, unsigned int part, unsigned int h, unsigned int d) {
        return (double)to_float(qkv[((size_t)b * tokens + t) * 3 * hidden + part * hidden + h * HEAD + d]);
    };
    int mismatches = 0;
    for (unsigned int b = 0; b < batch; ++b) {
        const unsigned int length = std::max(1u, std::min(lengths[b], tokens));
        for (unsigned int h = 0; h < heads; ++h)
            for (unsigned int t = 0; t < tokens; ++t) {
                std::vector<double> scores(length);
                double maximum = -INFINITY, total = 0;
                for (unsigned int j = 0; j < length; ++j) {
                    for (unsigned int d = 0; d < HEAD; ++d) scores[j] += at(b, t, 0, h, d) * at(b, j, 1, h, d);
                    maximum = std::max(maximum, scores[j]);
                }
                for (auto& s : scores) total += s = std::exp(s - maximum);
                for (unsigned int d = 0; d < HEAD; ++d) {
                    double want = 0;
                    for (unsigned int j = 0; j < length; ++j) want += scores[j] * at(b, j, 2, h, d);
                    want /= total;
                    const size_t index = ((size_t)b * tokens + t) * hidden + h * HEAD + d;
                    const double got = to_float(context[index]);
                    if (!(std::fabs(got - want) <= tolerance * (1.0 + std::fabs(want))) && mismatches++ < 10)
                        std::printf("%s: %u sequences x %u tokens x %u heads, sequence %u head %u token %u value %u is %.6g, want %.6g\n", name, batch, tokens, heads, b, h, t, d, got, want);
                }
            }
    }
    failures += mismatches;
}

template <typename T>
using RaggedKernel = void (*)(const T*, const unsigned int*, const unsigned int*, T*, unsigned int, unsigned int);

// The register kernel's ragged layout: the sequences' rows back to back (no padding), sequence
// b at rows starts[b].., lengths[b] of them, in qkv and the context alike; the grid as the host
// launches it (tokens: the longest sequence). Every row written, nothing past the context.
template <typename T, int HEAD>
static void check_ragged(const char* name, RaggedKernel<T> kernel, const std::vector<unsigned int>& lengths, unsigned int heads, unsigned int threads, double tolerance)
{
    const unsigned int batch = lengths.size(), hidden = heads * HEAD;
    std::vector<unsigned int> starts(batch);
    unsigned int rows = 0, tokens = 1;
    for (unsigned int b = 0; b < batch; ++b) {
        starts[b] = rows;
        rows += lengths[b];
        tokens = std::max(tokens, lengths[b]);
    }
    std::normal_distribution<float> normal(0.0f, 0.6f);
    const size_t values = (size_t)rows * 3 * hidden, outputs = (size_t)rows * hidden;
    std::unique_ptr<T, decltype(&std::free)> storage(static_cast<T*>(std::aligned_alloc(32, values * sizeof(T))), &std::free);
    std::unique_ptr<T, decltype(&std::free)> output(static_cast<T*>(std::aligned_alloc(32, outputs * sizeof(T))), &std::free);
    T* qkv = storage.get();
    T* context = output.get();
    for (size_t i = 0; i < values; ++i) qkv[i] = from_float<T>(normal(rng));
    for (size_t i = 0; i < outputs; ++i) context[i] = from_float<T>(NAN);
    const unsigned int queries_per_block = threads / 32 * TENSOR_QUERIES;
    launch({batch, heads, (tokens + queries_per_block - 1) / queries_per_block}, {threads, 1, 1},
           [&] { kernel(qkv, lengths.data(), starts.data(), context, tokens, heads); });
    auto at = [&](unsigned int row, unsigned int part, unsigned int h, unsigned int d) {
        return (double)to_float(qkv[(size_t)row * 3 * hidden + part * hidden + h * HEAD + d]);
    };
    int mismatches = 0;
    for (unsigned int b = 0; b < batch; ++b)
        for (unsigned int h = 0; h < heads; ++h)
            for (unsigned int t = 0; t < lengths[b]; ++t) {
                const unsigned int query = starts[b] + t;
                std::vector<double> scores(lengths[b]);
                double maximum = -INFINITY, total = 0;
                for (unsigned int j = 0; j < lengths[b]; ++j) {
                    for (unsigned int d = 0; d < HEAD; ++d) scores[j] += at(query, 0, h, d) * at(starts[b] + j, 1, h, d);
                    maximum = std::max(maximum, scores[j]);
                }
                for (auto& s : scores) total += s = std::exp(s - maximum);
                for (unsigned int d = 0; d < HEAD; ++d) {
                    double want = 0;
                    for (unsigned int j = 0; j < lengths[b]; ++j) want += scores[j] * at(starts[b] + j, 2, h, d);
                    want /= total;
                    const double got = to_float(context[(size_t)query * hidden + h * HEAD + d]);
                    if (!(std::fabs(got - want) <= tolerance * (1.0 + std::fabs(want))) && mismatches++ < 10)
                        std::printf("%s (ragged): lengths %u.., sequence %u head %u token %u value %u is %.6g, want %.6g\n", name, lengths[0], b, h, t, d, got, want);
                }
            }
    failures += mismatches;
}

template <typename T>
static void check_tensor_cores(const char* name, AttentionKernel<T> head32, AttentionKernel<T> head64, double tolerance)
{
    // 70 tokens: two key tiles (the second partial), two blocks of 4 warps (the second block's
    // last warps past the sequence); lengths of one token, 0 (clamped to 1), 33 (a tile's second
    // half partial), full.
    check_attention<T, 32>(name, Kernel::TensorCores, head32, {70, 1, 0, 33}, 70, 3, 128, tolerance);
    check_attention<T, 32>(name, Kernel::TensorCores, head32, {1}, 1, 1, 32, tolerance);
    // 130 tokens: three key tiles; blocks of 2 warps.
    check_attention<T, 32>(name, Kernel::TensorCores, head32, {130, 64, 65}, 130, 2, 64, tolerance);
    check_attention<T, 64>(name, Kernel::TensorCores, head64, {40, 5, 17}, 41, 2, 128, tolerance);
}

int main()
{
    // CUDA cores: 70 tokens, three key tiles of 32, two query blocks of 64 threads (the
    // second mostly idle).
    check_attention<float, 32>("packed_attention_32_f32", Kernel::CudaCores, packed_attention_32_f32, {70, 1, 0, 33}, 70, 3, 64, 2e-5);
    check_attention<float, 32>("packed_attention_32_f32", Kernel::CudaCores, packed_attention_32_f32, {1}, 1, 1, 32, 2e-5);
    check_attention<float, 32>("packed_attention_32_f32", Kernel::CudaCores, packed_attention_32_f32, {32, 17}, 32, 12, 32, 2e-5);
    check_attention<float, 64>("packed_attention_64_f32", Kernel::CudaCores, packed_attention_64_f32, {40, 5}, 41, 2, 32, 2e-5);
    // The output rounded to f16 (11 bits) or bf16 (8 bits), the weights too on tensor cores.
    check_attention<__half, 32>("packed_attention_32_f16", Kernel::CudaCores, packed_attention_32_f16, {70, 1, 0, 33}, 70, 3, 64, 2e-3);
    check_attention<__nv_bfloat16, 64>("packed_attention_64_bf16", Kernel::CudaCores, packed_attention_64_bf16, {40, 5}, 41, 2, 32, 1e-2);
    check_tensor_cores<__half>("tensor_core_attention f16", tensor_core_attention_32_f16, tensor_core_attention_64_f16, 3e-3);
    check_tensor_cores<__nv_bfloat16>("tensor_core_attention bf16", tensor_core_attention_32_bf16, tensor_core_attention_64_bf16, 2e-2);
    check_tensor_cores<__half>("register_attention f16", register_attention_32_f16, register_attention_64_f16, 3e-3);
    check_tensor_cores<__nv_bfloat16>("register_attention bf16", register_attention_32_bf16, register_attention_64_bf16, 2e-2);
    // The register kernel in larger blocks (QUARRY_ATTENTION_WARPS): 16 warps, one block for
    // a 250-token sequence (its last warp partly past it); 8 warps, two blocks.
    check_attention<__half, 32>("register_attention f16, 16 warps", Kernel::TensorCores, register_attention_32_f16, {250, 130, 1}, 250, 2, 512, 3e-3);
    check_attention<__nv_bfloat16, 64>("register_attention bf16, 8 warps", Kernel::TensorCores, register_attention_64_bf16, {200, 77}, 200, 1, 256, 2e-2);
    // The ragged layout: sequences of 70 (two key tiles, two blocks of 2 warps), 1, 0 (no
    // rows), 33 and 130 tokens back to back; a block past a short sequence returns.
    check_ragged<__half, 32>("register_attention_ragged_32_f16", register_attention_ragged_32_f16, {70, 1, 0, 33, 130}, 3, 64, 3e-3);
    check_ragged<__nv_bfloat16, 32>("register_attention_ragged_32_bf16", register_attention_ragged_32_bf16, {17, 250, 64}, 2, 256, 2e-2);
    check_ragged<__half, 64>("register_attention_ragged_64_f16", register_attention_ragged_64_f16, {40, 5, 65}, 2, 128, 3e-3);
    check_ragged<__nv_bfloat16, 64>("register_attention_ragged_64_bf16", register_attention_ragged_64_bf16, {3, 96}, 1, 64, 2e-2);
    if (failures) {
        std::printf("%d values off\n", failures);
        return 1;
    }
    std::printf("attention kernels: all values match\n");
    return 0;
}
