// Baseline: a straightforward first kernel, one thread per output element accumulating in fp32;
// threads along x take consecutive columns, so B and C are accessed coalesced and A broadcast.
// @kernel gemm_baseline
// @grid ceil_div(N, 32), ceil_div(M, BY)
// @block 32, BY
// @param BY in [4, 8, 16] default 8

extern "C" __global__ void gemm_baseline(const float* A, const float* B, float* C, int M, int N,
                                         int K) {
  int n = blockIdx.x * 32 + threadIdx.x;
  int m = blockIdx.y * BY + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(long long)m * K + k] * B[(long long)k * N + n];
  C[(long long)m * N + n] = acc;
}
