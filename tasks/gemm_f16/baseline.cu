// Baseline: a straightforward first kernel, one thread per output element accumulating in fp32
// and rounding once to fp16 (to bf16 under KF_BF16, the gemm_f16.bf16 variant); threads along x
// take consecutive columns, so B and C are accessed coalesced and A broadcast.
// @kernel gemm_baseline
// @grid ceil_div(N, 32), ceil_div(M, BY)
// @block 32, BY
// @param BY in [4, 8, 16] default 8
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

extern "C" __global__ void gemm_baseline(const elem_t* A, const elem_t* B, elem_t* C, int M, int N,
                                         int K) {
  int n = blockIdx.x * 32 + threadIdx.x;
  int m = blockIdx.y * BY + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += ToFloat(A[(long long)m * K + k]) * ToFloat(B[(long long)k * N + n]);
  C[(long long)m * N + n] = FromFloat(acc);
}
