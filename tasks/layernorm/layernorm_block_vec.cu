// One block per row. Each thread loads VEC halves at a time (one 2*VEC-byte load) and keeps its
// first ITEMS vectors of the row in registers, so x is read from memory once when
// C <= BLOCK * VEC * ITEMS (the default caches 8192, a whole Falcon-7B row of 4544); vectors past
// the cache are read again for the write. Single pass for the statistics: the sums of x - K and
// (x - K)^2 are reduced together (warp shuffles, then across warps through shared memory: one
// block barrier for both), K the row's first element, and var = E[(x-K)^2] - E[x-K]^2 in fp32
// (clamped at 0): K is a sample of the row, so |mean - K| is of the order of the standard
// deviation and the subtraction loses little, where E[x^2] - mean^2 loses precision when |mean|
// is much larger than the standard deviation.
// For Falcon-7B's 4544 (568 vectors of 8) the balanced caches are BLOCK * ITEMS = 576: 64 x 9,
// 96 x 6, 192 x 3, 288 x 2, 576 x 1.
// The vector path needs the row of x, the row of y, w and b to be 2*VEC-byte aligned (true for
// every row when C % VEC == 0); other rows are read and written one half at a time, so any C is
// correct.
// @kernel layernorm_block_vec
// @grid R
// @block BLOCK
// @param BLOCK in [64, 96, 128, 192, 256, 288, 384, 512, 576, 768, 1024] default 192
// @param VEC in [2, 4, 8] default 8
// @param ITEMS in range(1, 13) default 3
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
// @constraint BLOCK * VEC * ITEMS <= 16384
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

// s += x - shift, q += (x - shift)^2 over the VEC halves of v.
__device__ __forceinline__ void Acc(const HalfVec& v, float shift, float& s, float& q) {
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    const float dx = f.x - shift, dy = f.y - shift;
    s += dx + dy;
    q = fmaf(dx, dx, q);
    q = fmaf(dy, dy, q);
  }
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

// The sums of s and q over the block; every thread gets both.
__device__ __forceinline__ float2 BlockSum2(float s, float q, float2* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, o);
    q += __shfl_xor_sync(0xffffffffu, q, o);
  }
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = make_float2(s, q);
  __syncthreads();
  const float2 p = lane < BLOCK / 32 ? red[lane] : make_float2(0.0f, 0.0f);
  s = p.x;
  q = p.y;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, o);
    q += __shfl_xor_sync(0xffffffffu, q, o);
  }
  return make_float2(s, q);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    layernorm_block_vec(const __half* __restrict__ x, const __half* __restrict__ w,
                        const __half* __restrict__ b, __half* __restrict__ y, int R, int C,
                        float eps) {
  __shared__ float2 red[32];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * C;
  __half* yr = y + (long long)blockIdx.x * C;
  const unsigned long long addr = (unsigned long long)xr | (unsigned long long)yr |
                                  (unsigned long long)w | (unsigned long long)b;
  const int nvec = addr % (2 * VEC) == 0 ? C / VEC : 0;  // the same for the whole block

  const float shift = __half2float(__ldg(xr));
  HalfVec cache[ITEMS];
  float s = 0.0f, q = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + BLOCK * i;
    if (c < nvec) {
      cache[i] = LoadVec(xr, c);
      Acc(cache[i], shift, s, q);
    }
  }
  for (int c = t + BLOCK * ITEMS; c < nvec; c += BLOCK) Acc(LoadVec(xr, c), shift, s, q);
  for (int j = nvec * VEC + t; j < C; j += BLOCK) {
    const float v = __half2float(xr[j]) - shift;
    s += v;
    q = fmaf(v, v, q);
  }
  const float2 tot = BlockSum2(s, q, red);
  const float d = tot.x / C;
  const float mean = shift + d;
  const float rstd = rsqrtf(fmaxf(tot.y / C - d * d, 0.0f) + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + BLOCK * i;
    if (c < nvec) StoreVec(yr, c, Norm(cache[i], LoadVec(w, c), LoadVec(b, c), mean, rstd));
  }
  for (int c = t + BLOCK * ITEMS; c < nvec; c += BLOCK)
    StoreVec(yr, c, Norm(LoadVec(xr, c), LoadVec(w, c), LoadVec(b, c), mean, rstd));
  for (int j = nvec * VEC + t; j < C; j += BLOCK)
    yr[j] = __float2half_rn((__half2float(xr[j]) - mean) * rstd * __half2float(w[j]) +
                            __half2float(b[j]));
}
