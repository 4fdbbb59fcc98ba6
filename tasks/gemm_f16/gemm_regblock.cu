// Register blocking on the CUDA cores: a block of (BM/TM) x (BN/TN) threads computes a BM x BN
// tile of C, each thread a TM x TN micro-tile in fp32 registers. Per K step of BK the block
// stages A (transposed, so a thread's TM values of A are contiguous) and B in shared memory as
// fp32, loading 8 halves at a time (16 bytes) when the rows are 16-byte aligned (K, N multiples
// of 8) and with guarded scalar loads otherwise; the inner loop reads float4s from shared memory
// and does TM * TN FMAs per k. C is written 4 halves (8 bytes) at a time where aligned.
// @kernel gemm_regblock
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block (BM // TM) * (BN // TN), 1
// @param BM in [64, 128] default 128
// @param BN in [64, 128] default 128
// @param BK in [8, 16, 32] default 16
// @param TM in [4, 8] default 8
// @param TN in [4, 8] default 8
// @constraint (BM // TM) * (BN // TN) <= max_work_group_size
#include <cuda_fp16.h>

#define THREADS ((BM / TM) * (BN / TN))

// Eight halves from src (16-byte aligned when vec), zeros past `left` valid elements.
__device__ __forceinline__ void load8(const __half* src, int left, bool vec, float* v) {
  if (vec && left >= 8) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(src));
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      v[2 * i] = f.x;
      v[2 * i + 1] = f.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = i < left ? __half2float(src[i]) : 0.0f;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_regblock(const __half* __restrict__ A, const __half* __restrict__ B,
                  __half* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 8 == 0) && ((size_t)A % 16 == 0);
  const bool b_vec = (N % 8 == 0) && ((size_t)B % 16 == 0);
  const bool c_vec = (N % 4 == 0) && ((size_t)C % 8 == 0);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: BM rows of BK values, in chunks of 8 along k, stored transposed.
    for (int c = tid; c < BM * BK / 8; c += THREADS) {
      const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      const int m = bm + r, k = k0 + kc;
      float v[8];
      load8(A + (long long)m * K + k, m < M ? K - k : 0, a_vec, v);
#pragma unroll
      for (int i = 0; i < 8; ++i) As[kc + i][r] = v[i];
    }
    // B tile: BK rows of BN values, in chunks of 8 along n.
    for (int c = tid; c < BK * BN / 8; c += THREADS) {
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int k = k0 + r, n = bn + nc;
      float v[8];
      load8(B + (long long)k * N + n, k < K ? N - n : 0, b_vec, v);
      *reinterpret_cast<float4*>(&Bs[r][nc]) = make_float4(v[0], v[1], v[2], v[3]);
      *reinterpret_cast<float4*>(&Bs[r][nc + 4]) = make_float4(v[4], v[5], v[6], v[7]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k][tr * TM + i]);
        a[i] = v.x;
        a[i + 1] = v.y;
        a[i + 2] = v.z;
        a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][tc * TN + j]);
        b[j] = v.x;
        b[j + 1] = v.y;
        b[j + 2] = v.z;
        b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = bm + tr * TM + i;
    if (m >= M) continue;
    __half* dst = C + (long long)m * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n = bn + tc * TN + j;
      if (c_vec) {
        if (n < N) {
          uint2 raw;
          __half2* h = reinterpret_cast<__half2*>(&raw);
          h[0] = __floats2half2_rn(acc[i][j], acc[i][j + 1]);
          h[1] = __floats2half2_rn(acc[i][j + 2], acc[i][j + 3]);
          *reinterpret_cast<uint2*>(dst + n) = raw;
        }
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (n + jj < N) dst[n + jj] = __float2half_rn(acc[i][j + jj]);
      }
    }
  }
}
