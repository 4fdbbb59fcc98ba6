// Rows streamed through shared memory by the Hopper bulk-copy engine (cp.async.bulk, the TMA's
// one-dimensional form): a block owns RPB consecutive rows and keeps STAGES of them in flight in
// a ring of STAGE_BYTES slots, each slot's arrival counted by an mbarrier. Thread 0 starts one
// bulk copy per row (a single instruction for a 9 KB Falcon-7B row), so the loads of the next
// rows overlap the reduction and the writes of this one, without the registers a prefetch would
// cost. Each thread reads its 16-byte vectors of the row from shared memory into registers.
// Statistics in one pass and one block barrier per row, without the cancellation of a plain sum
// and sum of squares: both sums are taken of x - K, K the row's first element (a sample of the
// row, so |mean - K| is of the order of the standard deviation), reduced together by warp
// shuffles and one slot per warp (double-buffered by row parity); var = E[(x-K)^2] - E[x-K]^2.
// y is written with 16-byte stores; w and b stay in registers for all the block's rows. After a
// row's barrier no thread reads its slot again, so the slot is refilled right then with the row
// STAGES further on.
// The bulk path needs C % 8 == 0 (rows of whole 16-byte vectors, 16-byte aligned), x, w, b and y
// 16-byte aligned, and a row of at most STAGE_BYTES; any other shape takes a plain path (one
// half at a time, the block reducing each row), chosen at run time, so every C is correct.
// HINT 1 writes y with st.global.cs (evict-first) instead of a plain store. WREG 0 reads w and b
// again (from L1) for every row instead of holding them in registers: fewer registers, more
// blocks per SM. Keep ceil_div(R, RPB) within the blocks the SMs hold at once (one wave: every
// block then streams its rows to the end together).
// @kernel layernorm_tma
// @grid ceil_div(R, RPB)
// @block BLOCK
// @param BLOCK in [128, 192, 256, 288, 384, 512] default 288
// @param RPB in [2, 4, 8, 12, 16, 24, 32, 48, 64] default 32
// @param STAGES in [2, 3, 4] default 4
// @param STAGE_BYTES in [2048, 4096, 8192, 9216, 10240, 12288] default 9216
// @param HINT in [0, 1] default 0
// @param WREG in [0, 1] default 1
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
// @constraint STAGES * STAGE_BYTES <= 45056
#include <cuda_fp16.h>

// Vectors of 8 halves per thread that a full slot holds: every row on the bulk path fits.
constexpr int kItems = (STAGE_BYTES / 16 + BLOCK - 1) / BLOCK;

__device__ __forceinline__ unsigned SmemAddr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void MbarInit(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SmemAddr(bar)), "r"(count)
               : "memory");
}

// Arms `bar` for `bytes` (this thread's one arrival) and starts the bulk copy of `bytes` from
// global `src` into shared `dst`, whose completion counts those bytes off.
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

// Waits until the phase of `bar` with this parity has completed.
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

// s += x - k, q += (x - k)^2 over the two halves of u.
__device__ __forceinline__ void AccPair(unsigned u, float k, float& s, float& q) {
  const float2 f = __half22float2(AsH2(u));
  const float dx = f.x - k, dy = f.y - k;
  s += dx + dy;
  q = fmaf(dy, dy, fmaf(dx, dx, q));
}

__device__ __forceinline__ void Acc(uint4 v, float k, float& s, float& q) {
  AccPair(v.x, k, s, q);
  AccPair(v.y, k, s, q);
  AccPair(v.z, k, s, q);
  AccPair(v.w, k, s, q);
}

__device__ __forceinline__ unsigned NormPair(unsigned u, unsigned g, unsigned h, float mean,
                                             float rstd) {
  const float2 f = __half22float2(AsH2(u)), m = __half22float2(AsH2(g)),
               a = __half22float2(AsH2(h));
  return AsU(
      __floats2half2_rn(fmaf((f.x - mean) * rstd, m.x, a.x), fmaf((f.y - mean) * rstd, m.y, a.y)));
}

__device__ __forceinline__ uint4 Norm(uint4 v, uint4 g, uint4 h, float mean, float rstd) {
  uint4 o;
  o.x = NormPair(v.x, g.x, h.x, mean, rstd);
  o.y = NormPair(v.y, g.y, h.y, mean, rstd);
  o.z = NormPair(v.z, g.z, h.z, mean, rstd);
  o.w = NormPair(v.w, g.w, h.w, mean, rstd);
  return o;
}

__device__ __forceinline__ void Store(uint4* p, uint4 v) {
#if HINT == 1
  __stcs(p, v);
#else
  *p = v;
#endif
}

__device__ __forceinline__ void WarpSum2(float& s, float& q) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, o);
    q += __shfl_xor_sync(0xffffffffu, q, o);
  }
}

// The sums of s and q over the block, for every thread: one barrier; `red` must not be written
// again before every thread has passed another barrier (the callers alternate two of them).
__device__ __forceinline__ void BlockSum2(float& s, float& q, float2* red) {
  WarpSum2(s, q);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = make_float2(s, q);
  __syncthreads();
  const float2 p = lane < BLOCK / 32 ? red[lane] : make_float2(0.0f, 0.0f);
  s = p.x;
  q = p.y;
  WarpSum2(s, q);
}

// mean and 1 / sqrt(var + eps) from the sums of x - k and (x - k)^2 over C elements.
__device__ __forceinline__ void Stats(float s, float q, float k, int C, float eps, float& mean,
                                      float& rstd) {
  const float d = s / C;
  mean = k + d;
  rstd = rsqrtf(fmaxf(q / C - d * d, 0.0f) + eps);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    layernorm_tma(const __half* __restrict__ x, const __half* __restrict__ w,
                  const __half* __restrict__ b, __half* __restrict__ y, int R, int C, float eps) {
  __shared__ __align__(128) unsigned char ring[STAGES][STAGE_BYTES];
  __shared__ __align__(8) unsigned long long full[STAGES];
  __shared__ float2 red[2][32];
  const int t = threadIdx.x;
  const int row0 = blockIdx.x * RPB;
  const int nrows = min(RPB, R - row0);
  const unsigned row_bytes = 2u * (unsigned)C;
  const unsigned long long addr =
      (unsigned long long)x | (unsigned long long)w | (unsigned long long)b | (unsigned long long)y;
  const bool bulk = C % 8 == 0 && row_bytes <= STAGE_BYTES && addr % 16 == 0;

  if (!bulk) {  // the plain path: any C, any alignment
    for (int k = 0; k < nrows; ++k) {
      const __half* xr = x + (long long)(row0 + k) * C;
      __half* yr = y + (long long)(row0 + k) * C;
      const float shift = __half2float(xr[0]);
      float s = 0.0f, q = 0.0f;
      for (int j = t; j < C; j += BLOCK) {
        const float d = __half2float(xr[j]) - shift;
        s += d;
        q = fmaf(d, d, q);
      }
      BlockSum2(s, q, red[k & 1]);
      float mean, rstd;
      Stats(s, q, shift, C, eps, mean, rstd);
      for (int j = t; j < C; j += BLOCK)
        yr[j] = __float2half_rn(
            fmaf((__half2float(xr[j]) - mean) * rstd, __half2float(w[j]), __half2float(b[j])));
    }
    return;
  }

  const int nvec = C / 8;
  const uint4* wv = reinterpret_cast<const uint4*>(w);
  const uint4* bv = reinterpret_cast<const uint4*>(b);
#if WREG == 1
  uint4 wr[kItems], br[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int c = t + i * BLOCK;
    if (c < nvec) {
      wr[i] = __ldg(wv + c);
      br[i] = __ldg(bv + c);
    }
  }
#endif
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) MbarInit(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    for (int k = 0; k < STAGES && k < nrows; ++k)
      BulkLoad(ring[k], x + (long long)(row0 + k) * C, row_bytes, &full[k]);
  }

  for (int k = 0; k < nrows; ++k) {
    const int s = k % STAGES;
    MbarWait(&full[s], (unsigned)(k / STAGES) & 1u);
    const uint4* sv = reinterpret_cast<const uint4*>(ring[s]);
    const float shift = __half2float(*reinterpret_cast<const __half*>(ring[s]));
    uint4 v[kItems];
    float sum = 0.0f, sq = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = t + i * BLOCK;
      if (c < nvec) {
        v[i] = sv[c];
        Acc(v[i], shift, sum, sq);
      }
    }
    BlockSum2(sum, sq, red[k & 1]);
    // Every thread has its part of row k in registers: the slot takes row k + STAGES.
    if (t == 0 && k + STAGES < nrows)
      BulkLoad(ring[s], x + (long long)(row0 + k + STAGES) * C, row_bytes, &full[s]);
    float mean, rstd;
    Stats(sum, sq, shift, C, eps, mean, rstd);
    uint4* yv = reinterpret_cast<uint4*>(y + (long long)(row0 + k) * C);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = t + i * BLOCK;
#if WREG == 1
      if (c < nvec) Store(yv + c, Norm(v[i], wr[i], br[i], mean, rstd));
#else
      if (c < nvec) Store(yv + c, Norm(v[i], __ldg(wv + c), __ldg(bv + c), mean, rstd));
#endif
    }
  }
}
