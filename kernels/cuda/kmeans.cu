// k-means steps after the cuBLAS GEMM that scores every row against every centroid:
// the nearest centroid of each row (one warp per row; the lower centroid on ties, as the
// CPU twin), and the per-centroid sums and counts of the rows assigned to it.

extern "C" __global__ void nearest_centroid(
    const float* __restrict__ scores, int rows, int k,
    unsigned int* __restrict__ assignment, float* __restrict__ best_scores)
{
    const int warps_per_block = blockDim.x / 32;
    const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* row_scores = scores + (size_t)row * k;
    float best = -INFINITY;
    unsigned int best_c = 0xffffffffu;
    for (int c = lane; c < k; c += 32) {
        float s = row_scores[c];
        if (s > best || (s == best && (unsigned int)c < best_c)) {
            best = s;
            best_c = c;
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        float other = __shfl_down_sync(0xffffffffu, best, offset);
        unsigned int other_c = __shfl_down_sync(0xffffffffu, best_c, offset);
        if (other > best || (other == best && other_c < best_c)) {
            best = other;
            best_c = other_c;
        }
    }
    if (lane == 0) {
        assignment[row] = best_c == 0xffffffffu ? 0u : best_c;
        best_scores[row] = best;
    }
}

// The most centroids nearest_centroids keeps a row (MAX_NEAREST_CENTROIDS in nearest_centroids.rs).
#define NEAREST_MAX 8
#define NO_CENTROID 0xffffffffu

// A higher score, or the same score and a lower centroid (NaN is never better); an empty
// place is (-inf, NO_CENTROID).
__device__ __forceinline__ bool better_centroid(float score, unsigned int c, float other, unsigned int other_c)
{
    return score > other || (score == other && c < other_c);
}

// The `each` (1..NEAREST_MAX) nearest centroids of every row, best first, into
// nearest[row * each ..]: one warp per row; each lane keeps its own best `each` of the
// centroids it scans (in registers), then the warp takes the best head `each` times, the
// lane whose head was taken moving its list up. NO_CENTROID pads a row with fewer.
extern "C" __global__ void nearest_centroids(
    const float* __restrict__ scores, int rows, int k, int each, unsigned int* __restrict__ nearest)
{
    const int warps_per_block = blockDim.x / 32;
    const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* row_scores = scores + (size_t)row * k;
    float kept[NEAREST_MAX];
    unsigned int kept_c[NEAREST_MAX];
#pragma unroll
    for (int i = 0; i < NEAREST_MAX; ++i) {
        kept[i] = -INFINITY;
        kept_c[i] = NO_CENTROID;
    }
    for (int c = lane; c < k; c += 32) {
        const float s = row_scores[c];
        if (!better_centroid(s, c, kept[each - 1], kept_c[each - 1])) continue;
        // Insertion from the back, unrolled so that the lists stay in registers.
#pragma unroll
        for (int i = NEAREST_MAX - 1; i > 0; --i) {
            if (i < each && better_centroid(s, c, kept[i - 1], kept_c[i - 1])) {
                kept[i] = kept[i - 1];
                kept_c[i] = kept_c[i - 1];
            } else if (i < each && better_centroid(s, c, kept[i], kept_c[i])) {
                kept[i] = s;
                kept_c[i] = c;
            }
        }
        if (better_centroid(s, c, kept[0], kept_c[0])) {
            kept[0] = s;
            kept_c[0] = c;
        }
    }
    for (int taken = 0; taken < each; ++taken) {
        float best = kept[0];
        unsigned int best_c = kept_c[0];
        for (int offset = 16; offset > 0; offset /= 2) {
            const float other = __shfl_xor_sync(0xffffffffu, best, offset);
            const unsigned int other_c = __shfl_xor_sync(0xffffffffu, best_c, offset);
            if (better_centroid(other, other_c, best, best_c)) {
                best = other;
                best_c = other_c;
            }
        }
        if (lane == 0) nearest[(size_t)row * each + taken] = best_c;
        if (best_c != NO_CENTROID && kept_c[0] == best_c) {
#pragma unroll
            for (int i = 0; i + 1 < NEAREST_MAX; ++i) {
                kept[i] = kept[i + 1];
                kept_c[i] = kept_c[i + 1];
            }
            kept[NEAREST_MAX - 1] = -INFINITY;
            kept_c[NEAREST_MAX - 1] = NO_CENTROID;
        }
    }
}

// One thread per (row, column): sums[assignment[row]][column] += data[row][column].
extern "C" __global__ void accumulate_clusters(
    const float* __restrict__ data, const unsigned int* __restrict__ assignment, int rows, int dim,
    float* __restrict__ sums, unsigned int* __restrict__ counts)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)rows * dim) return;
    int row = (int)(i / dim);
    int column = (int)(i % dim);
    unsigned int c = assignment[row];
    atomicAdd(&sums[(size_t)c * dim + column], data[i]);
    if (column == 0) atomicAdd(&counts[c], 1u);
}
