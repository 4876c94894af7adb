// Runs kernels/cuda/detours.cu's order_by_detours on the CPU (cuda_emulation.hpp) against a
// plain reference of CAGRA's detour count: random kNN lists of distinct ids (k of 2, 33 and
// the 128 maximum, lists cut short by padding, one empty, one of a single id), degree below,
// at and above the list length. Built and run by kernels/tests/cuda_source_emulated.rs.
#include "cuda_emulation.hpp"
#include "../../cuda/detours.cu"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <unordered_map>

static std::mt19937 rng(std::random_device{}());
static int failures = 0;

static std::vector<unsigned int> reference(const std::vector<unsigned int>& lists, int rows, int k, int degree)
{
    std::vector<unsigned int> kept((size_t)rows * degree, NO_NEIGHBOUR);
    for (int a = 0; a < rows; ++a) {
        const unsigned int* list = &lists[(size_t)a * k];
        int n = 0;
        while (n < k && list[n] != NO_NEIGHBOUR) ++n;
        std::unordered_map<unsigned int, int> rank;
        for (int j = 0; j < n; ++j) rank[list[j]] = j;
        std::vector<unsigned int> detours(n, 0);
        for (int i = 0; i < n; ++i)
            for (int r = 0; r < n - 1; ++r) {
                const unsigned int c = lists[(size_t)list[i] * k + r];
                if (c == NO_NEIGHBOUR) break;
                auto found = rank.find(c);
                if (found != rank.end() && found->second > std::max(i, r)) ++detours[found->second];
            }
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return detours[x] < detours[y]; });
        for (int p = 0; p < std::min(n, degree); ++p) kept[(size_t)a * degree + p] = list[order[p]];
    }
    return kept;
}

static void check(int rows, int k, int degree)
{
    std::vector<unsigned int> lists((size_t)rows * k, NO_NEIGHBOUR);
    std::vector<unsigned int> others(rows);
    std::iota(others.begin(), others.end(), 0u);
    for (int a = 0; a < rows; ++a) {
        std::shuffle(others.begin(), others.end(), rng);
        // Neighbourhoods: mostly rows near a, so lists overlap and detours exist.
        std::sort(others.begin(), others.end(), [&](unsigned int x, unsigned int y) {
            return std::abs((int)x - a) + (int)(x * 7 % 5) < std::abs((int)y - a) + (int)(y * 7 % 5);
        });
        int n = a == 0 ? 0 : a == 1 ? 1 : a % 5 == 0 ? k / 2 : k;
        n = std::min(n, rows - 1);
        int placed = 0;
        for (unsigned int id : others) {
            if (placed == n) break;
            if ((int)id == a) continue;
            lists[(size_t)a * k + placed++] = id;
        }
    }
    std::vector<unsigned int> got((size_t)rows * degree, 12345u);
    launch({(unsigned int)rows, 1, 1}, {DETOUR_THREADS, 1, 1}, [&] { order_by_detours(lists.data(), k, degree, got.data()); });
    const auto want = reference(lists, rows, k, degree);
    int reordered = 0;
    for (int a = 0; a < rows; ++a)
        reordered += !std::equal(&want[(size_t)a * degree], &want[(size_t)a * degree] + std::min(degree, k), &lists[(size_t)a * k]);
    if (k > 2 && reordered == 0 && failures++ < 10) std::printf("rows %d k %d: no list was reordered; the check checks nothing\n", rows, k);
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i] && failures++ < 10)
            std::printf("rows %d k %d degree %d: slot %zu is %u, the reference keeps %u\n", rows, k, degree, i, got[i], want[i]);
}

int main()
{
    check(12, 2, 2);
    check(40, 33, 16);
    check(40, 33, 40);
    check(150, 128, 64);
    if (failures) return 1;
    std::printf("all lists match\n");
    return 0;
}
