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
