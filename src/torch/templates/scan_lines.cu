// Starting kernel (kfoundry import, op class scan): the running sum along one dimension, the input
// viewed as [outer, extent, inner]; one thread per line, in order, for strided lines (inner > 1):
// the threads of a warp take neighbouring lines, so their loads and stores are contiguous. UNROLL
// loads are issued before their sums, so that many are in flight per thread.
// @kernel kf_scan_lines
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 128
// @param UNROLL in [1, 4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

template <typename T, typename U>
__device__ __forceinline__ void ScanLines(const T* __restrict__ x, U* __restrict__ y,
                                          long long lines, long long extent, long long inner) {
  const long long line = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (line >= lines) return;
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  float run = 0.0f;
  long long j = 0;
  for (; j + UNROLL <= extent; j += UNROLL) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = static_cast<float>(xr[(j + u) * inner]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      run += v[u];
      yr[(j + u) * inner] = static_cast<U>(run);
    }
  }
  for (; j < extent; ++j) {
    run += static_cast<float>(xr[j * inner]);
    yr[j * inner] = static_cast<U>(run);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_scan_lines(KF_PARAMS) {
  ScanLines(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER);
}
