// One row per warp, WARPS rows per block. Each lane loads VEC halves at a time (one 2*VEC-byte
// load) and keeps its first CACHE vectors of the row in registers, so x is read from memory once
// when C <= 32 * VEC * CACHE (the default caches 4608 halves, a whole 4544-wide Falcon-7B row).
// Exact two-pass statistics from the registers: the mean, then the mean of the squared
// deviations; vectors past the cache are read again in each pass. Warp-shuffle reductions only:
// no shared memory, no barrier.
// The vector path needs the row of x, the row of y, w and b to be 2*VEC-byte aligned (true for
// every row when C % VEC == 0); other rows are read and written one half at a time, so any C is
// correct.
// @kernel layernorm_warp_regs
// @grid ceil_div(R, WARPS)
// @block 32 * WARPS
// @param WARPS in [1, 2, 4, 8, 16] default 4
// @param VEC in [2, 4, 8] default 8
// @param CACHE in [1, 2, 4, 8, 12, 16, 18, 20, 24] default 18
// @constraint 32 * WARPS <= max_work_group_size
// @constraint 32 * VEC * CACHE <= 6144
// @constraint VEC <= 8
#include <cuda_fp16.h>

// VEC halves as __half2 pairs for the arithmetic, loaded and stored as one 2*VEC-byte access
// (uint4 for VEC = 8: ld/st.global.v4). A struct of __half2 read or written whole through a
// HalfVec pointer compiles to VEC / 2 separate 4-byte accesses instead.
struct __align__(2 * VEC) HalfVec {
  __half2 h[VEC / 2];
};
#if VEC == 8
typedef uint4 Bits;
#elif VEC == 4
typedef uint2 Bits;
#else
typedef unsigned int Bits;
#endif

__device__ __forceinline__ HalfVec LoadVec(const __half* __restrict__ p, int c) {
  const Bits bits = reinterpret_cast<const Bits*>(p)[c];
  return *reinterpret_cast<const HalfVec*>(&bits);
}

__device__ __forceinline__ void StoreVec(__half* __restrict__ p, int c, const HalfVec& v) {
  reinterpret_cast<Bits*>(p)[c] = *reinterpret_cast<const Bits*>(&v);
}

__device__ __forceinline__ float Sum(const HalfVec& v, float s) {
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    s += f.x + f.y;
  }
  return s;
}

__device__ __forceinline__ float SumSqDev(const HalfVec& v, float mean, float s) {
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    const float dx = f.x - mean, dy = f.y - mean;
    s = fmaf(dx, dx, s);
    s = fmaf(dy, dy, s);
  }
  return s;
}

__device__ __forceinline__ HalfVec Norm(const HalfVec& v, const HalfVec& g, const HalfVec& h,
                                        float mean, float rstd) {
  HalfVec o;
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    const float2 m = __half22float2(g.h[k]);
    const float2 a = __half22float2(h.h[k]);
    o.h[k] = __floats2half2_rn((f.x - mean) * rstd * m.x + a.x, (f.y - mean) * rstd * m.y + a.y);
  }
  return o;
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    layernorm_warp_regs(const __half* __restrict__ x, const __half* __restrict__ w,
                        const __half* __restrict__ b, __half* __restrict__ y, int R, int C,
                        float eps) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (row >= R) return;  // the whole warp: row is the same for its 32 lanes
  const __half* xr = x + (long long)row * C;
  __half* yr = y + (long long)row * C;
  const unsigned long long addr = (unsigned long long)xr | (unsigned long long)yr |
                                  (unsigned long long)w | (unsigned long long)b;
  const int nvec = addr % (2 * VEC) == 0 ? C / VEC : 0;  // vectors [0, nvec), then scalars

  HalfVec cache[CACHE];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < CACHE; ++i) {
    const int c = lane + 32 * i;
    if (c < nvec) {
      cache[i] = LoadVec(xr, c);
      s = Sum(cache[i], s);
    }
  }
  for (int c = lane + 32 * CACHE; c < nvec; c += 32) s = Sum(LoadVec(xr, c), s);
  for (int j = nvec * VEC + lane; j < C; j += 32) s += __half2float(xr[j]);
  const float mean = WarpSum(s) / C;

  float q = 0.0f;
#pragma unroll
  for (int i = 0; i < CACHE; ++i) {
    if (lane + 32 * i < nvec) q = SumSqDev(cache[i], mean, q);
  }
  for (int c = lane + 32 * CACHE; c < nvec; c += 32) q = SumSqDev(LoadVec(xr, c), mean, q);
  for (int j = nvec * VEC + lane; j < C; j += 32) {
    const float d = __half2float(xr[j]) - mean;
    q = fmaf(d, d, q);
  }
  const float rstd = rsqrtf(WarpSum(q) / C + eps);

#pragma unroll
  for (int i = 0; i < CACHE; ++i) {
    const int c = lane + 32 * i;
    if (c < nvec) StoreVec(yr, c, Norm(cache[i], LoadVec(w, c), LoadVec(b, c), mean, rstd));
  }
  for (int c = lane + 32 * CACHE; c < nvec; c += 32)
    StoreVec(yr, c, Norm(LoadVec(xr, c), LoadVec(w, c), LoadVec(b, c), mean, rstd));
  for (int j = nvec * VEC + lane; j < C; j += 32)
    yr[j] = __float2half_rn((__half2float(xr[j]) - mean) * rstd * __half2float(w[j]) +
                            __half2float(b[j]));
}
