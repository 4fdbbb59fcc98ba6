// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one warp per line, WARPS lines per block, for short lines and
// many of them: each lane keeps a running (max, sum of exponentials relative to it) over its
// share, merged by warp shuffles alone (no shared memory, no block barrier); then the outputs.
// Contiguous lines (inner 1) are read as 16-byte vectors (the elements before the first 16-byte
// boundary and after the last whole vector one by one, all of them where x's and out's lines are
// not aligned alike), each lane keeping its first ITEMS vectors in registers, so a line of up to
// 32 * ITEMS * 4 floats is read once; strided lines (inner > 1) element by element, twice.
// @kernel kf_softmax_warp
// @grid ceil_div(KF_OUTER * KF_INNER, WARPS)
// @block 32 * WARPS
// @param WARPS in [1, 2, 4, 8, 16] default 4
// @param ITEMS in [1, 2, 4, 8, 16] default 4
// @constraint 32 * WARPS <= max_work_group_size
#include <cuda_fp16.h>

// 16 bytes of T, loaded and stored as one uint4 (ld/st.global.v4).
template <typename T>
struct __align__(16) Pack {
  T e[16 / sizeof(T)];
};

template <typename T>
__device__ __forceinline__ Pack<T> LoadPack(const T* p) {
  const uint4 bits = *reinterpret_cast<const uint4*>(p);
  return *reinterpret_cast<const Pack<T>*>(&bits);
}

template <typename T>
__device__ __forceinline__ void StorePack(T* p, const Pack<T>& v) {
  uint4 bits;
  memcpy(&bits, &v, 16);
  *reinterpret_cast<uint4*>(p) = bits;
}

// A line of n elements of a (read) and b (written) as [0, head) one by one, nvec vectors of kPer
// from head, then [tail, n) one by one.
struct Split {
  long long head, nvec, tail;
  __device__ long long scalars(long long n) const { return head + n - tail; }
  __device__ long long scalar_at(long long k) const { return k < head ? k : tail + (k - head); }
};

template <int kPer, typename T, typename U>
__device__ __forceinline__ Split SplitLine(const T* a, const U* b, long long n) {
  const unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
  Split s;
  s.head = (long long)(((16 - ua % 16) % 16) / sizeof(T));
  if (sizeof(T) != sizeof(U) || ua % 16 != ub % 16 || ua % sizeof(T) != 0 || s.head > n) s.head = n;
  s.nvec = (n - s.head) / kPer;
  s.tail = s.head + s.nvec * kPer;
  return s;
}

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

template <int kPer, typename T>
__device__ __forceinline__ void PushPack(float& m, float& s, const Pack<T>& p) {
  float pm = static_cast<float>(p.e[0]);
#pragma unroll
  for (int k = 1; k < kPer; ++k) pm = fmaxf(pm, static_cast<float>(p.e[k]));
  const float mx = fmaxf(m, pm);
  float ps = 0.0f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) ps += expf(static_cast<float>(p.e[k]) - mx);
  s = s * expf(m - mx) + ps;
  m = mx;
}

// The warp's (max, sum), in every lane.
__device__ __forceinline__ void WarpMerge(float& m, float& s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    Merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
}

template <typename T, typename U>
__device__ __forceinline__ void SoftmaxWarp(const T* __restrict__ x, U* __restrict__ y,
                                            long long lines, long long extent, long long inner) {
  constexpr int kPer = 16 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  const int lane = threadIdx.x & 31;
  const long long line = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (line >= lines) return;  // the whole warp: nothing below waits for another warp
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  const Split sp = inner == 1 ? SplitLine<kPer>(xr, yr, extent) : Split{extent, 0, extent};
  const T* xv = xr + sp.head;
  U* yv = yr + sp.head;

  float m = NegInf(), s = 0.0f;
  Pack<T> cache[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = lane + 32LL * i;
    if (c < sp.nvec) {
      cache[i] = LoadPack(xv + c * kPer);
      PushPack<kPer>(m, s, cache[i]);
    }
  }
  for (long long c = lane + 32LL * ITEMS; c < sp.nvec; c += 32)
    PushPack<kPer>(m, s, LoadPack(xv + c * kPer));
  const long long ns = sp.scalars(extent);
  for (long long k = lane; k < ns; k += 32)
    Push(m, s, static_cast<float>(xr[sp.scalar_at(k) * inner]));
  WarpMerge(m, s);
  const float inv = 1.0f / s;

  auto scaled = [&](const Pack<T>& v) {
    Pack<U> o;
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      o.e[k] = static_cast<U>(expf(static_cast<float>(v.e[k]) - m) * inv);
    return o;
  };
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = lane + 32LL * i;
    if (c < sp.nvec) StorePack(yv + c * kPer, scaled(cache[i]));
  }
  for (long long c = lane + 32LL * ITEMS; c < sp.nvec; c += 32)
    StorePack(yv + c * kPer, scaled(LoadPack(xv + c * kPer)));
  for (long long k = lane; k < ns; k += 32) {
    const long long j = sp.scalar_at(k) * inner;
    yr[j] = static_cast<U>(expf(static_cast<float>(xr[j]) - m) * inv);
  }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) kf_softmax_warp(KF_PARAMS) {
  SoftmaxWarp(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER);
}
