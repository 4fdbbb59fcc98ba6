// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one block per line. Each thread keeps a running (max, sum of
// exponentials relative to it) over its share of the line, merged across the block by warp
// shuffles and 32 words of shared memory; then the outputs. Contiguous lines (inner 1) are read
// as 16-byte vectors (the elements before the first 16-byte boundary and after the last whole
// vector one by one, all of them where x's and out's lines are not aligned alike), and each thread
// keeps its first ITEMS vectors in registers, so a line of up to BLOCK * ITEMS * 4 floats is read
// from memory once; strided lines (inner > 1) are read element by element, twice.
// @kernel kf_softmax_rows
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 512
// @param ITEMS in [1, 2, 4, 8] default 4
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

// The block's (max, sum), in every thread.
__device__ __forceinline__ void BlockMerge(float& m, float& s, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    Merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    red[warp] = m;
    red[32 + warp] = s;
  }
  __syncthreads();
  m = lane < BLOCK / 32 ? red[lane] : NegInf();
  s = lane < BLOCK / 32 ? red[32 + lane] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    Merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
}

template <typename T, typename U>
__device__ __forceinline__ void SoftmaxRows(const T* __restrict__ x, U* __restrict__ y,
                                            long long extent, long long inner) {
  constexpr int kPer = 16 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  __shared__ float red[64];
  const int t = threadIdx.x;
  const long long line = blockIdx.x;
  const long long base = (line / inner) * extent * inner + line % inner;
  const T* xr = x + base;
  U* yr = y + base;
  // Strided lines take the scalar path only: no vectors.
  const Split sp = inner == 1 ? SplitLine<kPer>(xr, yr, extent) : Split{extent, 0, extent};
  const T* xv = xr + sp.head;
  U* yv = yr + sp.head;

  float m = NegInf(), s = 0.0f;
  Pack<T> cache[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long c = t + (long long)i * BLOCK;
    if (c < sp.nvec) {
      cache[i] = LoadPack(xv + c * kPer);
      PushPack<kPer>(m, s, cache[i]);
    }
  }
  for (long long c = t + (long long)ITEMS * BLOCK; c < sp.nvec; c += BLOCK)
    PushPack<kPer>(m, s, LoadPack(xv + c * kPer));
  const long long ns = sp.scalars(extent);
  for (long long k = t; k < ns; k += BLOCK)
    Push(m, s, static_cast<float>(xr[sp.scalar_at(k) * inner]));
  BlockMerge(m, s, red);
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
    const long long c = t + (long long)i * BLOCK;
    if (c < sp.nvec) StorePack(yv + c * kPer, scaled(cache[i]));
  }
  for (long long c = t + (long long)ITEMS * BLOCK; c < sp.nvec; c += BLOCK)
    StorePack(yv + c * kPer, scaled(LoadPack(xv + c * kPer)));
  for (long long k = t; k < ns; k += BLOCK) {
    const long long j = sp.scalar_at(k) * inner;
    yr[j] = static_cast<U>(expf(static_cast<float>(xr[j]) - m) * inv);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_softmax_rows(KF_PARAMS) {
  SoftmaxRows(KF_X, KF_OUT, KF_EXTENT, KF_INNER);
}
