// One block per row, three passes like the baseline (max, sum, write), but with 2*VEC-byte vector
// loads and stores and warp-shuffle reductions (one shared word per warp instead of a tree).
// Ragged rows are peeled: the elements before the first 2*VEC-byte aligned address of the row and
// those after its last whole vector are handled one by one (all of them when y is not aligned
// like x).
// @kernel softmax_warp_vec
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param VEC in [2, 4, 8] default 8
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

constexpr float kLowest = -3.0e38f;  // below every fp16 value, and finite

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

// The row as [0, head) scalars, nvec aligned vectors from head, then scalars from tail to N.
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

__device__ float BlockMax(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? red[lane] : kLowest;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // red is reused by the next reduction
  return v;
}

__device__ float BlockSum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? red[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    softmax_warp_vec(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  __shared__ float red[32];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;
  const RowSplit s = SplitRow(xr, yr, N);
  const HalfVec* xv = reinterpret_cast<const HalfVec*>(xr + s.head);
  HalfVec* yv = reinterpret_cast<HalfVec*>(yr + s.head);
  const int ns = s.scalars(N);

  float m = kLowest;
  for (int c = t; c < s.nvec; c += BLOCK) {
    const HalfVec v = LoadVec(xv, c);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __half22float2(v.h[k]);
      m = fmaxf(m, fmaxf(f.x, f.y));
    }
  }
  for (int k = t; k < ns; k += BLOCK) m = fmaxf(m, __half2float(xr[s.scalar_at(k)]));
  m = BlockMax(m, red);

  float sum = 0.0f;
  for (int c = t; c < s.nvec; c += BLOCK) {
    const HalfVec v = LoadVec(xv, c);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __half22float2(v.h[k]);
      sum += __expf(f.x - m) + __expf(f.y - m);
    }
  }
  for (int k = t; k < ns; k += BLOCK) sum += __expf(__half2float(xr[s.scalar_at(k)]) - m);
  const float inv = 1.0f / BlockSum(sum, red);

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
