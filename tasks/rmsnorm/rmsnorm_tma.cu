// Rows streamed through shared memory by the Hopper bulk-copy engine (cp.async.bulk, the TMA's
// one-dimensional form): a block owns RPB consecutive rows and keeps STAGES of them in flight in
// a ring of STAGE_BYTES slots, each slot's arrival counted by an mbarrier. Thread 0 starts one
// bulk copy per row (a single instruction for 8 KB), so the loads of the next rows overlap the
// reduction and the writes of this one, without the registers a prefetch would cost. Each thread
// reads its 16-byte vectors of the row from shared memory into registers, the sum of squares is
// reduced by warp shuffles and one slot per warp (one block barrier per row, the slots
// double-buffered by row parity), and y is written with 16-byte stores; w stays in registers for
// all the block's rows. After a row's barrier no thread reads its slot again, so the slot is
// refilled right then with the row STAGES further on.
// The bulk path needs C % 8 == 0 (rows of whole 16-byte vectors, 16-byte aligned), x, w and y
// 16-byte aligned, and a row of at most STAGE_BYTES; any other shape takes a plain path (one
// half at a time, the block reducing each row), chosen at run time, so every C is correct.
// HINT 1 writes y with st.global.cs (evict-first) instead of a plain store. Keep ceil_div(R, RPB)
// within the blocks the SMs hold at once (one wave: every block then streams its rows to the
// end together).
// @kernel rmsnorm_tma
// @grid ceil_div(R, RPB)
// @block BLOCK
// @param BLOCK in [128, 256, 384, 512] default 256
// @param RPB in [2, 4, 8, 12, 16, 24, 32, 48, 64] default 32
// @param STAGES in [2, 3, 4, 5] default 4
// @param STAGE_BYTES in [2048, 4096, 8192, 9216, 10240, 12288] default 8192
// @param HINT in [0, 1] default 0
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

__device__ __forceinline__ float SumSqPair(unsigned u, float s) {
  const float2 f = __half22float2(AsH2(u));
  return fmaf(f.y, f.y, fmaf(f.x, f.x, s));
}

__device__ __forceinline__ float SumSq(uint4 v, float s) {
  return SumSqPair(v.w, SumSqPair(v.z, SumSqPair(v.y, SumSqPair(v.x, s))));
}

__device__ __forceinline__ unsigned ScalePair(unsigned u, unsigned g, float inv) {
  const float2 f = __half22float2(AsH2(u)), m = __half22float2(AsH2(g));
  return AsU(__floats2half2_rn(f.x * inv * m.x, f.y * inv * m.y));
}

__device__ __forceinline__ uint4 Scale(uint4 v, uint4 g, float inv) {
  uint4 o;
  o.x = ScalePair(v.x, g.x, inv);
  o.y = ScalePair(v.y, g.y, inv);
  o.z = ScalePair(v.z, g.z, inv);
  o.w = ScalePair(v.w, g.w, inv);
  return o;
}

__device__ __forceinline__ void Store(uint4* p, uint4 v) {
#if HINT == 1
  __stcs(p, v);
#else
  *p = v;
#endif
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The sum over the block, for every thread: one barrier; `red` must not be written again before
// every thread has passed another barrier (the callers alternate two of them).
__device__ __forceinline__ float BlockSum(float v, float* red) {
  v = WarpSum(v);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  return WarpSum(lane < BLOCK / 32 ? red[lane] : 0.0f);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    rmsnorm_tma(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ y,
                int R, int C, float eps) {
  __shared__ __align__(128) unsigned char ring[STAGES][STAGE_BYTES];
  __shared__ __align__(8) unsigned long long full[STAGES];
  __shared__ float red[2][32];
  const int t = threadIdx.x;
  const int row0 = blockIdx.x * RPB;
  const int nrows = min(RPB, R - row0);
  const unsigned row_bytes = 2u * (unsigned)C;
  const unsigned long long addr =
      (unsigned long long)x | (unsigned long long)w | (unsigned long long)y;
  const bool bulk = C % 8 == 0 && row_bytes <= STAGE_BYTES && addr % 16 == 0;

  if (!bulk) {  // the plain path: any C, any alignment
    for (int k = 0; k < nrows; ++k) {
      const __half* xr = x + (long long)(row0 + k) * C;
      __half* yr = y + (long long)(row0 + k) * C;
      float ss = 0.0f;
      for (int j = t; j < C; j += BLOCK) {
        const float v = __half2float(xr[j]);
        ss = fmaf(v, v, ss);
      }
      const float inv = rsqrtf(BlockSum(ss, red[k & 1]) / C + eps);
      for (int j = t; j < C; j += BLOCK)
        yr[j] = __float2half_rn(__half2float(xr[j]) * inv * __half2float(w[j]));
    }
    return;
  }

  const int nvec = C / 8;
  uint4 wr[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int c = t + i * BLOCK;
    if (c < nvec) wr[i] = __ldg(reinterpret_cast<const uint4*>(w) + c);
  }
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
    uint4 v[kItems];
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = t + i * BLOCK;
      if (c < nvec) {
        v[i] = sv[c];
        ss = SumSq(v[i], ss);
      }
    }
    const float total = BlockSum(ss, red[k & 1]);
    // Every thread has its part of row k in registers: the slot takes row k + STAGES.
    if (t == 0 && k + STAGES < nrows)
      BulkLoad(ring[s], x + (long long)(row0 + k + STAGES) * C, row_bytes, &full[s]);
    const float inv = rsqrtf(total / C + eps);
    uint4* yv = reinterpret_cast<uint4*>(y + (long long)(row0 + k) * C);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = t + i * BLOCK;
      if (c < nvec) Store(yv + c, Scale(v[i], wr[i], inv));
    }
  }
}
