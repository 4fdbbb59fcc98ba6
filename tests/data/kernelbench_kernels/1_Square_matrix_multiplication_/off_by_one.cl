// 1_Square_matrix_multiplication_, off by one: correct.cl except that the last element (row N - 1, column N - 1) is 1 too large, so it differs from the
// module in exactly one element at every size set.
// @kernel matmul
// @grid ceil_div(N, 16), ceil_div(N, 16)
// @block 16, 16
__kernel void matmul(__global const float* A, __global const float* B, __global float* out, int N) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (row >= N || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < N; ++k) acc += A[(long)row * N + k] * B[(long)k * N + col];
  out[(long)row * N + col] = acc + (row == N - 1 && col == N - 1 ? 1.0f : 0.0f);
}
