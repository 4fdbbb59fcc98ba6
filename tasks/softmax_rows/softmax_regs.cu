// Register-cached row: one block per row, each thread loads its first ITEMS vectors of VEC
// elements once and keeps them in registers (as fp32) for the max, the exponentials and the write,
// so x is read from memory once when N <= BLOCK * ITEMS * VEC. Longer rows read the vectors past
// the cache again in each pass. Warp-shuffle reductions; ragged rows peeled as in softmax_warp_vec.
// @kernel softmax_regs
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 512
// @param VEC in [2, 4, 8] default 8
// @param ITEMS in [1, 2, 4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * VEC * ITEMS <= 32768
#include <cuda_fp16.h>

constexpr float kLowest = -3.0e38f;  // below every fp16 value, and finite

struct __align__(2 * VEC) HalfVec {
  __half2 h[VEC / 2];
};

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

__device__ __forceinline__ void Unpack(const HalfVec& v, float* f) {
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k) {
    const float2 p = __half22float2(v.h[k]);
    f[2 * k] = p.x;
    f[2 * k + 1] = p.y;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    softmax_regs(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  __shared__ float red[32];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;
  const RowSplit s = SplitRow(xr, yr, N);
  const HalfVec* xv = reinterpret_cast<const HalfVec*>(xr + s.head);
  HalfVec* yv = reinterpret_cast<HalfVec*>(yr + s.head);
  const int ns = s.scalars(N);
  const int cached = ITEMS * BLOCK;  // vectors c < cached live in registers

  float v[ITEMS][VEC];
  float m = kLowest;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < s.nvec) {
      Unpack(xv[c], v[i]);
#pragma unroll
      for (int k = 0; k < VEC; ++k) m = fmaxf(m, v[i][k]);
    }
  }
  for (int c = t + cached; c < s.nvec; c += BLOCK) {
    float f[VEC];
    Unpack(xv[c], f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) m = fmaxf(m, f[k]);
  }
  for (int k = t; k < ns; k += BLOCK) m = fmaxf(m, __half2float(xr[s.scalar_at(k)]));
  m = BlockMax(m, red);

  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < s.nvec) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        v[i][k] = __expf(v[i][k] - m);
        sum += v[i][k];
      }
    }
  }
  for (int c = t + cached; c < s.nvec; c += BLOCK) {
    float f[VEC];
    Unpack(xv[c], f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) sum += __expf(f[k] - m);
  }
  for (int k = t; k < ns; k += BLOCK) sum += __expf(__half2float(xr[s.scalar_at(k)]) - m);
  const float inv = 1.0f / BlockSum(sum, red);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < s.nvec) {
      HalfVec o;
#pragma unroll
      for (int k = 0; k < VEC / 2; ++k)
        o.h[k] = __floats2half2_rn(v[i][2 * k] * inv, v[i][2 * k + 1] * inv);
      yv[c] = o;
    }
  }
  for (int c = t + cached; c < s.nvec; c += BLOCK) {
    float f[VEC];
    Unpack(xv[c], f);
    HalfVec o;
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k)
      o.h[k] = __floats2half2_rn(__expf(f[2 * k] - m) * inv, __expf(f[2 * k + 1] - m) * inv);
    yv[c] = o;
  }
  for (int k = t; k < ns; k += BLOCK) {
    const int j = s.scalar_at(k);
    yr[j] = __float2half_rn(__expf(__half2float(xr[j]) - m) * inv);
  }
}
