// Starting kernel (kfoundry import, op class rmsnorm): x / sqrt(mean(x^2) + eps) along one
// dimension, the input viewed as [outer, extent, inner]; one warp per line, WARPS lines per block,
// for short lines and many of them: the sum of squares reduced by warp shuffles alone. Contiguous
// lines (inner 1) are read as 16-byte vectors (the elements before the first 16-byte boundary and
// after the last whole vector one by one, all of them where x's and out's lines are not aligned
// alike), each lane keeping its first ITEMS vectors in registers, so a line of up to
// 32 * ITEMS * 4 floats is read once; strided lines (inner > 1) element by element, twice.
// @kernel kf_rmsnorm_warp
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

template <int kPer, typename T>
__device__ __forceinline__ float SumSq(const Pack<T>& p, float s) {
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const float v = static_cast<float>(p.e[k]);
    s = fmaf(v, v, s);
  }
  return s;
}

template <int kPer, typename T, typename U>
__device__ __forceinline__ Pack<U> Scaled(const Pack<T>& p, float inv) {
  Pack<U> o;
#pragma unroll
  for (int k = 0; k < kPer; ++k) o.e[k] = static_cast<U>(static_cast<float>(p.e[k]) * inv);
  return o;
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T, typename U>
__device__ __forceinline__ void RmsNormWarp(const T* __restrict__ x, U* __restrict__ y,
                                            long long lines, long long extent, long long inner,
                                            float eps) {
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

  float ss = 0.0f;
  Pack<T> cache[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = lane + 32LL * i;
    if (c < sp.nvec) {
      cache[i] = LoadPack(xv + c * kPer);
      ss = SumSq<kPer>(cache[i], ss);
    }
  }
  for (long long c = lane + 32LL * ITEMS; c < sp.nvec; c += 32)
    ss = SumSq<kPer>(LoadPack(xv + c * kPer), ss);
  const long long ns = sp.scalars(extent);
  for (long long k = lane; k < ns; k += 32) {
    const float v = static_cast<float>(xr[sp.scalar_at(k) * inner]);
    ss = fmaf(v, v, ss);
  }
  const float inv = rsqrtf(WarpSum(ss) / (float)extent + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = lane + 32LL * i;
    if (c < sp.nvec) StorePack(yv + c * kPer, Scaled<kPer, T, U>(cache[i], inv));
  }
  for (long long c = lane + 32LL * ITEMS; c < sp.nvec; c += 32)
    StorePack(yv + c * kPer, Scaled<kPer, T, U>(LoadPack(xv + c * kPer), inv));
  for (long long k = lane; k < ns; k += 32) {
    const long long j = sp.scalar_at(k) * inner;
    yr[j] = static_cast<U>(static_cast<float>(xr[j]) * inv);
  }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) kf_rmsnorm_warp(KF_PARAMS) {
  RmsNormWarp(KF_X, KF_OUT, (long long)KF_OUTER * KF_INNER, KF_EXTENT, KF_INNER, KF_EPS);
}
