// Starting kernel (kfoundry import, op class rmsnorm): x / sqrt(mean(x^2) + eps) along one
// dimension, the input viewed as [outer, extent, inner]; one block per line, the sum of squares
// reduced by warp shuffles and 32 words of shared memory. Contiguous lines (inner 1) are read as
// 16-byte vectors (the elements before the first 16-byte boundary and after the last whole vector
// one by one, all of them where x's and out's lines are not aligned alike), each thread keeping
// its first ITEMS vectors in registers, so a line of up to BLOCK * ITEMS * 4 floats is read once;
// strided lines (inner > 1) element by element, twice.
// @kernel kf_rmsnorm_rows
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512, 1024] default 256
// @param ITEMS in [1, 2, 4, 8] default 2
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * ITEMS <= 4096
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

// The block's sum, in every thread.
__device__ __forceinline__ float BlockSum(float v, float* red) {
  v = WarpSum(v);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  return WarpSum(lane < BLOCK / 32 ? red[lane] : 0.0f);
}

template <typename T, typename U>
__device__ __forceinline__ void RmsNormRows(const T* __restrict__ x, U* __restrict__ y,
                                            long long extent, long long inner, float eps) {
  constexpr int kPer = 16 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  __shared__ float red[32];
  const int t = threadIdx.x;
  const long long line = blockIdx.x;
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
    const long long c = t + (long long)i * BLOCK;
    if (c < sp.nvec) {
      cache[i] = LoadPack(xv + c * kPer);
      ss = SumSq<kPer>(cache[i], ss);
    }
  }
  for (long long c = t + (long long)ITEMS * BLOCK; c < sp.nvec; c += BLOCK)
    ss = SumSq<kPer>(LoadPack(xv + c * kPer), ss);
  const long long ns = sp.scalars(extent);
  for (long long k = t; k < ns; k += BLOCK) {
    const float v = static_cast<float>(xr[sp.scalar_at(k) * inner]);
    ss = fmaf(v, v, ss);
  }
  const float inv = rsqrtf(BlockSum(ss, red) / (float)extent + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = t + (long long)i * BLOCK;
    if (c < sp.nvec) StorePack(yv + c * kPer, Scaled<kPer, T, U>(cache[i], inv));
  }
  for (long long c = t + (long long)ITEMS * BLOCK; c < sp.nvec; c += BLOCK)
    StorePack(yv + c * kPer, Scaled<kPer, T, U>(LoadPack(xv + c * kPer), inv));
  for (long long k = t; k < ns; k += BLOCK) {
    const long long j = sp.scalar_at(k) * inner;
    yr[j] = static_cast<U>(static_cast<float>(xr[j]) * inv);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_rmsnorm_rows(KF_PARAMS) {
  RmsNormRows(KF_X, KF_OUT, KF_EXTENT, KF_INNER, KF_EPS);
}
