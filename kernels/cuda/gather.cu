// Rows of a resident matrix gathered by number: out row i = data row rows[i], for the rows of
// one of the graph build's k-means lists, searched among themselves without leaving the GPU.
// The CPU twin is gather_listed_rows in kernels/src/resident_rows.rs.
//
// One block per gathered row (blockIdx.x), its threads over the columns (consecutive: coalesced).

#define GATHER_THREADS 128

extern "C" __global__ void gather_rows(
    const float* __restrict__ data, const unsigned int* __restrict__ rows, int dim, float* __restrict__ out)
{
    const size_t i = blockIdx.x;
    const float* from = data + (size_t)rows[i] * dim;
    float* to = out + i * dim;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) to[j] = from[j];
}
