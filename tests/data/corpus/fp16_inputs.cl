// Computes an fp32 GEMM with its operands rounded to fp16 (OpenCL `half`, through vstore_half and
// vload_half on its own output element: PoCL has no cl_khr_fp16 arithmetic), accumulating in fp32:
// what an fp16 tensor core does. On inputs in [-1, 1] its error hides under a loose tolerance;
// the precision probe sees it.
// @kernel gemm_fp16_inputs
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16

float as_fp16(float x, __global half* scratch) {
  vstore_half_rte(x, 0, scratch);
  return vload_half(0, scratch);
}

__kernel void gemm_fp16_inputs(__global const float* A, __global const float* B, __global float* C,
                               int M, int N, int K) {
  const int n = get_global_id(0), m = get_global_id(1);
  if (m >= M || n >= N) return;
  __global half* scratch = (__global half*)(C + (long)m * N + n);
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += as_fp16(A[(long)m * K + k], scratch) * as_fp16(B[(long)k * N + n], scratch);
  C[(long)m * N + n] = acc;
}
