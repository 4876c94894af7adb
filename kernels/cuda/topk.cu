// Exact top-k selection: the per-query step after the cuBLAS GEMM that scores every query
// against every row. `scores` holds one contiguous row of `rows` scores per query (blockIdx.x).
// Order: higher score first, the lower row on ties — the CPU twin's order (kernels/src/topk.rs).
//
// A query's rows are split into gridDim.y contiguous slices, one block each (so that a few
// queries still fill the GPU; the host merges the slices' lists). Each of the block's threads
// keeps a sorted list of its k best over a strided share of the slice; the lists go to
// `scratch` and are merged pairwise in log2(THREADS) rounds. List j of the launch, j = query *
// gridDim.y + slice, lands at out[j * k..].

#ifndef TOPK_THREADS  // smaller in an emulated test, to keep it short
#define TOPK_THREADS 256
#endif
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

// The same lists for a large k over short slices (k 128 over a few thousand rows, as the
// graph build's k-means lists, which select_top_k_sorted_lists below takes a batch at a time),
// where a thread's k-long list and the pairwise merges above cost far more than the slice holds: the block sorts its whole slice (at most SORT_ROWS rows, the host's choice
// of gridDim.y) in shared memory, bitonically, best first, and writes the first k. NaN scores
// and the padding up to a power of two become empty slots, which rank last.
#ifndef SORT_ROWS
#define SORT_ROWS 4096
#endif
#define EMPTY_PLACE 0xffffffffu

// The best k of row_scores[first, end) (at most ROWS rows, a power of two), sorted whole in
// the block's shared memory, to out_scores / out_rows (k entries each), rows numbered from
// row_offset + first. An empty range writes an empty list.
template <int ROWS>
__device__ void sort_slice_top_k(
    const float* __restrict__ row_scores, int first, int end, int k, unsigned long long row_offset,
    float* __restrict__ out_scores, unsigned long long* __restrict__ out_rows)
{
    __shared__ float keys[ROWS];
    __shared__ unsigned int places[ROWS];
    const int tid = threadIdx.x;
    const int count = max(0, end - first);
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
        out_scores[j] = found ? keys[j] : -INFINITY;
        out_rows[j] = found ? row_offset + (unsigned long long)first + places[j] : ~0ull;
    }
}

extern "C" __global__ void select_top_k_sorted(
    const float* __restrict__ scores, int rows, int k, unsigned long long row_offset,
    float* __restrict__ out_scores, unsigned long long* __restrict__ out_rows)
{
    const QuerySlice slice = query_slice(scores, rows);
    sort_slice_top_k<SORT_ROWS>(slice.row_scores, slice.first, slice.end, k, row_offset, out_scores + slice.list * k, out_rows + slice.list * k);
}

// The sorted selection for a batch of lists, each list's rows searched against themselves (the
// graph build's k-means lists, many to a launch). The launch's gridDim.x queries are the
// lists' rows one list after another: list l's are list_starts[l]..list_starts[l + 1] (lists + 1
// entries), and its scores, a row of as many scores per query as it has rows, start at
// score_starts[l]. A list's rows are split into slices of LIST_SLICE_ROWS, the last one
// shorter, blockIdx.y the slice; a block past its list's slices writes an empty list. List j =
// query * gridDim.y + slice lands at out[j * k..], rows numbered within the query's own list.
// Whole slices of a power of two: a bitonic sort pads a slice to the next one, so the even
// slices of the selection above (two of 2,050 rows for a list of 4,100) sorted 4,096 places
// each; here the same list sorts two of 2,048 and one of 4, 2.4 times fewer compare-and-swaps,
// in half the shared memory.
#define LIST_SLICE_ROWS (SORT_ROWS / 2)

extern "C" __global__ void select_top_k_sorted_lists(
    const float* __restrict__ scores, const unsigned int* __restrict__ list_starts,
    const unsigned long long* __restrict__ score_starts, int lists, int k,
    float* __restrict__ out_scores, unsigned long long* __restrict__ out_rows)
{
    const unsigned int query = blockIdx.x;
    // The last list that starts at or before the query.
    int lo = 0, hi = lists - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (list_starts[mid] <= query) lo = mid;
        else hi = mid - 1;
    }
    const int rows = (int)(list_starts[lo + 1] - list_starts[lo]);
    const int first = min(rows, (int)blockIdx.y * LIST_SLICE_ROWS);
    const int end = min(rows, first + LIST_SLICE_ROWS);
    const float* row_scores = scores + score_starts[lo] + (size_t)(query - list_starts[lo]) * rows;
    const size_t list = (size_t)query * gridDim.y + blockIdx.y;
    sort_slice_top_k<LIST_SLICE_ROWS>(row_scores, first, end, k, 0, out_scores + list * k, out_rows + list * k);
}

// Each of `queries` queries' `slices` sorted lists of k (as select_top_k_sorted_lists writes
// them) merged into its k best, one thread a query: out_scores and out_positions (a query's k
// from out[query * k..]; EMPTY_PLACE where it has fewer). The order is the selection's.
#define MERGE_THREADS 256
#define MERGE_MAX_SLICES 16

extern "C" __global__ void merge_sorted_lists(
    const float* __restrict__ in_scores, const unsigned long long* __restrict__ in_rows,
    int queries, int slices, int k, float* __restrict__ out_scores, unsigned int* __restrict__ out_positions)
{
    const int query = blockIdx.x * MERGE_THREADS + threadIdx.x;
    if (query >= queries || slices > MERGE_MAX_SLICES) return;
    int heads[MERGE_MAX_SLICES];
    for (int s = 0; s < slices; ++s) heads[s] = 0;
    const size_t first_list = (size_t)query * slices;
    for (int j = 0; j < k; ++j) {
        int best = -1;
        float best_score = -INFINITY;
        unsigned long long best_row = ~0ull;
        for (int s = 0; s < slices; ++s) {
            if (heads[s] == k) continue;
            const size_t at = (first_list + s) * k + heads[s];
            if (in_rows[at] == ~0ull) continue;
            if (best < 0 || ranks_before(in_scores[at], in_rows[at], best_score, best_row)) {
                best = s;
                best_score = in_scores[at];
                best_row = in_rows[at];
            }
        }
        if (best >= 0) ++heads[best];
        out_scores[(size_t)query * k + j] = best_score;
        out_positions[(size_t)query * k + j] = best < 0 ? EMPTY_PLACE : (unsigned int)best_row;
    }
}
