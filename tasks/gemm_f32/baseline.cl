// Baseline: a straightforward first kernel, one work-item per output element accumulating in
// fp32; work-items along x take consecutive columns (B and C contiguous, A shared by the row).
// @kernel gemm_baseline
// @grid ceil_div(N, 32), ceil_div(M, BY)
// @block 32, BY
// @param BY in [1, 2, 4, 8] default 4

__kernel void gemm_baseline(__global const float* A, __global const float* B, __global float* C,
                            int M, int N, int K) {
  int n = get_global_id(0);
  int m = get_global_id(1);
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(long)m * K + k] * B[(long)k * N + n];
  C[(long)m * N + n] = acc;
}
