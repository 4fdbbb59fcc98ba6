// One block per row. Each thread loads VEC halves at a time (one 2*VEC-byte load) and keeps its
// first ITEMS vectors of the row in registers, so x is read from memory once when
// C <= BLOCK * VEC * ITEMS (the default caches 4096, a Llama-7B/8B row); vectors past the cache
// are read again for the write. The sum of squares is reduced by warp shuffles, then across warps
// through 32 floats of shared memory.
// The vector path needs the row of x, the row of y and w to be 2*VEC-byte aligned (true for every
// row when C % VEC == 0); other rows are read and written one half at a time, so any C is correct.
// @kernel rmsnorm_block_vec
// @grid R
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512, 1024] default 512
// @param VEC in [2, 4, 8] default 8
// @param ITEMS in [1, 2, 4, 8] default 1
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

__device__ __forceinline__ float SumSq(const HalfVec& v, float s) {
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    s = fmaf(f.x, f.x, s);
    s = fmaf(f.y, f.y, s);
  }
  return s;
}

__device__ __forceinline__ HalfVec Scale(const HalfVec& v, const HalfVec& g, float inv) {
  HalfVec o;
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 f = __half22float2(v.h[k]);
    const float2 m = __half22float2(g.h[k]);
    o.h[k] = __floats2half2_rn(f.x * inv * m.x, f.y * inv * m.y);
  }
  return o;
}

// The sum over the block; every thread gets it.
__device__ __forceinline__ float BlockSum(float v, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? red[lane] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    rmsnorm_block_vec(const __half* __restrict__ x, const __half* __restrict__ w,
                      __half* __restrict__ y, int R, int C, float eps) {
  __shared__ float red[32];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * C;
  __half* yr = y + (long long)blockIdx.x * C;
  const unsigned long long addr =
      (unsigned long long)xr | (unsigned long long)yr | (unsigned long long)w;
  const bool vec = addr % (2 * VEC) == 0;  // the same for the whole block
  const int nvec = vec ? C / VEC : 0;      // vectors [0, nvec), then scalars [nvec * VEC, C)

  HalfVec cache[ITEMS];
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + BLOCK * i;
    if (c < nvec) {
      cache[i] = LoadVec(xr, c);
      ss = SumSq(cache[i], ss);
    }
  }
  for (int c = t + BLOCK * ITEMS; c < nvec; c += BLOCK) ss = SumSq(LoadVec(xr, c), ss);
  for (int j = nvec * VEC + t; j < C; j += BLOCK) {
    const float v = __half2float(xr[j]);
    ss = fmaf(v, v, ss);
  }
  const float inv = rsqrtf(BlockSum(ss, red) / C + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + BLOCK * i;
    if (c < nvec) StoreVec(yr, c, Scale(cache[i], LoadVec(w, c), inv));
  }
  for (int c = t + BLOCK * ITEMS; c < nvec; c += BLOCK)
    StoreVec(yr, c, Scale(LoadVec(xr, c), LoadVec(w, c), inv));
  for (int j = nvec * VEC + t; j < C; j += BLOCK)
    yr[j] = __float2half_rn(__half2float(xr[j]) * inv * __half2float(w[j]));
}
