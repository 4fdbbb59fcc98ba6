// Starting kernel (kfoundry import, op class layernorm): (x - mean) / sqrt(var + eps) * w + b over
// the normalised trailing dimensions (extent elements per line, weight and bias indexed by the
// position in the line); one block per line. The mean and the biased variance come from one pass
// of sums of (x - x[0]) and its square (shifted by the line's first element, so a large mean does
// not cancel), reduced by warp shuffles and shared memory; then the outputs. Lines are read as
// 16-byte vectors where x's, out's, weight's and bias's lines are aligned alike (elements before
// the first 16-byte boundary and after the last whole vector one by one), else element by element.
// @kernel kf_layernorm_rows
// @grid KF_OUTER
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 512
// @constraint BLOCK <= max_work_group_size
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

// A line of n elements (of x, out, weight and bias alike) as [0, head) one by one, nvec vectors of
// kPer from head, then [tail, n) one by one.
struct Split {
  long long head, nvec, tail;
  __device__ long long scalars(long long n) const { return head + n - tail; }
  __device__ long long scalar_at(long long k) const { return k < head ? k : tail + (k - head); }
};

template <int kPer, typename T, typename U, typename W, typename B>
__device__ __forceinline__ Split SplitLine(const T* a, const U* b, const W* w, const B* c,
                                           long long n) {
  const unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
  const unsigned long long uw = (unsigned long long)w, uc = (unsigned long long)c;
  Split s;
  s.head = (long long)(((16 - ua % 16) % 16) / sizeof(T));
  const bool alike = sizeof(T) == sizeof(U) && sizeof(T) == sizeof(W) && sizeof(T) == sizeof(B) &&
                     ua % 16 == ub % 16 && ua % 16 == uw % 16 && ua % 16 == uc % 16;
  if (!alike || ua % sizeof(T) != 0 || s.head > n) s.head = n;
  s.nvec = (n - s.head) / kPer;
  s.tail = s.head + s.nvec * kPer;
  return s;
}

// The sums of (v - shift) and (v - shift)^2 over a pack.
template <int kPer, typename T>
__device__ __forceinline__ void Accumulate(const Pack<T>& p, float shift, float& s1, float& s2) {
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const float d = static_cast<float>(p.e[k]) - shift;
    s1 += d;
    s2 = fmaf(d, d, s2);
  }
}

template <int kPer, typename T, typename U, typename W, typename B>
__device__ __forceinline__ Pack<U> Normalised(const Pack<T>& p, const Pack<W>& w, const Pack<B>& b,
                                              float mean, float rstd) {
  Pack<U> o;
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    o.e[k] =
        static_cast<U>((static_cast<float>(p.e[k]) - mean) * rstd * static_cast<float>(w.e[k]) +
                       static_cast<float>(b.e[k]));
  return o;
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's sums of s1 and s2, in every thread.
__device__ __forceinline__ void BlockSum2(float& s1, float& s2, float* red) {
  s1 = WarpSum(s1);
  s2 = WarpSum(s2);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    red[warp] = s1;
    red[32 + warp] = s2;
  }
  __syncthreads();
  s1 = WarpSum(lane < BLOCK / 32 ? red[lane] : 0.0f);
  s2 = WarpSum(lane < BLOCK / 32 ? red[32 + lane] : 0.0f);
}

// Writes out = (x - mean) * rstd * w + b over n elements of a line (x, y) whose position in the
// normalised shape starts at w and b.
template <typename T, typename U, typename W, typename B>
__device__ __forceinline__ void Normalise(const T* __restrict__ xr, U* __restrict__ yr,
                                          const W* __restrict__ w, const B* __restrict__ b,
                                          long long n, float mean, float rstd) {
  constexpr int kPer = 16 / sizeof(T);
  const Split sp = SplitLine<kPer>(xr, yr, w, b, n);
  for (long long c = threadIdx.x; c < sp.nvec; c += BLOCK) {
    const long long j = sp.head + c * kPer;
    StorePack(yr + j, Normalised<kPer, T, U>(LoadPack(xr + j), LoadPack(w + j), LoadPack(b + j),
                                             mean, rstd));
  }
  for (long long k = threadIdx.x; k < sp.scalars(n); k += BLOCK) {
    const long long j = sp.scalar_at(k);
    yr[j] = static_cast<U>((static_cast<float>(xr[j]) - mean) * rstd * static_cast<float>(w[j]) +
                           static_cast<float>(b[j]));
  }
}

// The shifted sums of n elements of a line, over the block's threads (not yet reduced).
template <typename T>
__device__ __forceinline__ void Sums(const T* __restrict__ xr, long long n, float shift, float& s1,
                                     float& s2) {
  constexpr int kPer = 16 / sizeof(T);
  const Split sp = SplitLine<kPer>(xr, xr, xr, xr, n);
  for (long long c = threadIdx.x; c < sp.nvec; c += BLOCK)
    Accumulate<kPer>(LoadPack(xr + sp.head + c * kPer), shift, s1, s2);
  for (long long k = threadIdx.x; k < sp.scalars(n); k += BLOCK) {
    const float d = static_cast<float>(xr[sp.scalar_at(k)]) - shift;
    s1 += d;
    s2 = fmaf(d, d, s2);
  }
}

template <typename T, typename U, typename W, typename B>
__device__ __forceinline__ void LayerNormRows(const T* __restrict__ x, const W* __restrict__ w,
                                              const B* __restrict__ b, U* __restrict__ y,
                                              long long extent, float eps) {
  __shared__ float red[64];
  const T* xr = x + (long long)blockIdx.x * extent;
  U* yr = y + (long long)blockIdx.x * extent;
  const float shift = static_cast<float>(xr[0]);
  float s1 = 0.0f, s2 = 0.0f;
  Sums(xr, extent, shift, s1, s2);
  BlockSum2(s1, s2, red);
  const float d = s1 / (float)extent;  // mean - shift
  const float var = fmaxf(s2 / (float)extent - d * d, 0.0f);
  Normalise(xr, yr, w, b, extent, shift + d, rsqrtf(var + eps));
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_layernorm_rows(KF_PARAMS) {
  LayerNormRows(KF_X, KF_WEIGHT, KF_BIAS, KF_OUT, KF_EXTENT, KF_EPS);
}
