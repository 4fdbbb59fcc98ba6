// Register blocking: a block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C, each
// thread a TM x TN micro-tile held in registers. Per K step of BK the block stages A (transposed,
// so a thread's TM values of A are contiguous) and B in shared memory, with 16-byte float4 loads
// when the rows are 16-byte aligned (K, N multiples of 4) and guarded scalar loads otherwise;
// the inner loop reads float4s of A and B from shared memory and does TM * TN FMAs per k.
// @kernel gemm_regblock
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block (BM // TM) * (BN // TN), 1
// @param BM in [64, 128] default 128
// @param BN in [64, 128] default 128
// @param BK in [8, 16, 32] default 16
// @param TM in [4, 8] default 8
// @param TN in [4, 8] default 8
// @constraint (BM // TM) * (BN // TN) <= max_work_group_size

#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_regblock(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 4 == 0) && ((size_t)A % 16 == 0);
  const bool b_vec = (N % 4 == 0) && ((size_t)B % 16 == 0);
  const bool c_vec = (N % 4 == 0) && ((size_t)C % 16 == 0);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: BM rows of BK values, in chunks of 4 along k, stored transposed.
#pragma unroll
    for (int c = tid; c < BM * BK / 4; c += THREADS) {
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int m = bm + r, k = k0 + kc;
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (m < M) {
        const float* src = A + (long long)m * K + k;
        if (a_vec) {
          if (k < K) v = __ldg(reinterpret_cast<const float4*>(src));
        } else {
          if (k < K) v.x = __ldg(src);
          if (k + 1 < K) v.y = __ldg(src + 1);
          if (k + 2 < K) v.z = __ldg(src + 2);
          if (k + 3 < K) v.w = __ldg(src + 3);
        }
      }
      As[kc][r] = v.x;
      As[kc + 1][r] = v.y;
      As[kc + 2][r] = v.z;
      As[kc + 3][r] = v.w;
    }
    // B tile: BK rows of BN values, in chunks of 4 along n.
#pragma unroll
    for (int c = tid; c < BK * BN / 4; c += THREADS) {
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      const int k = k0 + r, n = bn + nc;
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (k < K) {
        const float* src = B + (long long)k * N + n;
        if (b_vec) {
          if (n < N) v = __ldg(reinterpret_cast<const float4*>(src));
        } else {
          if (n < N) v.x = __ldg(src);
          if (n + 1 < N) v.y = __ldg(src + 1);
          if (n + 2 < N) v.z = __ldg(src + 2);
          if (n + 3 < N) v.w = __ldg(src + 3);
        }
      }
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
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = bm + tr * TM + i;
    if (m >= M) continue;
    float* dst = C + (long long)m * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n = bn + tc * TN + j;
      if (c_vec) {
        if (n < N)
          *reinterpret_cast<float4*>(dst + n) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (n + jj < N) dst[n + jj] = acc[i][j + jj];
      }
    }
  }
}
