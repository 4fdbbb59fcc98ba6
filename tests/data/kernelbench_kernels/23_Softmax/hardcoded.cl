// 23_Softmax, hard-coded: correct.cl with the problem's own sizes (batch_size = 1024, dim = 131072)
// written in as constants for every shape, loop bound and stride, so it is right at the benchmark
// set only. The size arguments serve only to keep each access inside the buffer the launch was
// given (AT clamps the index to the buffer's length), so at a derived check set the kernel computes
// wrong values rather than reading or writing past its buffers (a crash of the executor, not a
// verdict on the values).
// @kernel softmax
// @grid ceil_div(batch_size, 16)
// @block 16
#define BATCH_SIZE 1024
#define DIM 131072
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void softmax(__global const float* x, __global float* out, int batch_size, int dim) {
  const long n = (long)batch_size * dim;
  const int row = get_global_id(0);
  if (row >= BATCH_SIZE) return;
  const long at = (long)row * DIM;
  float m = -INFINITY;
  for (int j = 0; j < DIM; ++j) m = fmax(m, AT(x, at + j, n));
  float sum = 0.0f;
  for (int j = 0; j < DIM; ++j) sum += exp(AT(x, at + j, n) - m);
  for (int j = 0; j < DIM; ++j) AT(out, at + j, n) = exp(AT(x, at + j, n) - m) / sum;
}
