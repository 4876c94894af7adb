// CAGRA's rank-based pruning step: each row's kNN list (k distinct row ids, nearest first,
// 0xffffffff padding the end) reordered by detour count, the first `degree` kept — the CPU
// twin is kernels/src/detours.rs. A link a→c of rank j has a detour through b when a→b has
// rank i and b→c rank r with max(i, r) < j; fewer detours first, then the lower rank.
//
// One block per row (blockIdx.x). The row's list is sorted by id in shared memory (ties:
// the higher rank first, so a lookup finds the last rank as the twin's table does); the
// block's threads then share the (i, r) pairs: each reads b→c from its neighbour's list in
// global memory (consecutive r: coalesced), looks c up by binary search and counts a detour
// in shared memory; last, each link's place is the number of links ordered before it.

#define DETOUR_THREADS 128
#define DETOUR_MAX_K 128
#define NO_NEIGHBOUR 0xffffffffu

extern "C" __global__ void order_by_detours(
    const unsigned int* __restrict__ lists, int k, int degree, unsigned int* __restrict__ out)
{
    __shared__ unsigned int ids[DETOUR_MAX_K];
    __shared__ unsigned int sorted_ids[DETOUR_MAX_K];
    __shared__ int sorted_ranks[DETOUR_MAX_K];
    __shared__ unsigned int detours[DETOUR_MAX_K];
    __shared__ int length;
    const size_t row = blockIdx.x;
    const int tid = threadIdx.x;
    const unsigned int* list = lists + row * (size_t)k;
    for (int j = tid; j < k; j += blockDim.x) {
        ids[j] = list[j];
        detours[j] = 0;
    }
    __syncthreads();
    if (tid == 0) {
        int n = 0;
        while (n < k && ids[n] != NO_NEIGHBOUR) ++n;
        length = n;
    }
    __syncthreads();
    const int n = length;
    for (int j = tid; j < n; j += blockDim.x) {
        int place = 0;
        for (int other = 0; other < n; ++other)
            place += ids[other] < ids[j] || (ids[other] == ids[j] && other > j);
        sorted_ids[place] = ids[j];
        sorted_ranks[place] = j;
    }
    __syncthreads();
    if (n >= 2) {
        const int per_via = n - 1;  // r < j ≤ n - 1
        for (int pair = tid; pair < n * per_via; pair += blockDim.x) {
            const int i = pair / per_via;
            const int r = pair % per_via;
            const unsigned int onward = lists[(size_t)ids[i] * k + r];
            if (onward == NO_NEIGHBOUR) continue;
            int low = 0, high = n;
            while (low < high) {
                const int middle = (low + high) / 2;
                if (sorted_ids[middle] < onward) low = middle + 1;
                else high = middle;
            }
            if (low < n && sorted_ids[low] == onward) {
                const int j = sorted_ranks[low];
                if (j > max(i, r)) atomicAdd(&detours[j], 1u);
            }
        }
    }
    __syncthreads();
    unsigned int* kept = out + row * (size_t)degree;
    for (int j = tid; j < n; j += blockDim.x) {
        int place = 0;
        for (int other = 0; other < n; ++other)
            place += detours[other] < detours[j] || (detours[other] == detours[j] && other < j);
        if (place < degree) kept[place] = ids[j];
    }
    for (int place = n + tid; place < degree; place += blockDim.x) kept[place] = NO_NEIGHBOUR;
}
