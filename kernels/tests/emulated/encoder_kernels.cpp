// Runs the kernels of kernels/cuda/encoder.cu on the CPU (cuda_emulation.hpp) against
// f64 references, on fresh random inputs with odd sizes: several blocks and warps, rows
// strided over the grid, rows wider than a warp's registers hold in one pass; the bias and
// vectorized layer norm kernels in f16 and bf16 too.
// Built and run by kernels/tests/cuda_source_emulated.rs. Exit status 1 on any mismatch.
#include "cuda_emulation.hpp"
#include "../../cuda/encoder.cu"

#include <cstdio>
#include <random>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

static std::vector<float> random_values(size_t count, float scale)
{
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> values(count);
    for (auto& v : values) v = normal(rng);
    return values;
}

static void expect_close(const char* what, size_t index, double got, double want, double tolerance)
{
    if (!(std::fabs(got - want) <= tolerance * (1.0 + std::fabs(want)))) {
        if (failures++ < 20) std::printf("%s: value %zu is %.7g, want %.7g\n", what, index, got, want);
    }
}

// `values` rounded to T, 16-byte aligned as the GPU's allocations are (the vectorized kernels
// load four values at a time); the references read the rounded values.
template <typename T>
static std::vector<T> rounded(const std::vector<float>& values)
{
    std::vector<T> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i] = from_float<T>(values[i]);
    return out;
}

// Checks `got` (cols values of T, row `row` of the output) against LayerNorm(v) * weight(c) +
// shift(c) in f64.
template <typename T, typename Weight, typename Shift>
static void expect_normalized(const char* what, size_t row, const std::vector<double>& v, Weight weight, Shift shift, const T* got, double epsilon, double tolerance)
{
    const size_t cols = v.size();
    double mean = 0, variance = 0;
    for (double value : v) mean += value;
    mean /= cols;
    for (double value : v) variance += (value - mean) * (value - mean);
    variance /= cols;
    for (size_t c = 0; c < cols; ++c) {
        const double want = (v[c] - mean) / std::sqrt(variance + epsilon) * weight(c) + shift(c);
        expect_close(what, row * cols + c, to_float(got[c]), want, tolerance);
    }
}

template <typename T>
using NormKernel = void (*)(T*, const T*, const T*, unsigned int, unsigned int, float);

template <typename T>
static void check_layer_norm(const char* name, NormKernel<T> kernel, unsigned int rows, unsigned int cols, double tolerance)
{
    auto x = random_values((size_t)rows * cols, 3.0f);
    for (auto& v : x) v += 20.0f;  // an offset mean
    const auto x_in = rounded<T>(x), residual_in = rounded<T>(random_values(x.size(), 1.0f)), params_in = rounded<T>(random_values(3 * (size_t)cols, 1.0f));
    auto got = x_in;
    const float epsilon = 1e-12f;
    const unsigned int threads = 64, warps_per_block = threads / 32;
    launch({(rows + warps_per_block - 1) / warps_per_block, 1, 1}, {threads, 1, 1},
           [&] { kernel(got.data(), residual_in.data(), params_in.data(), rows, cols, epsilon); });
    char what[96];
    std::snprintf(what, sizeof what, "%s %ux%u", name, rows, cols);
    auto at = [](const std::vector<T>& values, size_t i) { return (double)to_float(values[i]); };
    for (unsigned int r = 0; r < rows; ++r) {
        std::vector<double> v(cols);
        for (unsigned int c = 0; c < cols; ++c) v[c] = at(x_in, (size_t)r * cols + c) + at(params_in, c) + at(residual_in, (size_t)r * cols + c);
        expect_normalized(what, r, v, [&](size_t c) { return at(params_in, cols + c); }, [&](size_t c) { return at(params_in, 2 * cols + c); }, got.data() + (size_t)r * cols, epsilon, tolerance);
    }
}

// embed_tokens against gather + add + layer norm in f64: rows over several sequences (the
// position is the row within its sequence), an id past the table (reads its last row).
template <typename T>
static void check_embed_tokens(const char* name, unsigned int batch, unsigned int tokens, unsigned int cols, double tolerance)
{
    const unsigned int vocabulary = 11, positions = tokens + 3, rows = batch * tokens;
    const auto words = rounded<T>(random_values((size_t)vocabulary * cols, 1.0f));
    const auto prologue = rounded<T>(random_values((size_t)(positions + 2) * cols, 0.5f));
    std::vector<unsigned int> ids(rows);
    for (unsigned int r = 0; r < rows; ++r) ids[r] = (r * 7 + 3) % vocabulary;
    ids[rows - 1] = vocabulary + 5;
    std::vector<T> got((size_t)rows * cols, from_float<T>(NAN));
    const float epsilon = 1e-12f;
    const unsigned int threads = 64, warps_per_block = threads / 32;
    auto kernel = [&] {
        if constexpr (std::is_same_v<T, float>) embed_tokens_f32(ids.data(), words.data(), prologue.data(), got.data(), rows, tokens, positions, vocabulary, cols, epsilon);
        else if constexpr (std::is_same_v<T, __half>) embed_tokens_f16(ids.data(), words.data(), prologue.data(), got.data(), rows, tokens, positions, vocabulary, cols, epsilon);
        else embed_tokens_bf16(ids.data(), words.data(), prologue.data(), got.data(), rows, tokens, positions, vocabulary, cols, epsilon);
    };
    launch({(rows + warps_per_block - 1) / warps_per_block, 1, 1}, {threads, 1, 1}, kernel);
    char what[96];
    std::snprintf(what, sizeof what, "%s %ux%ux%u", name, batch, tokens, cols);
    auto at = [&](size_t row, size_t c) { return (double)to_float(prologue[row * cols + c]); };
    for (unsigned int r = 0; r < rows; ++r) {
        const unsigned int id = std::min(ids[r], vocabulary - 1), position = r % tokens;
        std::vector<double> v(cols);
        for (unsigned int c = 0; c < cols; ++c) v[c] = (double)to_float(words[(size_t)id * cols + c]) + at(position, c);
        expect_normalized(what, r, v, [&](size_t c) { return at(positions, c); }, [&](size_t c) { return at(positions + 1, c); }, got.data() + (size_t)r * cols, epsilon, tolerance);
    }
}

template <typename T>
using BiasKernel = void (*)(T*, const T*, unsigned int, unsigned int, int);

// `values_per_thread`: 1 for bias_activation, 16 bytes' worth for the vectorized kernel.
template <typename T>
static void check_bias_activation(const char* name, BiasKernel<T> kernel, unsigned int values_per_thread, unsigned int rows, unsigned int cols, unsigned int row_blocks, int gelu, double tolerance)
{
    const auto drawn = random_values((size_t)rows * cols, 2.0f);
    const auto drawn_bias = random_values(cols, 1.0f);
    std::vector<T> x(drawn.size()), bias(cols);  // 16-byte aligned (operator new), exactly as long
    for (size_t i = 0; i < x.size(); ++i) x[i] = from_float<T>(drawn[i]);
    for (size_t i = 0; i < cols; ++i) bias[i] = from_float<T>(drawn_bias[i]);
    auto got = x;
    const unsigned int threads = 64, per_row = (cols + values_per_thread - 1) / values_per_thread;
    launch({(per_row + threads - 1) / threads, row_blocks, 1}, {threads, 1, 1}, [&] { kernel(got.data(), bias.data(), rows, cols, gelu); });
    char what[96];
    std::snprintf(what, sizeof what, "%s %ux%u gelu %d", name, rows, cols, gelu);
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = (double)to_float(x[i]) + to_float(bias[i % cols]);
        expect_close(what, i, to_float(got[i]), gelu ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) : v, tolerance);
    }
}

static void check_masked_softmax(const std::vector<unsigned int>& lengths, unsigned int rows_per_sequence, unsigned int columns)
{
    const unsigned int rows = lengths.size() * rows_per_sequence;
    const auto scores = random_values((size_t)rows * columns, 4.0f);
    auto got = scores;
    const unsigned int threads = 64;
    launch({(rows * 32 + threads - 1) / threads, 1, 1}, {threads, 1, 1}, [&] { masked_softmax_f32(got.data(), lengths.data(), rows, rows_per_sequence, columns); });
    for (unsigned int r = 0; r < rows; ++r) {
        const unsigned int length = std::min(lengths[r / rows_per_sequence], columns);
        double maximum = -INFINITY, total = 0;
        for (unsigned int c = 0; c < length; ++c) maximum = std::max(maximum, (double)scores[(size_t)r * columns + c]);
        for (unsigned int c = 0; c < length; ++c) total += std::exp(scores[(size_t)r * columns + c] - maximum);
        for (unsigned int c = 0; c < columns; ++c) {
            const size_t i = (size_t)r * columns + c;
            expect_close("masked_softmax", i, got[i], c < length ? std::exp(scores[i] - maximum) / total : 0.0, 1e-5);
        }
    }
}

template <typename T>
using PoolKernel = void (*)(const T*, const unsigned int*, unsigned int, unsigned int, unsigned int, float*);

// `blocks` fewer than the sequences: blocks (of 8 warps, the kernel's WARPS) stride over them.
template <typename T>
static void check_mean_pool(const char* name, PoolKernel<T> kernel, const std::vector<unsigned int>& lengths, unsigned int tokens, unsigned int cols, unsigned int blocks, double tolerance)
{
    const unsigned int batch = lengths.size();
    const auto drawn = random_values((size_t)batch * tokens * cols, 1.0f);
    std::vector<T> states(drawn.size());
    for (size_t i = 0; i < states.size(); ++i) states[i] = from_float<T>(drawn[i]);
    std::vector<float> got((size_t)batch * cols, NAN);  // poisoned: every value must be written
    launch({blocks, 1, 1}, {256, 1, 1}, [&] { kernel(states.data(), lengths.data(), batch, tokens, cols, got.data()); });
    char what[96];
    std::snprintf(what, sizeof what, "%s %ux%ux%u", name, batch, tokens, cols);
    for (unsigned int b = 0; b < batch; ++b) {
        const unsigned int length = std::min(lengths[b], tokens);
        std::vector<double> mean(cols, 0.0);
        for (unsigned int t = 0; t < length; ++t)
            for (unsigned int c = 0; c < cols; ++c) mean[c] += to_float(states[((size_t)b * tokens + t) * cols + c]);
        double norm = 0;
        for (auto& m : mean) {
            m /= std::max(length, 1u);
            norm += m * m;
        }
        norm = std::sqrt(norm);
        for (unsigned int c = 0; c < cols; ++c) {
            const double want = norm > 1e-12 ? mean[c] / norm : mean[c];
            expect_close(what, (size_t)b * cols + c, got[(size_t)b * cols + c], want, tolerance);
        }
    }
}

int main()
{
    check_bias_activation<float>("bias_activation_f32", bias_activation_f32, 1, 7, 383, 3, 0, 1e-5);  // row blocks stride over the rows
    check_bias_activation<float>("bias_activation_f32", bias_activation_f32, 1, 70, 65, 64, 1, 1e-5);
    check_bias_activation<__half>("bias_activation_f16", bias_activation_f16, 1, 9, 37, 4, 1, 2e-3);
    // 16 bytes a thread: 8 f16/bf16 values, 4 f32; 1,536 columns (MiniLM's feed-forward) is
    // three blocks of 64 threads in f16, 200 leaves the last block mostly idle.
    check_bias_activation<float>("bias_activation_vectorized_f32", bias_activation_vectorized_f32, 4, 7, 384, 3, 0, 1e-5);
    check_bias_activation<__half>("bias_activation_vectorized_f16", bias_activation_vectorized_f16, 8, 70, 1536, 64, 1, 2e-3);
    check_bias_activation<__half>("bias_activation_vectorized_f16", bias_activation_vectorized_f16, 8, 5, 200, 2, 0, 2e-3);
    check_bias_activation<__nv_bfloat16>("bias_activation_vectorized_bf16", bias_activation_vectorized_bf16, 8, 11, 1152, 4, 1, 1e-2);
    check_masked_softmax({37, 1, 20}, 3, 37);  // an odd row count: the last block half idle
    check_masked_softmax({65, 64}, 2, 65);
    check_layer_norm<float>("bias_residual_layer_norm_f32", bias_residual_layer_norm_f32, 1, 1, 1e-4);
    check_layer_norm<float>("bias_residual_layer_norm_f32", bias_residual_layer_norm_f32, 5, 384, 1e-4);   // a block's second warp has rows, the last block one warp idle
    check_layer_norm<float>("bias_residual_layer_norm_f32", bias_residual_layer_norm_f32, 3, 1000, 1e-4);  // 32 values per lane, the last lane's last one past the row
    check_layer_norm<float>("bias_residual_layer_norm_f32", bias_residual_layer_norm_f32, 4, 37, 1e-4);
    // Fours: 384 columns are three a lane; 1,024 eight (every register); 36 leave most lanes
    // idle; 1,000 leave the last lane's eighth four past the row.
    check_layer_norm<float>("bias_residual_layer_norm_vectorized_f32", bias_residual_layer_norm_vectorized_f32, 5, 384, 1e-4);
    check_layer_norm<float>("bias_residual_layer_norm_vectorized_f32", bias_residual_layer_norm_vectorized_f32, 3, 1024, 1e-4);
    check_layer_norm<float>("bias_residual_layer_norm_vectorized_f32", bias_residual_layer_norm_vectorized_f32, 3, 1000, 1e-4);
    check_layer_norm<__half>("bias_residual_layer_norm_vectorized_f16", bias_residual_layer_norm_vectorized_f16, 7, 384, 4e-3);
    check_layer_norm<__nv_bfloat16>("bias_residual_layer_norm_vectorized_bf16", bias_residual_layer_norm_vectorized_bf16, 3, 36, 3e-2);
    // 384 columns (MiniLM), three sequences; 1,024 (every register of a lane); 36 (most lanes idle).
    check_embed_tokens<float>("embed_tokens_f32", 3, 5, 384, 1e-4);
    check_embed_tokens<float>("embed_tokens_f32", 2, 3, 1024, 1e-4);
    check_embed_tokens<__half>("embed_tokens_f16", 3, 7, 384, 4e-3);
    check_embed_tokens<__nv_bfloat16>("embed_tokens_bf16", 2, 9, 36, 3e-2);
    // A sequence of no tokens (zeros), one longer than the batch is wide (cut at it), rows
    // wider than a lane's 32 values and than a block's 256 threads, 7 sequences over 2 blocks.
    check_mean_pool<float>("mean_pool_normalize_padded_f32", mean_pool_normalize_padded_f32, {5, 0, 9, 1, 7, 3, 2}, 7, 384, 2, 1e-5);
    check_mean_pool<float>("mean_pool_normalize_padded_f32", mean_pool_normalize_padded_f32, {3}, 4, 1000, 1, 1e-5);
    check_mean_pool<__half>("mean_pool_normalize_padded_f16", mean_pool_normalize_padded_f16, {17, 4, 33}, 33, 37, 3, 2e-3);
    check_mean_pool<__nv_bfloat16>("mean_pool_normalize_padded_bf16", mean_pool_normalize_padded_bf16, {2, 8}, 8, 64, 1, 1e-2);
    if (failures) {
        std::printf("%d values off\n", failures);
        return 1;
    }
    std::printf("encoder kernels: all values match\n");
    return 0;
}
