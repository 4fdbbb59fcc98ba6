// Baseline: a straightforward first kernel, one work-item per output element accumulating in
// fp32 and rounding once to fp16; work-items along x take consecutive columns.
// @kernel gemm_baseline
// @grid ceil_div(N, 32), ceil_div(M, BY)
// @block 32, BY
// @param BY in [1, 2, 4, 8] default 4

__kernel void gemm_baseline(__global const half* A, __global const half* B, __global half* C, int M,
                            int N, int K) {
  int n = get_global_id(0);
  int m = get_global_id(1);
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += vload_half((long)m * K + k, A) * vload_half((long)k * N + n, B);
  vstore_half_rte(acc, (long)m * N + n, C);
}
