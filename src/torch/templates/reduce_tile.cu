// Starting kernel (kfoundry import, op class reduction): the sum (or mean) along one dimension,
// the input viewed as [outer, extent, inner], one output per line; a block of BX x BY threads
// takes BX neighbouring lines (contiguous along inner, so a warp's loads are) and splits their
// extent BY ways; the BY partial sums of each line are added in shared memory. For strided lines
// whose count alone does not fill the GPU, or long ones.
// @kernel kf_reduce_tile
// @grid ceil_div(KF_INNER, BX) * KF_OUTER, 1
// @block BX, BY
// @param BX in [16, 32, 64] default 32
// @param BY in [4, 8, 16, 32] default 8
// @param UNROLL in [1, 2, 4] default 4
// @constraint BX * BY <= max_work_group_size
#include <cuda_fp16.h>

template <typename T, typename U>
__device__ __forceinline__ void ReduceTile(const T* __restrict__ x, U* __restrict__ y,
                                           long long extent, long long inner, float scale) {
  __shared__ float part[BY][BX + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long tiles = (inner + BX - 1) / BX;
  const long long o = blockIdx.x / tiles, i = (blockIdx.x % tiles) * BX + tx;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  if (i < inner) {
    const T* xr = x + o * extent * inner + i;
    long long j = ty;
    for (; j + (long long)(UNROLL - 1) * BY < extent; j += (long long)BY * UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        acc[u] += static_cast<float>(xr[(j + (long long)u * BY) * inner]);
    }
    for (; j < extent; j += BY) acc[0] += static_cast<float>(xr[j * inner]);
  }
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  part[ty][tx] = s;
  __syncthreads();
  if (ty == 0 && i < inner) {
    for (int k = 1; k < BY; ++k) s += part[k][tx];
    y[o * inner + i] = static_cast<U>(s * scale);
  }
}

extern "C" __global__ void __launch_bounds__(BX* BY) kf_reduce_tile(KF_PARAMS) {
  ReduceTile(KF_X, KF_OUT, KF_EXTENT, KF_INNER, KF_SCALE);
}
