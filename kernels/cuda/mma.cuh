// One warp's tensor-core product through PTX `mma.sync.aligned.m16n8k16` (f16 or bf16 inputs,
// f32 sums), with its fragments in plain registers, so a kernel knows which lane holds which
// element (WMMA hides it) and can turn a product's sums into the next product's input without
// going through memory. The PTX ISA's layout ("Matrix Fragments for mma.m16n8k16 with
// floating point type"), with group = lane / 4 and pair = lane % 4:
// - A [16][16], row-major, four registers of two elements: a[0] holds row group, columns
//   2 * pair and 2 * pair + 1; a[1] row group + 8, the same columns; a[2] row group, columns
//   2 * pair + 8 and + 9; a[3] row group + 8, those columns;
// - B [16][8], two registers: b[0] holds rows 2 * pair and 2 * pair + 1 of column group, b[1]
//   rows 2 * pair + 8 and + 9 of it;
// - C and D [16][8], four floats: d[0], d[1] row group, columns 2 * pair and + 1; d[2], d[3]
//   row group + 8, the same columns.
// The first of a register's two elements is its low 16 bits. So the sums of two products
// side by side (columns 0-7 and 8-15) are, rounded and packed in pairs, the A fragment of
// the 16 columns together. Needs compute capability 8.0 or later. Under the CPU emulation
// (kernels/tests/emulated/cuda_emulation.hpp) the warp's lanes swap their fragments instead.
//
// Also here, for the tiles those products read from shared memory:
// - load_matrices (PTX ldmatrix .x4): four 8x8 matrices of 16-bit elements into each lane's
//   four registers. Lane l gives the address of row l % 8 of matrix l / 8 (8 contiguous
//   elements, 16-byte aligned). Register i of lane t then holds matrix i's row t / 4,
//   elements 2 * (t % 4) and + 1 (the layout of an A or B fragment's register) or, TRANSPOSED,
//   its elements (2 * (t % 4), t / 4) and (2 * (t % 4) + 1, t / 4): a B fragment read from a
//   tile stored [k][n].
// - copy_async (PTX cp.async): 16 bytes from global to shared memory without passing through
//   registers, zeros in place of them when `copy` is false; commit_copies closes the thread's
//   group of copies, wait_copies<N> waits until at most N of its groups are still in flight.
//   A thread sees its own copies after the wait; the block, after a __syncthreads that
//   follows every thread's wait.

#pragma once

#include "element.cuh"

// Two values rounded to T (16-bit) and packed as one register, `low` first.
template <typename T>
__device__ __forceinline__ unsigned int pack_pair(float low, float high)
{
    static_assert(sizeof(T) == 2, "16-bit element types");
    const T pair[2] = {from_float<T>(low), from_float<T>(high)};
    unsigned int bits;
    memcpy(&bits, pair, sizeof bits);
    return bits;
}

// The register holding elements `at` and `at + 1` of a row of T (4-byte aligned).
template <typename T>
__device__ __forceinline__ unsigned int load_pair(const T* at)
{
    return *reinterpret_cast<const unsigned int*>(at);
}

#ifndef QUARRY_CUDA_EMULATION
// d += a · b on the warp's tensor cores (every lane of the warp calls it).
template <typename T>
__device__ void mma_m16n8k16(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2]);

template <>
__device__ __forceinline__ void mma_m16n8k16<__half>(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void mma_m16n8k16<__nv_bfloat16>(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// See above: four 8x8 matrices from shared memory, each lane's `row` one of their rows.
template <bool TRANSPOSED>
__device__ __forceinline__ void load_matrices(unsigned int (&r)[4], const void* row)
{
    const unsigned int address = (unsigned int)__cvta_generic_to_shared(row);
    if constexpr (TRANSPOSED) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address)
                     : "memory");
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address)
                     : "memory");
    }
}

// See above: 16 bytes from `global` to `shared` (both 16-byte aligned) in flight, or zeros.
__device__ __forceinline__ void copy_async(void* shared, const void* global, bool copy)
{
    const unsigned int address = (unsigned int)__cvta_generic_to_shared(shared);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(global), "r"(copy ? 16 : 0) : "memory");
}

__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int PENDING>
__device__ __forceinline__ void wait_copies()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}
#endif
