// One work-item per output element, fp32 accumulation, the K loop unrolled with UNROLL
// independent partial sums; the work-group shape is tunable: BX along N, BY along M.
// @kernel gemm_naive
// @grid ceil_div(N, BX), ceil_div(M, BY)
// @block BX, BY
// @param BX in [8, 16, 32, 64] default 32
// @param BY in [1, 2, 4, 8] default 4
// @param UNROLL in [1, 2, 4, 8] default 4
// @constraint BX * BY <= max_work_group_size

__kernel void gemm_naive(__global const half* restrict A, __global const half* restrict B,
                         __global half* restrict C, int M, int N, int K) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  if (m >= M || n >= N) return;
  __global const half* a = A + (long)m * K;
  __global const half* b = B + n;
  float acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  int k = 0;
  for (; k + UNROLL <= K; k += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc[u] += vload_half(k + u, a) * vload_half((long)(k + u) * N, b);
  }
  for (; k < K; ++k) acc[0] += vload_half(k, a) * vload_half((long)k * N, b);
  float sum = 0.0f;
  for (int u = 0; u < UNROLL; ++u) sum += acc[u];
  vstore_half_rte(sum, (long)m * N + n, C);
}
