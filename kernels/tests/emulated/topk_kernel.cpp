// Runs kernels/cuda/topk.cu's select_top_k and select_top_k_sorted on the CPU
// (cuda_emulation.hpp) against a sorted reference: several queries, rows split into slices
// (one block each; the last slice short or empty), k of 1, 10 and the 128 maximum, many exact
// ties (the lower row ranks first) and NaN scores (never ranked); the sorted selection also
// over slices of exactly SORT_ROWS rows and of sizes that are not powers of two. Built and run
// by kernels/tests/cuda_source_emulated.rs.
#include "cuda_emulation.hpp"
#include "../../cuda/topk.cu"

#include <cstdio>
#include <random>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

static void check(int queries, int rows, int slices, int k, unsigned long long row_offset, bool sorted = false)
{
    std::uniform_int_distribution<int> level(0, 40);  // 41 distinct scores: ties everywhere
    std::vector<float> scores((size_t)queries * rows);
    for (auto& s : scores) s = level(rng) / 8.0f - 2.0f;
    scores[rows / 2] = NAN;
    const size_t lists = (size_t)queries * slices;
    std::vector<float> scratch_scores(lists * TOPK_THREADS * k), out_scores(lists * k);
    std::vector<unsigned long long> scratch_rows(lists * TOPK_THREADS * k), out_rows(lists * k);
    launch({(unsigned int)queries, (unsigned int)slices, 1}, {TOPK_THREADS, 1, 1}, [&] {
        if (sorted)
            select_top_k_sorted(scores.data(), rows, k, row_offset, out_scores.data(), out_rows.data());
        else
            select_top_k(scores.data(), rows, k, row_offset, scratch_scores.data(), scratch_rows.data(), out_scores.data(), out_rows.data());
    });
    for (int q = 0; q < queries; ++q) {
        // What the host does: merge the slices' lists, drop empty slots, keep the k best.
        std::vector<std::pair<float, unsigned long long>> got, want;
        for (size_t i = (size_t)q * slices * k; i < (size_t)(q + 1) * slices * k; ++i)
            if (out_rows[i] != ~0ull) got.push_back({out_scores[i], out_rows[i]});
        for (int r = 0; r < rows; ++r) {
            const float s = scores[(size_t)q * rows + r];
            if (s == s) want.push_back({s, row_offset + r});
        }
        auto order = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
        std::sort(got.begin(), got.end(), order);
        std::sort(want.begin(), want.end(), order);
        got.resize(std::min(got.size(), (size_t)k));
        want.resize(std::min(want.size(), (size_t)k));
        if (got != want && failures++ < 10)
            std::printf("%s %d queries x %d rows, %d slices, k %d: query %d differs (%zu vs %zu hits)\n", sorted ? "select_top_k_sorted" : "select_top_k", queries, rows, slices, k, q, got.size(), want.size());
    }
}

int main()
{
    check(1, 1, 1, 1, 0);
    check(3, 5000, 4, 10, 7);        // 1250 rows per slice
    check(2, 9, 4, 3, 0);            // slices of 3, 3, 3 and an empty one
    check(2, 3001, 3, 128, 1u << 20);
    check(1, 700, 1, 128, 0);        // more k than a thread's share: lists partly empty
    check(2, 4096, 1, 128, 5, true);    // one full slice of SORT_ROWS
    check(3, 8193, 3, 127, 1u << 20, true);  // slices of 2731, 2731, 2731
    check(2, 9, 4, 3, 0, true);      // slices of 3, 3, 3 and an empty one
    check(1, 100, 1, 128, 0, true);  // fewer rows than k: the rest empty
    check(2, 1, 1, 1, 0, true);
    if (failures) {
        std::printf("%d lists off\n", failures);
        return 1;
    }
    std::printf("select_top_k: all lists match\n");
    return 0;
}
