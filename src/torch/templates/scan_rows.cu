// Starting kernel (kfoundry import, op class scan): the running sum along one dimension, the input
// viewed as [outer, extent, inner], in one launch: one block per line, the line taken in tiles of
// BLOCK * ITEMS elements. A tile is loaded coalesced into shared memory; each thread scans ITEMS
// consecutive elements in registers, the threads' totals are scanned by warp shuffles, the warps'
// totals by the first warp; the results go back through shared memory, coalesced, with the sum of
// the earlier tiles carried. x is read once and out written once.
// @kernel kf_scan_rows
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param ITEMS in [2, 4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * ITEMS <= 8192
#include <cuda_fp16.h>

#define TILE (BLOCK * ITEMS)
#define WARPS (BLOCK / 32)

// One padding word every 32, so a thread's ITEMS consecutive elements are not in one bank.
__device__ __forceinline__ int Pad(int i) {
  return i + (i >> 5);
}

template <typename T, typename U>
__device__ __forceinline__ void ScanRows(const T* __restrict__ x, U* __restrict__ y,
                                         long long extent, long long inner) {
  __shared__ float tile[TILE + TILE / 32];
  __shared__ float warp_total[WARPS], warp_prefix[WARPS];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const long long line = blockIdx.x;
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  float carry = 0.0f;  // the sum of the tiles before this one
  for (long long j0 = 0; j0 < extent; j0 += TILE) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int i = k * BLOCK + t;
      tile[Pad(i)] = j0 + i < extent ? static_cast<float>(xr[(j0 + i) * inner]) : 0.0f;
    }
    __syncthreads();
    float v[ITEMS];
    float run = 0.0f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      run += tile[Pad(t * ITEMS + k)];
      v[k] = run;
    }
    float incl = run;  // this thread's total, scanned over the warp
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float n = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += n;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      float w = lane < WARPS ? warp_total[lane] : 0.0f;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const float n = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += n;
      }
      if (lane < WARPS) warp_prefix[lane] = w;  // inclusive
    }
    __syncthreads();
    const float offset = carry + (warp > 0 ? warp_prefix[warp - 1] : 0.0f) + (incl - run);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) tile[Pad(t * ITEMS + k)] = v[k] + offset;
    carry += warp_prefix[WARPS - 1];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int i = k * BLOCK + t;
      if (j0 + i < extent) yr[(j0 + i) * inner] = static_cast<U>(tile[Pad(i)]);
    }
    __syncthreads();  // the next tile overwrites tile and the warps' prefixes
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_scan_rows(KF_PARAMS) {
  ScanRows(KF_X, KF_OUT, KF_EXTENT, KF_INNER);
}
