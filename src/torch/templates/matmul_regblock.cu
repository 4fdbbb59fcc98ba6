// Starting kernel (kfoundry import, op class matmul): out = lhs rhs in fp32 with register
// blocking: a block of (BM / TM) x (BN / TN) threads computes a BM x BN tile of out, each thread a
// TM x TN tile of it in registers. Per step of BK along k the block stages lhs's BM x BK tile
// (transposed, so a thread's TM values are contiguous) and rhs's BK x BN tile in shared memory,
// zeros past the edges; 16-byte loads where the rows allow (k and n multiples of 4, fp32 data,
// aligned bases), else element by element. The inner loop reads 16-byte vectors of both tiles
// from shared memory and does TM * TN FMAs per k.
// @kernel kf_matmul_regblock
// @grid ceil_div(KF_N, BN), ceil_div(KF_M, BM)
// @block (BM // TM) * (BN // TN), 1
// @param BM in [32, 64, 128] default 128
// @param BN in [32, 64, 128] default 128
// @param BK in [8, 16, 32] default 16
// @param TM in [4, 8] default 8
// @param TN in [4, 8] default 8
// @constraint (BM // TM) * (BN // TN) <= max_work_group_size
// @constraint (BM // TM) * (BN // TN) >= 32
#include <cuda_fp16.h>

#define THREADS ((BM / TM) * (BN / TN))

// Up to 4 consecutive elements from p (`avail` of them exist), as floats, zeros past the end.
template <typename T>
__device__ __forceinline__ float4 Load4(const T* p, long long avail, bool) {
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (avail > 0) v.x = static_cast<float>(p[0]);
  if (avail > 1) v.y = static_cast<float>(p[1]);
  if (avail > 2) v.z = static_cast<float>(p[2]);
  if (avail > 3) v.w = static_cast<float>(p[3]);
  return v;
}

__device__ __forceinline__ float4 Load4(const float* p, long long avail, bool vec) {
  if (vec && avail >= 4) return __ldg(reinterpret_cast<const float4*>(p));
  return Load4<float>(p, avail, false);
}

template <typename T>
__device__ __forceinline__ bool Aligned16(const T* p) {
  return (unsigned long long)p % 16 == 0;
}

template <typename TA, typename TB, typename U>
__device__ __forceinline__ void MatmulRegblock(const TA* __restrict__ A, const TB* __restrict__ B,
                                               U* __restrict__ C, long long M, long long N,
                                               long long K) {
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;
  const bool a_vec = K % 4 == 0 && Aligned16(A);
  const bool b_vec = N % 4 == 0 && Aligned16(B);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (long long k0 = 0; k0 < K; k0 += BK) {
    // lhs: BM rows of BK values in chunks of 4 along k, stored transposed.
    for (int c = tid; c < BM * BK / 4; c += THREADS) {
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const long long m = bm + r, k = k0 + kc;
      const float4 v =
          m < M ? Load4(A + m * K + k, K - k, a_vec) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      As[kc][r] = v.x;
      As[kc + 1][r] = v.y;
      As[kc + 2][r] = v.z;
      As[kc + 3][r] = v.w;
    }
    // rhs: BK rows of BN values in chunks of 4 along n.
    for (int c = tid; c < BK * BN / 4; c += THREADS) {
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      const long long k = k0 + r, n = bn + nc;
      const float4 v =
          k < K ? Load4(B + k * N + n, N - n, b_vec) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      *reinterpret_cast<float4*>(&Bs[r][nc]) = v;
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
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  const bool c_vec = sizeof(U) == 4 && N % 4 == 0 && Aligned16(C);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long m = bm + tr * TM + i;
    if (m >= M) continue;
    U* row = C + m * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const long long n = bn + tc * TN + j;
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(row + n) =
            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (n + q < N) row[n + q] = static_cast<U>(acc[i][j + q]);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) kf_matmul_regblock(KF_PARAMS) {
  MatmulRegblock(KF_LHS, KF_RHS, KF_OUT, KF_M, KF_N, KF_K);
}
