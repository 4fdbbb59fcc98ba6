// Starting kernel (kfoundry import, op class reduction): the sum (or mean) along one dimension,
// the input viewed as [outer, extent, inner], one output per line; one block per line, reduced by
// warp shuffles and 32 words of shared memory. Contiguous lines (inner 1) are read as 16-byte
// vectors, UNROLL of them in flight per thread (the elements before the first 16-byte boundary and
// after the last whole vector one by one); strided lines (inner > 1) element by element.
// @kernel kf_reduce_rows
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512, 1024] default 256
// @param UNROLL in [1, 2, 4] default 2
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

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T, typename U>
__device__ __forceinline__ void ReduceRows(const T* __restrict__ x, U* __restrict__ y,
                                           long long extent, long long inner, float scale) {
  constexpr int kPer = 16 / sizeof(T);
  __shared__ float red[32];
  const int t = threadIdx.x;
  const long long line = blockIdx.x;
  const T* xr = x + (line / inner) * extent * inner + line % inner;
  const Split sp = inner == 1 ? SplitLine<kPer>(xr, xr, extent) : Split{extent, 0, extent};
  const T* xv = xr + sp.head;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  for (long long c = t; c < sp.nvec; c += (long long)BLOCK * UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long cu = c + (long long)u * BLOCK;
      if (cu < sp.nvec) {
        const Pack<T> p = LoadPack(xv + cu * kPer);
#pragma unroll
        for (int k = 0; k < kPer; ++k) acc[u] += static_cast<float>(p.e[k]);
      }
    }
  }
  const long long ns = sp.scalars(extent);
  for (long long k = t; k < ns; k += BLOCK)
    acc[0] += static_cast<float>(xr[sp.scalar_at(k) * inner]);
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  s = WarpSum(s);
  if ((t & 31) == 0) red[t >> 5] = s;
  __syncthreads();
  if (t < 32) {
    s = WarpSum(t < BLOCK / 32 ? red[t] : 0.0f);
    if (t == 0) y[line] = static_cast<U>(s * scale);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_reduce_rows(KF_PARAMS) {
  ReduceRows(KF_X, KF_OUT, KF_EXTENT, KF_INNER, KF_SCALE);
}
