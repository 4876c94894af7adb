// Exact top-k selection: the per-query step after the cuBLAS GEMM that scores every query
// against every row. `scores` holds one contiguous row of `rows` scores per query (blockIdx.x).
// Order: higher score first, the lower row on ties — the CPU twin's order (kernels/src/topk.rs).
//
// A query's rows are split into gridDim.y contiguous slices, one block each (so that a few
// queries still fill the GPU; the host merges the slices' lists). Each of the block's threads
// keeps a sorted list of its k best over a strided share of the slice; the lists go to
// `scratch` and are merged pairwise in log2(THREADS) rounds. List j of the launch, j = query *
// gridDim.y + slice, lands at out[j * k..].

#define TOPK_THREADS 256
#define TOPK_MAX_K 128

__device__ __forceinline__ bool ranks_before(float a, unsigned long long ra, float b, unsigned long long rb) {
    return a > b || (a == b && ra < rb);
}

// The block's share of the launch: list j = query * gridDim.y + slice of the out arrays, the
// query's row of scores, and the contiguous rows [first, end) of its slice.
struct QuerySlice {
    size_t list;
    const float* row_scores;
    int first;
    int end;
};

__device__ __forceinline__ QuerySlice query_slice(const float* scores, int rows)
{
    const int query = blockIdx.x;
    const int per_slice = (rows + gridDim.y - 1) / gridDim.y;
    const int first = blockIdx.y * per_slice;
    return {(size_t)query * gridDim.y + blockIdx.y, scores + (size_t)query * rows, first, min(rows, first + per_slice)};
}

extern "C" __global__ void select_top_k(
    const float* __restrict__ scores, int rows, int k, unsigned long long row_offset,
    float* __restrict__ scratch_scores, unsigned long long* __restrict__ scratch_rows,
    float* __restrict__ out_scores, unsigned long long* __restrict__ out_rows)
{
    const int tid = threadIdx.x;
    const QuerySlice slice = query_slice(scores, rows);
    const size_t list = slice.list;
    const float* row_scores = slice.row_scores;
    const int first = slice.first;
    const int end = slice.end;

    float best[TOPK_MAX_K];
    unsigned long long best_rows[TOPK_MAX_K];
    int count = 0;
    for (int i = first + tid; i < end; i += TOPK_THREADS) {
        float s = row_scores[i];
        unsigned long long r = row_offset + (unsigned long long)i;
        if (s != s) continue;  // NaN never ranks
        if (count == k && !ranks_before(s, r, best[k - 1], best_rows[k - 1])) continue;
        int j = count < k ? count++ : k - 1;
        while (j > 0 && ranks_before(s, r, best[j - 1], best_rows[j - 1])) {
            best[j] = best[j - 1];
            best_rows[j] = best_rows[j - 1];
            --j;
        }
        best[j] = s;
        best_rows[j] = r;
    }
    // Empty slots rank last.
    for (int j = count; j < k; ++j) {
        best[j] = -INFINITY;
        best_rows[j] = ~0ull;
    }

    float* my_scores = scratch_scores + (list * TOPK_THREADS + tid) * k;
    unsigned long long* my_rows = scratch_rows + (list * TOPK_THREADS + tid) * k;
    for (int j = 0; j < k; ++j) {
        my_scores[j] = best[j];
        my_rows[j] = best_rows[j];
    }
    __syncthreads();

    for (int width = TOPK_THREADS / 2; width >= 1; width /= 2) {
        if (tid < width) {
            const float* other_scores = my_scores + (size_t)width * k;
            const unsigned long long* other_rows = my_rows + (size_t)width * k;
            int a = 0, b = 0;
            for (int j = 0; j < k; ++j) {
                if (ranks_before(my_scores[a], my_rows[a], other_scores[b], other_rows[b])) {
                    best[j] = my_scores[a];
                    best_rows[j] = my_rows[a];
                    ++a;
                } else {
                    best[j] = other_scores[b];
                    best_rows[j] = other_rows[b];
                    ++b;
                }
            }
            for (int j = 0; j < k; ++j) {
                my_scores[j] = best[j];
                my_rows[j] = best_rows[j];
            }
        }
        __syncthreads();
    }

    if (tid == 0) {
        for (int j = 0; j < k; ++j) {
            out_scores[list * k + j] = my_scores[j];
            out_rows[list * k + j] = my_rows[j];
        }
    }
}

// The same lists for a large k over short slices (the graph build's k-means lists: ~4,096
// rows, k 128), where a thread's k-long list and the pairwise merges above cost far more than
// the slice holds: the block sorts its whole slice (at most SORT_ROWS rows, the host's choice
// of gridDim.y) in shared memory, bitonically, best first, and writes the first k. NaN scores
// and the padding up to a power of two become empty slots, which rank last.
#define SORT_ROWS 4096
#define EMPTY_PLACE 0xffffffffu

extern "C" __global__ void select_top_k_sorted(
    const float* __restrict__ scores, int rows, int k, unsigned long long row_offset,
    float* __restrict__ out_scores, unsigned long long* __restrict__ out_rows)
{
    __shared__ float keys[SORT_ROWS];
    __shared__ unsigned int places[SORT_ROWS];
    const int tid = threadIdx.x;
    const QuerySlice slice = query_slice(scores, rows);
    const size_t list = slice.list;
    const float* row_scores = slice.row_scores;
    const int first = slice.first;
    const int count = max(0, slice.end - first);
    int n = 1;
    while (n < count) n <<= 1;
    for (int i = tid; i < n; i += TOPK_THREADS) {
        float s = -INFINITY;
        unsigned int place = EMPTY_PLACE;
        if (i < count) {
            const float v = row_scores[first + i];
            if (v == v) {
                s = v;
                place = (unsigned int)i;
            }
        }
        keys[i] = s;
        places[i] = place;
    }
    __syncthreads();
    for (int size = 2; size <= n; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int pair = tid; pair < n / 2; pair += TOPK_THREADS) {
                const int lo = 2 * pair - (pair & (stride - 1));
                const int hi = lo + stride;
                const bool best_first = (lo & size) == 0;
                const bool hi_ranks_first = ranks_before(keys[hi], places[hi], keys[lo], places[lo]);
                if (hi_ranks_first == best_first) {
                    const float key = keys[lo];
                    const unsigned int place = places[lo];
                    keys[lo] = keys[hi];
                    places[lo] = places[hi];
                    keys[hi] = key;
                    places[hi] = place;
                }
            }
            __syncthreads();
        }
    }
    for (int j = tid; j < k; j += TOPK_THREADS) {
        const bool found = j < n && places[j] != EMPTY_PLACE;
        out_scores[list * k + j] = found ? keys[j] : -INFINITY;
        out_rows[list * k + j] = found ? row_offset + (unsigned long long)first + places[j] : ~0ull;
    }
}
