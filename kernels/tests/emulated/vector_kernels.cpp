// Runs kernels/cuda/pool.cu, kmeans.cu and gather.cu on the CPU (cuda_emulation.hpp) against
// references: mean pooling + L2 normalization (masked tokens, an all-masked row), the nearest
// centroid per row (ties to the lower centroid, more centroids than a warp, rows not filling
// the last block) and its few nearest ones (NaN, -inf, fewer centroids than asked), the per-centroid sums and counts (atomics), and rows gathered by number
// (repeated rows, columns past one pass of the block's threads). Built and run by
// kernels/tests/cuda_source_emulated.rs.
#include "cuda_emulation.hpp"
#include "../../cuda/pool.cu"
#include "../../cuda/kmeans.cu"
#include "../../cuda/gather.cu"

#include <algorithm>
#include <cstdio>
#include <random>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

static void expect(bool ok, const char* what, size_t index)
{
    if (!ok && failures++ < 20) std::printf("%s: value %zu differs\n", what, index);
}

static void check_pool(int rows, int tokens, int dim)
{
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> hidden((size_t)rows * tokens * dim);
    for (auto& v : hidden) v = normal(rng);
    std::vector<unsigned int> mask((size_t)rows * tokens);
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < tokens; ++t) mask[(size_t)r * tokens + t] = r == 1 ? 0 : t < 1 + (r * 7 + 3) % tokens;
    std::vector<float> out((size_t)rows * dim, NAN);
    launch({(unsigned int)rows, 1, 1}, {POOL_THREADS, 1, 1}, [&] { mean_pool_normalize(hidden.data(), mask.data(), tokens, dim, out.data()); });
    for (int r = 0; r < rows; ++r) {
        std::vector<double> mean(dim);
        int count = 0;
        for (int t = 0; t < tokens; ++t) {
            if (!mask[(size_t)r * tokens + t]) continue;
            ++count;
            for (int j = 0; j < dim; ++j) mean[j] += hidden[((size_t)r * tokens + t) * dim + j];
        }
        double norm = 0;
        for (auto& m : mean) {
            m /= std::max(count, 1);
            norm += m * m;
        }
        norm = std::sqrt(norm);
        for (int j = 0; j < dim; ++j) {
            const double want = norm > 1e-12 ? mean[j] / norm : mean[j];
            expect(std::fabs(out[(size_t)r * dim + j] - want) <= 1e-5 * (1 + std::fabs(want)), "mean_pool_normalize", (size_t)r * dim + j);
        }
    }
}

static void check_kmeans(int rows, int k, int dim)
{
    std::uniform_int_distribution<int> level(0, 9);  // few distinct scores: ties
    std::vector<float> scores((size_t)rows * k);
    for (auto& s : scores) s = level(rng);
    std::vector<unsigned int> assignment(rows, 7777);
    std::vector<float> best(rows);
    const unsigned int threads = 128, warps = threads / 32;
    launch({(rows + warps - 1) / warps, 1, 1}, {threads, 1, 1}, [&] { nearest_centroid(scores.data(), rows, k, assignment.data(), best.data()); });
    for (int r = 0; r < rows; ++r) {
        const float* row = scores.data() + (size_t)r * k;
        const unsigned int want = std::max_element(row, row + k) - row;  // the first maximum
        expect(assignment[r] == want && best[r] == row[want], "nearest_centroid", r);
    }
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> data((size_t)rows * dim);
    for (auto& v : data) v = normal(rng);
    std::vector<float> sums((size_t)k * dim, 0.0f);
    std::vector<unsigned int> counts(k, 0);
    const size_t total = (size_t)rows * dim;
    launch({(unsigned int)((total + 255) / 256), 1, 1}, {256, 1, 1}, [&] { accumulate_clusters(data.data(), assignment.data(), rows, dim, sums.data(), counts.data()); });
    std::vector<double> want_sums((size_t)k * dim, 0.0);
    std::vector<unsigned int> want_counts(k, 0);
    for (int r = 0; r < rows; ++r) {
        ++want_counts[assignment[r]];
        for (int j = 0; j < dim; ++j) want_sums[(size_t)assignment[r] * dim + j] += data[(size_t)r * dim + j];
    }
    for (int c = 0; c < k; ++c) expect(counts[c] == want_counts[c], "accumulate_clusters counts", c);
    for (size_t i = 0; i < want_sums.size(); ++i) expect(std::fabs(sums[i] - want_sums[i]) <= 1e-4 * (1 + std::fabs(want_sums[i])), "accumulate_clusters sums", i);
}

// nearest_centroids against a full sort of each row's scores (higher first, then the lower
// centroid; NaN never taken, NO_CENTROID after the last centroid).
static void check_nearest(int rows, int k, int each, bool with_nan)
{
    std::uniform_int_distribution<int> level(0, 5);  // few distinct scores: ties
    std::vector<float> scores((size_t)rows * k);
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = with_nan && i % 7 == 3 ? NAN : (i % 11 == 5 ? -INFINITY : level(rng));
    std::vector<unsigned int> nearest((size_t)rows * each, 7777);
    const unsigned int threads = 128, warps = threads / 32;
    launch({(rows + warps - 1) / warps, 1, 1}, {threads, 1, 1}, [&] { nearest_centroids(scores.data(), rows, k, each, nearest.data()); });
    for (int r = 0; r < rows; ++r) {
        std::vector<std::pair<float, unsigned int>> order;
        for (int c = 0; c < k; ++c)
            if (!std::isnan(scores[(size_t)r * k + c])) order.push_back({scores[(size_t)r * k + c], (unsigned int)c});
        std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
        for (int i = 0; i < each; ++i) {
            const unsigned int want = i < (int)order.size() ? order[i].second : NO_CENTROID;
            expect(nearest[(size_t)r * each + i] == want, "nearest_centroids", (size_t)r * each + i);
        }
    }
}

static void check_gather(int rows, int count, int dim)
{
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::uniform_int_distribution<unsigned int> pick(0, rows - 1);
    std::vector<float> data((size_t)rows * dim);
    for (auto& x : data) x = value(rng);
    std::vector<unsigned int> listed(count);
    for (auto& row : listed) row = pick(rng);
    if (count > 1) listed[1] = listed[0];
    std::vector<float> out((size_t)count * dim, 12345.0f);
    launch({(unsigned int)count, 1, 1}, {GATHER_THREADS, 1, 1}, [&] { gather_rows(data.data(), listed.data(), dim, out.data()); });
    for (int i = 0; i < count; ++i)
        for (int j = 0; j < dim; ++j)
            expect(out[(size_t)i * dim + j] == data[(size_t)listed[i] * dim + j], "gather_rows", (size_t)i * dim + j);
}

int main()
{
    check_pool(3, 7, 384);   // row 1 all masked: zeros, not NaN
    check_pool(2, 5, 300);   // dim past one pass of the block's threads
    check_kmeans(1, 1, 3);
    check_kmeans(37, 45, 17);  // 45 centroids: two per lane for some; 37 rows: the last block part idle
    check_nearest(37, 45, 2, false);   // two centroids a row, more centroids than a warp
    check_nearest(9, 300, 8, true);    // the most a row keeps, NaN and -inf scores
    check_nearest(5, 3, 5, false);     // fewer centroids than asked: padded
    check_nearest(33, 1, 1, true);     // one centroid, sometimes NaN: none
    check_gather(50, 1, 7);
    check_gather(300, 97, 384);  // 384 columns: three passes of the block's threads
    if (failures) {
        std::printf("%d values off\n", failures);
        return 1;
    }
    std::printf("vector kernels: all values match\n");
    return 0;
}
