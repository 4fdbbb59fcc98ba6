// Starting kernel (kfoundry import, op class reduction): the sum (or mean) along one dimension,
// the input viewed as [outer, extent, inner], one output per line; one thread per line, for
// strided lines (inner > 1): the threads of a warp take neighbouring lines, so their loads are
// contiguous. UNROLL independent partial sums keep that many loads in flight per thread.
// @kernel kf_reduce_lines
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param UNROLL in [1, 2, 4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

template <typename T, typename U>
__device__ __forceinline__ void ReduceLines(const T* __restrict__ x, U* __restrict__ y,
                                            long long lines, long long extent, long long inner,
                                            float scale) {
  const long long line = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (line >= lines) return;
  const T* xr = x + (line / inner) * extent * inner + line % inner;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  long long j = 0;
  for (; j + UNROLL <= extent; j += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += static_cast<float>(xr[(j + u) * inner]);
  }
  for (; j < extent; ++j) acc[0] += static_cast<float>(xr[j * inner]);
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  y[line] = static_cast<U>(s * scale);
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_reduce_lines(KF_PARAMS) {
  ReduceLines(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER, KF_SCALE);
}
