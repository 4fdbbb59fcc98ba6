// Starting kernel (kfoundry import, op class rmsnorm): x / sqrt(mean(x^2) + eps) along one
// dimension, the input viewed as [outer, extent, inner]; one thread per line, for strided lines
// (inner > 1): the threads of a warp take neighbouring lines, so their loads are contiguous. The
// sum of squares in one pass with the first CACHE elements kept in registers, then the outputs
// (elements past CACHE read again).
// @kernel kf_rmsnorm_lines
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param CACHE in [1, 16, 32, 64, 128] default 128
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * CACHE <= 16384
#include <cuda_fp16.h>

template <typename T, typename U>
__device__ __forceinline__ void RmsNormLines(const T* __restrict__ x, U* __restrict__ y,
                                             long long lines, long long extent, long long inner,
                                             float eps) {
  const long long line = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (line >= lines) return;
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  float cache[CACHE];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    cache[j] = j < extent ? static_cast<float>(xr[j * inner]) : 0.0f;
    ss = fmaf(cache[j], cache[j], ss);
  }
  for (long long j = CACHE; j < extent; ++j) {
    const float v = static_cast<float>(xr[j * inner]);
    ss = fmaf(v, v, ss);
  }
  const float inv = rsqrtf(ss / (float)extent + eps);
#pragma unroll
  for (int j = 0; j < CACHE; ++j)
    if (j < extent) yr[j * inner] = static_cast<U>(cache[j] * inv);
  for (long long j = CACHE; j < extent; ++j)
    yr[j * inner] = static_cast<U>(static_cast<float>(xr[j * inner]) * inv);
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_rmsnorm_lines(KF_PARAMS) {
  RmsNormLines(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER, KF_EPS);
}
