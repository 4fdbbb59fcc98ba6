// Register-cached row, one read and one write of x: one block per row, each thread loads its
// first ITEMS vectors of 8 halves (one 16-byte load each, kept packed as fp16 in 4 registers) and
// finds their max with packed fp16 max (exact). It then sums exp(x - m_t) against its own max
// m_t, and the block merges the (max, sum) pairs online with warp shuffles and one slot per warp:
// one block barrier per row. The write recomputes each exponential (exp2 of an fma, no division)
// from the cached halves: two ex2 per element, no second read of x. Rows longer than
// BLOCK * ITEMS * 8 read the vectors past the cache again in each pass (correct, slower).
// Ragged rows are peeled: the elements before the first 16-byte aligned address of the row and
// after its last whole vector are read one by one (all of them when y is not aligned like x), so a
// row starts 16-byte aligned only when N % 8 == 0 and any N is handled at run time.
// MINB is the number of blocks an SM must hold (register cap: 65536 / (BLOCK * MINB)); HINT 1
// streams x and y past the caches (ld.global.cs / st.global.cs) instead of ld.global.nc and a
// plain store.
// @kernel softmax_regs
// @grid R
// @block BLOCK
// @param BLOCK in [256, 288, 384, 448, 512, 576, 640, 672, 768, 1024] default 576
// @param ITEMS in range(1, 17) default 7
// @param MINB in [1, 2, 3] default 2
// @param HINT in [0, 1] default 0
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
// @constraint BLOCK * MINB <= 2048
// @constraint ITEMS * 4 * MINB * BLOCK <= 49152
#include <cuda_fp16.h>

constexpr float kLowest = -3.0e38f;  // below every fp16 value, and finite
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kLowestH2 = 0xFBFFFBFFu;  // two copies of the lowest finite fp16, -65504

__device__ __forceinline__ float Ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

__device__ __forceinline__ __half2 AsH2(unsigned u) {
  return *reinterpret_cast<const __half2*>(&u);
}
__device__ __forceinline__ unsigned AsU(__half2 h) {
  return *reinterpret_cast<const unsigned*>(&h);
}

__device__ __forceinline__ uint4 Load(const uint4* p) {
#if HINT == 1
  return __ldcs(p);
#else
  return __ldg(p);
#endif
}

__device__ __forceinline__ void Store(uint4* p, uint4 v) {
#if HINT == 1
  __stcs(p, v);
#else
  *p = v;
#endif
}

// The row as [0, head) scalars, nvec 16-byte vectors from head, then scalars from tail to N.
struct RowSplit {
  int head, nvec, tail;
  __device__ int scalars(int N) const { return head + N - tail; }
  __device__ int scalar_at(int k) const { return k < head ? k : tail + (k - head); }
};

__device__ RowSplit SplitRow(const __half* xr, const __half* yr, int N) {
  const unsigned long long a = (unsigned long long)xr, b = (unsigned long long)yr;
  int head = (int)((16 - a % 16) % 16) / 2;
  if ((a ^ b) % 16 != 0 || a % 2 != 0 || head > N) head = N;  // no common vector alignment
  RowSplit s;
  s.head = head;
  s.nvec = (N - head) / 8;
  s.tail = head + s.nvec * 8;
  return s;
}

__device__ __forceinline__ __half2 MaxVec(uint4 v, __half2 m) {
  m = __hmax2(m, AsH2(v.x));
  m = __hmax2(m, AsH2(v.y));
  m = __hmax2(m, AsH2(v.z));
  return __hmax2(m, AsH2(v.w));
}

__device__ __forceinline__ float SumPair(unsigned u, float a, float s) {
  const float2 f = __half22float2(AsH2(u));
  return s + Ex2(fmaf(f.x, kLog2e, -a)) + Ex2(fmaf(f.y, kLog2e, -a));
}

// s + sum of exp2(x * log2(e) - a) over the 8 halves of v.
__device__ __forceinline__ float SumExpVec(uint4 v, float a, float s) {
  s = SumPair(v.x, a, s);
  s = SumPair(v.y, a, s);
  s = SumPair(v.z, a, s);
  return SumPair(v.w, a, s);
}

__device__ __forceinline__ unsigned OutPair(unsigned u, float c) {
  const float2 f = __half22float2(AsH2(u));
  return AsU(__floats2half2_rn(Ex2(fmaf(f.x, kLog2e, -c)), Ex2(fmaf(f.y, kLog2e, -c))));
}

// exp2(x * log2(e) - c) for the 8 halves of v, c = log2(e) * max + log2(sum): the probabilities.
__device__ __forceinline__ uint4 OutVec(uint4 v, float c) {
  uint4 o;
  o.x = OutPair(v.x, c);
  o.y = OutPair(v.y, c);
  o.z = OutPair(v.z, c);
  o.w = OutPair(v.w, c);
  return o;
}

// (m, d) <- the state of both sets: d is the sum of exp(v - m) over the values seen.
__device__ __forceinline__ void Merge(float& m, float& d, float m2, float d2) {
  const float mn = fmaxf(m, m2);
  d = d * Ex2((m - mn) * kLog2e) + d2 * Ex2((m2 - mn) * kLog2e);
  m = mn;
}

__device__ __forceinline__ void WarpMerge(float& m, float& d) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), d2 = __shfl_xor_sync(0xffffffffu, d, o);
    Merge(m, d, m2, d2);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    softmax_regs(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  __shared__ float red_m[32], red_d[32];
  const int t = threadIdx.x, lane = t & 31;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;
  const RowSplit s = SplitRow(xr, yr, N);
  const uint4* xv = reinterpret_cast<const uint4*>(xr + s.head);
  uint4* yv = reinterpret_cast<uint4*>(yr + s.head);
  const int ns = s.scalars(N);
  const int cached = ITEMS * BLOCK;  // vectors c < cached live in registers

  // One read of the row: every load is issued before the first use.
  uint4 v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < s.nvec) v[i] = Load(xv + c);
  }

  // This thread's max over its elements (kLowest when it has none).
  __half2 mh = AsH2(kLowestH2);
  bool any = false;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < s.nvec) {
      mh = MaxVec(v[i], mh);
      any = true;
    }
  }
#pragma unroll 1
  for (int c = t + cached; c < s.nvec; c += BLOCK) {
    mh = MaxVec(Load(xv + c), mh);
    any = true;
  }
  float m = any ? fmaxf(__low2float(mh), __high2float(mh)) : kLowest;
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) m = fmaxf(m, __half2float(xr[s.scalar_at(k)]));

  // This thread's sum of exp(x - m).
  const float a = m * kLog2e;
  float d = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < s.nvec) d = SumExpVec(v[i], a, d);
  }
#pragma unroll 1
  for (int c = t + cached; c < s.nvec; c += BLOCK) d = SumExpVec(Load(xv + c), a, d);
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) d += Ex2(fmaf(__half2float(xr[s.scalar_at(k)]), kLog2e, -a));

  // The row's (max, sum): merged within each warp, then across the warps (one barrier).
  WarpMerge(m, d);
  if (lane == 0) {
    red_m[t >> 5] = m;
    red_d[t >> 5] = d;
  }
  __syncthreads();
  m = lane < BLOCK / 32 ? red_m[lane] : kLowest;
  d = lane < BLOCK / 32 ? red_d[lane] : 0.0f;
  WarpMerge(m, d);
  const float c = m * kLog2e + __log2f(d);  // y = exp2(x * log2(e) - c) = exp(x - m) / d

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int e = t + i * BLOCK;
    if (e < s.nvec) Store(yv + e, OutVec(v[i], c));
  }
#pragma unroll 1
  for (int e = t + cached; e < s.nvec; e += BLOCK) Store(yv + e, OutVec(Load(xv + e), c));
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) {
    const int j = s.scalar_at(k);
    yr[j] = __float2half_rn(Ex2(fmaf(__half2float(xr[j]), kLog2e, -c)));
  }
}
