// 1_Square_matrix_multiplication_: out = A B for N x N matrices, one work-item per output element.
// @kernel matmul
// @grid ceil_div(N, 16), ceil_div(N, 16)
// @block 16, 16
__kernel void matmul(__global const float* A, __global const float* B, __global float* out, int N) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (row >= N || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < N; ++k) acc += A[(long)row * N + k] * B[(long)k * N + col];
  out[(long)row * N + col] = acc;
}
