// Online softmax: one block per row reads the row once for the reduction, each thread keeping a
// running (max, sum of exponentials relative to that max) over VEC-element vectors; the pairs are
// merged with warp shuffles and one shared slot per warp. A second pass writes y: two reads of x
// instead of three. Vector loads are peeled for ragged rows as in softmax_warp_vec.
// @kernel softmax_online
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 512
// @param VEC in [2, 4, 8] default 8
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

constexpr float kLowest =
    -3.0e38f;  // below every fp16 value; finite, so exp(kLowest - kLowest) = 1

struct __align__(2 * VEC) HalfVec {
  __half2 h[VEC / 2];
};

// A HalfVec is loaded and stored as one 2*VEC-byte access (uint4 for VEC = 8: ld/st.global.v4):
// a struct of __half2 copied whole through a HalfVec pointer compiles to VEC / 2 separate 4-byte
// accesses instead (__half2's copy is member-wise).
#if VEC == 8
typedef uint4 Bits;
#elif VEC == 4
typedef uint2 Bits;
#else
typedef unsigned int Bits;
#endif

__device__ __forceinline__ HalfVec LoadVec(const HalfVec* p, int c) {
  const Bits bits = __ldg(reinterpret_cast<const Bits*>(p) + c);
  return *reinterpret_cast<const HalfVec*>(&bits);
}

__device__ __forceinline__ void StoreVec(HalfVec* p, int c, const HalfVec& v) {
  reinterpret_cast<Bits*>(p)[c] = *reinterpret_cast<const Bits*>(&v);
}

struct RowSplit {
  int head, nvec, tail;
  __device__ int scalars(int N) const { return head + N - tail; }
  __device__ int scalar_at(int k) const { return k < head ? k : tail + (k - head); }
};

__device__ RowSplit SplitRow(const __half* xr, const __half* yr, int N) {
  const unsigned long long a = (unsigned long long)xr, b = (unsigned long long)yr;
  int head = (int)((2 * VEC - a % (2 * VEC)) % (2 * VEC)) / 2;
  if ((a ^ b) % (2 * VEC) != 0 || head > N) head = N;
  RowSplit s;
  s.head = head;
  s.nvec = (N - head) / VEC;
  s.tail = head + s.nvec * VEC;
  return s;
}

// (m, d) <- the state of both sets: d is the sum of exp(v - m) over the values seen.
__device__ __forceinline__ void Merge(float& m, float& d, float m2, float d2) {
  const float mn = fmaxf(m, m2);
  d = d * __expf(m - mn) + d2 * __expf(m2 - mn);
  m = mn;
}

__device__ __forceinline__ void WarpMerge(float& m, float& d) {
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), d2 = __shfl_xor_sync(0xffffffffu, d, o);
    Merge(m, d, m2, d2);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    softmax_online(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  __shared__ float red_m[32], red_d[32];
  const int t = threadIdx.x, lane = t & 31;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;
  const RowSplit s = SplitRow(xr, yr, N);
  const HalfVec* xv = reinterpret_cast<const HalfVec*>(xr + s.head);
  HalfVec* yv = reinterpret_cast<HalfVec*>(yr + s.head);
  const int ns = s.scalars(N);

  float m = kLowest, d = 0.0f;
  for (int c = t; c < s.nvec; c += BLOCK) {
    const HalfVec v = LoadVec(xv, c);
    float f[VEC];
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 p = __half22float2(v.h[k]);
      f[2 * k] = p.x;
      f[2 * k + 1] = p.y;
    }
    float mc = f[0];
#pragma unroll
    for (int k = 1; k < VEC; ++k) mc = fmaxf(mc, f[k]);
    const float mn = fmaxf(m, mc);
    float dc = 0.0f;
#pragma unroll
    for (int k = 0; k < VEC; ++k) dc += __expf(f[k] - mn);
    d = d * __expf(m - mn) + dc;
    m = mn;
  }
  for (int k = t; k < ns; k += BLOCK) Merge(m, d, __half2float(xr[s.scalar_at(k)]), 1.0f);

  WarpMerge(m, d);
  if (lane == 0) {
    red_m[t >> 5] = m;
    red_d[t >> 5] = d;
  }
  __syncthreads();
  m = lane < BLOCK / 32 ? red_m[lane] : kLowest;
  d = lane < BLOCK / 32 ? red_d[lane] : 0.0f;
  WarpMerge(m, d);
  const float inv = 1.0f / d;

  for (int c = t; c < s.nvec; c += BLOCK) {
    const HalfVec v = LoadVec(xv, c);
    HalfVec o;
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __half22float2(v.h[k]);
      o.h[k] = __floats2half2_rn(__expf(f.x - m) * inv, __expf(f.y - m) * inv);
    }
    StoreVec(yv, c, o);
  }
  for (int k = t; k < ns; k += BLOCK) {
    const int j = s.scalar_at(k);
    yr[j] = __float2half_rn(__expf(__half2float(xr[j]) - m) * inv);
  }
}
