// Runs kernels/cuda/topk.cu's select_top_k_sorted_lists then merge_sorted_lists on the CPU
// (cuda_emulation.hpp) over batches of lists, each list's rows scored against themselves (row
// r of a list scores the rows of its own list only), against a sorted reference per row, with
// many exact ties (the lower position ranks first) and a NaN score (never ranked). Every row of
// a list is a block, so to keep the runs short this file shrinks the block to 32 threads and a
// list's sorted slice to LIST_SLICE_ROWS = SORT_ROWS / 2 = 64 rows (the kernels take both from
// the macros; topk_kernel.cpp runs the selections at the GPU's sizes): lists of one row, of
// fewer rows than k, of whole slices and of a short last slice (of 2 rows, and of 44), so the
// blocks past a shorter list's slices write empty lists for the merge to pass over. Built and run by kernels/tests/cuda_source_emulated.rs.
#define TOPK_THREADS 32
#define SORT_ROWS 128
#include "cuda_emulation.hpp"
#include "../../cuda/topk.cu"

#include <cstdio>
#include <random>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

static void check_lists(const std::vector<int>& sizes, int k)
{
    std::uniform_int_distribution<int> level(0, 40);  // 41 distinct scores: ties everywhere
    std::vector<unsigned int> starts{0};
    std::vector<unsigned long long> score_starts;
    size_t total = 0;
    int slices = 1;
    for (int rows : sizes) {
        score_starts.push_back(total);
        total += (size_t)rows * rows;
        starts.push_back(starts.back() + rows);
        slices = std::max(slices, (rows + LIST_SLICE_ROWS - 1) / LIST_SLICE_ROWS);
    }
    std::vector<float> scores(total);
    for (auto& s : scores) s = level(rng) / 8.0f - 2.0f;
    if (total > 3) scores[total / 3] = NAN;
    const unsigned int queries = starts.back();
    std::vector<float> slice_scores((size_t)queries * slices * k), out_scores((size_t)queries * k);
    std::vector<unsigned long long> slice_rows((size_t)queries * slices * k);
    std::vector<unsigned int> out_positions((size_t)queries * k);
    launch({queries, (unsigned int)slices, 1}, {TOPK_THREADS, 1, 1}, [&] {
        select_top_k_sorted_lists(scores.data(), starts.data(), score_starts.data(), (int)sizes.size(), k,
                                  slice_scores.data(), slice_rows.data());
    });
    launch({(queries + MERGE_THREADS - 1) / MERGE_THREADS, 1, 1}, {MERGE_THREADS, 1, 1}, [&] {
        merge_sorted_lists(slice_scores.data(), slice_rows.data(), (int)queries, slices, k, out_scores.data(),
                           out_positions.data());
    });
    for (size_t l = 0; l < sizes.size(); ++l) {
        const int rows = sizes[l];
        for (int local = 0; local < rows; ++local) {
            std::vector<std::pair<float, unsigned int>> want;
            for (int r = 0; r < rows; ++r) {
                const float s = scores[score_starts[l] + (size_t)local * rows + r];
                if (s == s) want.push_back({s, (unsigned int)r});
            }
            std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
                return a.first > b.first || (a.first == b.first && a.second < b.second);
            });
            want.resize(std::min(want.size(), (size_t)k));
            bool same = true;
            for (int j = 0; j < k; ++j) {
                const size_t at = ((size_t)starts[l] + local) * k + j;
                if (j < (int)want.size())
                    same &= out_positions[at] == want[j].second && out_scores[at] == want[j].first;
                else
                    same &= out_positions[at] == EMPTY_PLACE;
            }
            if (!same && failures++ < 10)
                std::printf("k %d: list %zu of %d rows, its row %d differs\n", k, l, rows, local);
        }
    }
}

int main()
{
    check_lists({1}, 16);
    check_lists({5, 300, 1, 128, 40}, 64);  // 300 rows: 4 slices of 64 and one of 44; 128: two
    check_lists({130, 2}, 127);             // slices of 64, 64 and 2; k above a slice's rows
    check_lists({7, 64, 33}, 10);
    if (failures) {
        std::printf("%d rows off\n", failures);
        return 1;
    }
    std::printf("select_top_k_sorted_lists: all lists match\n");
    return 0;
}
