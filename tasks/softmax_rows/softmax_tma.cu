// Row split between registers and shared memory, so that more rows fit on an SM than registers
// alone hold (a 64 KB Llama-2 vocabulary row: 4 rows per SM at BLOCK 256, ITEMS 6, SMEM_VECS
// 2560, MINB 4, against 2 for softmax_regs). One block per row; the last min(SMEM_VECS, nvec)
// 16-byte vectors of the row are fetched into shared memory by one bulk copy (cp.async.bulk,
// the TMA's one-dimensional form, completing an mbarrier), started by thread 0 before anything
// else; the vectors before them are loaded by the threads, ITEMS per thread kept packed in
// registers (vectors past that cache are read again in each pass: long rows are correct, slower).
// Each thread takes its max with packed fp16 max, sums exp(x - m_t) against its own max, and the
// block merges the (max, sum) pairs online (warp shuffles, one slot per warp, one barrier); the
// write recomputes exp2 of an fma from registers and shared memory: one read and one write of x.
// Ragged rows are peeled as in softmax_regs (scalars before the first 16-byte aligned address
// and after the last whole vector, all of them when y is not aligned like x), at run time.
// MINB: blocks an SM must hold (register cap 65536 / (BLOCK * MINB)); HINT 1 streams the
// register part and y past the caches (ld.global.cs / st.global.cs).
// @kernel softmax_tma
// @grid R
// @block BLOCK
// @param BLOCK in [256, 320, 384, 448, 512] default 256
// @param ITEMS in range(1, 13) default 6
// @param SMEM_VECS in [1024, 1536, 2048, 2560] default 2560
// @param MINB in [1, 2, 3, 4] default 4
// @param HINT in [0, 1] default 0
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
// @constraint BLOCK * MINB <= 2048
// @constraint ITEMS * 4 * MINB * BLOCK <= 40960
// @constraint MINB * (SMEM_VECS * 16 + 1024) <= 227 * 1024
#include <cuda_fp16.h>

constexpr float kLowest = -3.0e38f;  // below every fp16 value, and finite
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kLowestH2 = 0xFBFFFBFFu;  // two copies of the lowest finite fp16, -65504

__device__ __forceinline__ float Ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

__device__ __forceinline__ unsigned SmemAddr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// Arms `bar` (count 1) for `bytes` and starts the bulk copy of `bytes` from global `src` into
// shared `dst`, whose completion counts those bytes off and completes the barrier's phase 0.
__device__ __forceinline__ void BulkLoad(void* dst, const void* src, unsigned bytes,
                                         unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SmemAddr(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(SmemAddr(dst)),
      "l"(src), "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
}

__device__ __forceinline__ void MbarWait(unsigned long long* bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 "
        "%0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(SmemAddr(bar)), "r"(parity)
        : "memory");
  } while (!done);
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
    softmax_tma(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  __shared__ __align__(128) uint4 sm[SMEM_VECS];
  __shared__ __align__(8) unsigned long long full;
  __shared__ float red_m[32], red_d[32];
  const int t = threadIdx.x, lane = t & 31;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;
  const RowSplit s = SplitRow(xr, yr, N);
  const uint4* xv = reinterpret_cast<const uint4*>(xr + s.head);
  uint4* yv = reinterpret_cast<uint4*>(yr + s.head);
  const int ns = s.scalars(N);
  const int nsm = min(SMEM_VECS, s.nvec);  // vectors [nreg, nvec) come through shared memory
  const int nreg = s.nvec - nsm;           // vectors [0, nreg) through registers
  const int cached = ITEMS * BLOCK;        // of those, c < cached stay in registers

  if (t == 0 && nsm > 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SmemAddr(&full)), "r"(1u)
                 : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    BulkLoad(sm, xv + nreg, 16u * (unsigned)nsm, &full);
  }
  // Every other thread waits on `full` only after the reduction's barrier has ordered it after
  // the initialisation; the register part is loaded meanwhile.
  uint4 v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < nreg) v[i] = Load(xv + c);
  }

  __half2 mh = AsH2(kLowestH2);
  bool any = false;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < nreg) {
      mh = MaxVec(v[i], mh);
      any = true;
    }
  }
#pragma unroll 1
  for (int c = t + cached; c < nreg; c += BLOCK) {
    mh = MaxVec(Load(xv + c), mh);
    any = true;
  }
  __syncthreads();  // the barrier is initialised (and armed) before anyone waits on it
  if (nsm > 0) MbarWait(&full, 0);
#pragma unroll 1
  for (int c = t; c < nsm; c += BLOCK) {
    mh = MaxVec(sm[c], mh);
    any = true;
  }
  float m = any ? fmaxf(__low2float(mh), __high2float(mh)) : kLowest;
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) m = fmaxf(m, __half2float(xr[s.scalar_at(k)]));

  const float a = m * kLog2e;
  float d = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < nreg) d = SumExpVec(v[i], a, d);
  }
#pragma unroll 1
  for (int c = t + cached; c < nreg; c += BLOCK) d = SumExpVec(Load(xv + c), a, d);
#pragma unroll 1
  for (int c = t; c < nsm; c += BLOCK) d = SumExpVec(sm[c], a, d);
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) d += Ex2(fmaf(__half2float(xr[s.scalar_at(k)]), kLog2e, -a));

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
    if (e < nreg) Store(yv + e, OutVec(v[i], c));
  }
#pragma unroll 1
  for (int e = t + cached; e < nreg; e += BLOCK) Store(yv + e, OutVec(Load(xv + e), c));
#pragma unroll 1
  for (int e = t; e < nsm; e += BLOCK) Store(yv + nreg + e, OutVec(sm[e], c));
#pragma unroll 1
  for (int k = t; k < ns; k += BLOCK) {
    const int j = s.scalar_at(k);
    yr[j] = __float2half_rn(Ex2(fmaf(__half2float(xr[j]), kLog2e, -c)));
  }
}
