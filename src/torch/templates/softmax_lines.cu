// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one thread per line, for strided lines (inner > 1): the
// threads of a warp take neighbouring lines, so their loads are contiguous. A running (max, sum
// of exponentials relative to it) in one pass, the first CACHE elements kept in registers, then
// the outputs (elements past CACHE read again).
// @kernel kf_softmax_lines
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param CACHE in [1, 8, 16, 32, 64] default 16
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * CACHE <= 16384
#include <cuda_fp16.h>

__device__ __forceinline__ float NegInf() {
  return -__int_as_float(0x7f800000);
}

// (m, s) and (m2, s2), each a max and a sum of exponentials relative to it, as one.
__device__ __forceinline__ void Merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  if (mx == NegInf()) return;  // both empty
  s = s * expf(m - mx) + s2 * expf(m2 - mx);
  m = mx;
}

__device__ __forceinline__ void Push(float& m, float& s, float v) {
  if (v > m) {
    s = s * expf(m - v) + 1.0f;
    m = v;
  } else {
    s += expf(v - m);
  }
}

template <typename T, typename U>
__device__ __forceinline__ void SoftmaxLines(const T* __restrict__ x, U* __restrict__ y,
                                             long long lines, long long extent, long long inner) {
  const long long line = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (line >= lines) return;
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  float m = NegInf(), s = 0.0f;
  float cache[CACHE];
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    if (j < extent) {
      cache[j] = static_cast<float>(xr[j * inner]);
      Push(m, s, cache[j]);
    }
  }
  for (long long j = CACHE; j < extent; ++j) Push(m, s, static_cast<float>(xr[j * inner]));
  const float inv = 1.0f / s;
#pragma unroll
  for (int j = 0; j < CACHE; ++j)
    if (j < extent) yr[j * inner] = static_cast<U>(expf(cache[j] - m) * inv);
  for (long long j = CACHE; j < extent; ++j)
    yr[j * inner] = static_cast<U>(expf(static_cast<float>(xr[j * inner]) - m) * inv);
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_softmax_lines(KF_PARAMS) {
  SoftmaxLines(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER);
}
