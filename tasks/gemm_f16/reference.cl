// Reference: one work-item per output element C[m, n], accumulating the K products in double and
// rounding once to fp16.
// @kernel gemm_reference
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void gemm_reference(__global const half* A, __global const half* B, __global half* C,
                             int M, int N, int K) {
  int n = get_global_id(0);
  int m = get_global_id(1);
  if (m >= M || n >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k)
    acc += (double)vload_half((long)m * K + k, A) * (double)vload_half((long)k * N + n, B);
  vstore_half_rte((float)acc, (long)m * N + n, C);
}
