// 1_Square_matrix_multiplication_, hard-coded: correct.cl with the problem's own sizes (N = 3072)
// written in as constants for every shape, loop bound and stride, so it is right at the benchmark
// set only. The size arguments serve only to keep each access inside the buffer the launch was
// given (AT clamps the index to the buffer's length), so at a derived check set the kernel computes
// wrong values rather than reading or writing past its buffers (a crash of the executor, not a
// verdict on the values).
// @kernel matmul
// @grid ceil_div(N, 16), ceil_div(N, 16)
// @block 16, 16
#define N 3072
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void matmul(__global const float* A, __global const float* B, __global float* out,
                     int N_arg) {
  const long n = (long)N_arg * N_arg;
  const int col = get_global_id(0), row = get_global_id(1);
  if (row >= N || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < N; ++k) acc += AT(A, (long)row * N + k, n) * AT(B, (long)k * N + col, n);
  AT(out, (long)row * N + col, n) = acc;
}
