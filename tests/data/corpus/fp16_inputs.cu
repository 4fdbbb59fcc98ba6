// Computes an fp32 GEMM with its operands rounded to fp16 (__half), accumulating in fp32: what an
// fp16 tensor core does. On inputs in [-1, 1] its error hides under a loose tolerance; the
// precision probe sees it.
// @kernel gemm_fp16_inputs
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16
#include <cuda_fp16.h>

extern "C" __global__ void gemm_fp16_inputs(const float* A, const float* B, float* C, int M, int N,
                                            int K) {
  const int n = blockIdx.x * 16 + threadIdx.x, m = blockIdx.y * 16 + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += __half2float(__float2half_rn(A[(long long)m * K + k])) *
           __half2float(__float2half_rn(B[(long long)k * N + n]));
  C[(long long)m * N + n] = acc;
}
