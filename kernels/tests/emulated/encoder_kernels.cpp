// Runs the f32 kernels of kernels/cuda/encoder.cu on the CPU (cuda_emulation.hpp) against
// f64 references, on fresh random inputs with odd sizes: several blocks and warps, several
// key tiles, sequences of one token, lengths of 0 (clamped to 1) and padding rows.
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

static void check_layer_norm(unsigned int rows, unsigned int cols)
{
    auto x = random_values((size_t)rows * cols, 3.0f);
    for (auto& v : x) v += 20.0f;  // an offset mean
    const auto residual = random_values(x.size(), 1.0f);
    const auto params = random_values(3 * (size_t)cols, 1.0f);
    const float epsilon = 1e-12f;
    auto got = x;
    const unsigned int threads = 64, warps_per_block = threads / 32;
    launch({(rows + warps_per_block - 1) / warps_per_block, 1, 1}, {threads, 1, 1},
           [&] { bias_residual_layer_norm_f32(got.data(), residual.data(), params.data(), rows, cols, epsilon); });
    char what[96];
    std::snprintf(what, sizeof what, "bias_residual_layer_norm %ux%u", rows, cols);
    for (unsigned int r = 0; r < rows; ++r) {
        std::vector<double> v(cols);
        double mean = 0, variance = 0;
        for (unsigned int c = 0; c < cols; ++c) mean += v[c] = (double)x[r * cols + c] + params[c] + residual[r * cols + c];
        mean /= cols;
        for (unsigned int c = 0; c < cols; ++c) variance += (v[c] - mean) * (v[c] - mean);
        variance /= cols;
        for (unsigned int c = 0; c < cols; ++c) {
            const double want = (v[c] - mean) / std::sqrt(variance + epsilon) * params[cols + c] + params[2 * cols + c];
            expect_close(what, (size_t)r * cols + c, got[(size_t)r * cols + c], want, 1e-4);
        }
    }
}

static void check_bias_activation(unsigned int rows, unsigned int cols, unsigned int row_blocks, int gelu)
{
    const auto x = random_values((size_t)rows * cols, 2.0f);
    const auto bias = random_values(cols, 1.0f);
    auto got = x;
    const unsigned int threads = 64;
    launch({(cols + threads - 1) / threads, row_blocks, 1}, {threads, 1, 1}, [&] { bias_activation_f32(got.data(), bias.data(), rows, cols, gelu); });
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = (double)x[i] + bias[i % cols];
        expect_close(gelu ? "bias_activation gelu" : "bias_activation", i, got[i], gelu ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) : v, 1e-5);
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

template <int HEAD>
static void check_attention(const std::vector<unsigned int>& lengths, unsigned int tokens, unsigned int heads, unsigned int threads,
                            void (*kernel)(const float*, const unsigned int*, float*, unsigned int, unsigned int))
{
    const unsigned int batch = lengths.size(), hidden = heads * HEAD;
    const auto qkv = random_values((size_t)batch * tokens * 3 * hidden, 0.6f);
    std::vector<float> context((size_t)batch * tokens * hidden, NAN);
    launch({batch, heads, (tokens + threads - 1) / threads}, {threads, 1, 1},
           [&] { kernel(qkv.data(), lengths.data(), context.data(), tokens, heads); });
    char what[96];
    std::snprintf(what, sizeof what, "packed_attention head %d, %u sequences x %u tokens x %u heads", HEAD, batch, tokens, heads);
    auto at = [&](unsigned int b, unsigned int t, unsigned int part, unsigned int h, unsigned int d) {
        return (double)qkv[((size_t)b * tokens + t) * 3 * hidden + part * hidden + h * HEAD + d];
    };
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
                    const size_t index = ((size_t)b * tokens + t) * hidden + h * HEAD + d;
                    expect_close(what, index, context[index], want / total, 2e-5);
                }
            }
    }
}

int main()
{
    check_bias_activation(7, 383, 3, 0);  // row blocks stride over the rows
    check_bias_activation(70, 65, 64, 1);
    check_masked_softmax({37, 1, 20}, 3, 37);  // an odd row count: the last block half idle
    check_masked_softmax({65, 64}, 2, 65);
    check_layer_norm(1, 1);
    check_layer_norm(5, 384);   // a block's second warp has rows, the last block one warp idle
    check_layer_norm(3, 1000);  // 32 values per lane, the last lane's last one past the row
    check_layer_norm(4, 37);
    // 70 tokens: three key tiles, the last partial; two query blocks of 64 threads, the second
    // mostly idle; a sequence of one real token, one of length 0, one full.
    check_attention<32>({70, 1, 0, 33}, 70, 3, 64, packed_attention_32_f32);
    check_attention<32>({1}, 1, 1, 32, packed_attention_32_f32);
    check_attention<32>({32, 17}, 32, 12, 32, packed_attention_32_f32);
    check_attention<64>({40, 5}, 41, 2, 32, packed_attention_64_f32);
    if (failures) {
        std::printf("%d values off\n", failures);
        return 1;
    }
    std::printf("encoder kernels: all values match\n");
    return 0;
}
