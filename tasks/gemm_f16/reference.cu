// Reference: one thread per output element C[m, n], accumulating the K products in double and
// rounding once to fp16.
// @kernel gemm_reference
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16
#include <cuda_fp16.h>

extern "C" __global__ void gemm_reference(const __half* A, const __half* B, __half* C, int M, int N,
                                          int K) {
  int n = blockIdx.x * 16 + threadIdx.x;
  int m = blockIdx.y * 16 + threadIdx.y;
  if (m >= M || n >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k)
    acc += (double)__half2float(A[(long long)m * K + k]) *
           (double)__half2float(B[(long long)k * N + n]);
  C[(long long)m * N + n] = __float2half_rn((float)acc);
}
