// Register blocking: a work-group of (BM/TM) x (BN/TN) work-items computes a BM x BN tile of C,
// each work-item a TM x TN micro-tile of fp32 in private memory (float4 rows). Per K step of BK
// the group stages A (transposed, so a work-item's TM values of A are contiguous) and B in local
// memory as fp32, with vload_half4 where a chunk of 4 lies inside the matrix and guarded scalar
// loads at the edges;
// the inner loop reads float4s of A and B and does TM * TN multiply-adds per k.
// @kernel gemm_regblock
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block BN // TN, BM // TM
// @param BM in [16, 32, 64, 128] default 64
// @param BN in [16, 32, 64, 128] default 64
// @param BK in [4, 8, 16, 32] default 16
// @param TM in [4, 8] default 4
// @param TN in [4, 8] default 4
// @constraint (BM // TM) * (BN // TN) <= max_work_group_size

#define TX (BN / TN)
#define TY (BM / TM)

__kernel void gemm_regblock(__global const half* restrict A, __global const half* restrict B,
                            __global half* restrict C, int M, int N, int K) {
  __local float4 As[BK][BM / 4];
  __local float4 Bs[BK][BN / 4];
  __local float* as = (__local float*)As;
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * TX + tx;
  const int bm = get_group_id(1) * BM, bn = get_group_id(0) * BN;

  float4 acc[TM][TN / 4];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN / 4; ++j) acc[i][j] = (float4)(0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int c = tid; c < BM * BK / 4; c += TX * TY) {
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int m = bm + r, k = k0 + kc;
      float4 v = (float4)(0.0f);
      if (m < M) {
        __global const half* src = A + (long)m * K + k;
        if (k + 3 < K) {
          v = vload_half4(0, src);
        } else {
          if (k < K) v.x = vload_half(0, src);
          if (k + 1 < K) v.y = vload_half(1, src);
          if (k + 2 < K) v.z = vload_half(2, src);
        }
      }
      as[(kc + 0) * BM + r] = v.x;
      as[(kc + 1) * BM + r] = v.y;
      as[(kc + 2) * BM + r] = v.z;
      as[(kc + 3) * BM + r] = v.w;
    }
    for (int c = tid; c < BK * BN / 4; c += TX * TY) {
      const int r = c / (BN / 4), nc = c % (BN / 4);
      const int k = k0 + r, n = bn + nc * 4;
      float4 v = (float4)(0.0f);
      if (k < K) {
        __global const half* src = B + (long)k * N + n;
        if (n + 3 < N) {
          v = vload_half4(0, src);
        } else {
          if (n < N) v.x = vload_half(0, src);
          if (n + 1 < N) v.y = vload_half(1, src);
          if (n + 2 < N) v.z = vload_half(2, src);
        }
      }
      Bs[r][nc] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < BK; ++k) {
      float a[TM];
      float4 b[TN / 4];
      for (int i = 0; i < TM; i += 4) {
        const float4 v = As[k][(ty * TM + i) / 4];
        a[i] = v.x;
        a[i + 1] = v.y;
        a[i + 2] = v.z;
        a[i + 3] = v.w;
      }
      for (int j = 0; j < TN / 4; ++j) b[j] = Bs[k][tx * (TN / 4) + j];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN / 4; ++j) acc[i][j] += (float4)(a[i]) * b[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < TM; ++i) {
    const int m = bm + ty * TM + i;
    if (m >= M) continue;
    __global half* dst = C + (long)m * N;
    for (int j = 0; j < TN / 4; ++j) {
      const int n = bn + tx * TN + j * 4;
      const float4 v = acc[i][j];
      if (n + 3 < N) {
        vstore_half4_rte(v, 0, dst + n);
      } else {
        if (n < N) vstore_half_rte(v.x, n, dst);
        if (n + 1 < N) vstore_half_rte(v.y, n + 1, dst);
        if (n + 2 < N) vstore_half_rte(v.z, n + 2, dst);
      }
    }
  }
}
