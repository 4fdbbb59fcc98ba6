// Reference: one thread per output element C[m, n], accumulating the K products in double and
// rounding once to fp16 (to bf16 under KF_BF16, the gemm_f16.bf16 variant).
// @kernel gemm_reference
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16
#if KF_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;
__device__ inline float ToFloat(elem_t x) {
  return __bfloat162float(x);
}
__device__ inline elem_t FromFloat(float x) {
  return __float2bfloat16_rn(x);
}
#else
#include <cuda_fp16.h>
typedef __half elem_t;
__device__ inline float ToFloat(elem_t x) {
  return __half2float(x);
}
__device__ inline elem_t FromFloat(float x) {
  return __float2half_rn(x);
}
#endif

extern "C" __global__ void gemm_reference(const elem_t* A, const elem_t* B, elem_t* C, int M, int N,
                                          int K) {
  int n = blockIdx.x * 16 + threadIdx.x;
  int m = blockIdx.y * 16 + threadIdx.y;
  if (m >= M || n >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k)
    acc += (double)ToFloat(A[(long long)m * K + k]) * (double)ToFloat(B[(long long)k * N + n]);
  C[(long long)m * N + n] = FromFloat((float)acc);
}
