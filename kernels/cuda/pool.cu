// Fused mean pooling over the attention mask and L2 normalization: one block per text,
// `hidden` is [rows][tokens][dim], `mask` [rows][tokens], `out` [rows][dim].
// The CPU twins are kernels/src/pool.rs mean_pool + l2_normalize.

#define POOL_THREADS 256

extern "C" __global__ void mean_pool_normalize(
    const float* __restrict__ hidden, const unsigned int* __restrict__ mask, int tokens, int dim,
    float* __restrict__ out)
{
    __shared__ float partial[POOL_THREADS];
    __shared__ float shared_count;
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const unsigned int* row_mask = mask + (size_t)row * tokens;
    if (tid == 0) {
        int count = 0;
        for (int t = 0; t < tokens; ++t) count += row_mask[t] != 0;
        shared_count = (float)(count > 0 ? count : 1);
    }
    __syncthreads();
    float square_sum = 0.0f;
    for (int j = tid; j < dim; j += POOL_THREADS) {
        float sum = 0.0f;
        for (int t = 0; t < tokens; ++t) {
            if (row_mask[t] != 0) sum += hidden[((size_t)row * tokens + t) * dim + j];
        }
        float mean = sum / shared_count;
        out[(size_t)row * dim + j] = mean;
        square_sum += mean * mean;
    }
    partial[tid] = square_sum;
    __syncthreads();
    for (int width = POOL_THREADS / 2; width > 0; width /= 2) {
        if (tid < width) partial[tid] += partial[tid + width];
        __syncthreads();
    }
    float norm = sqrtf(partial[0]);
    if (norm > 1e-12f) {
        for (int j = tid; j < dim; j += POOL_THREADS) out[(size_t)row * dim + j] /= norm;
    }
}
