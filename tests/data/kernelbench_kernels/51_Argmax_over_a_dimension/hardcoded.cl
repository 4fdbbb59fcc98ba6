// 51_Argmax_over_a_dimension, hard-coded: correct.cl with the problem's own sizes (batch_size = 96,
// dim1 = 2560, dim2 = 2049) written in as constants for every shape, loop bound and stride, so it
// is right at the benchmark set only. The size arguments serve only to keep each access inside the
// buffer the launch was given (AT clamps the index to the buffer's length), so at a derived check
// set the kernel computes wrong values rather than reading or writing past its buffers (a crash of
// the executor, not a verdict on the values).
// @kernel argmax_dim1
// @grid ceil_div(batch_size * dim2, 64)
// @block 64
#define BATCH_SIZE 96
#define DIM1 2560
#define DIM2 2049
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void argmax_dim1(__global const float* x, __global long* out, int batch_size, int dim1,
                          int dim2) {
  const long n_x = (long)batch_size * dim1 * dim2, n_out = (long)batch_size * dim2;
  const long i = get_global_id(0);
  if (i >= (long)BATCH_SIZE * DIM2) return;
  const long col = (i / DIM2) * DIM1 * DIM2 + i % DIM2;
  float best = AT(x, col, n_x);
  long at = 0;
  for (int k = 1; k < DIM1; ++k) {
    const float v = AT(x, col + (long)k * DIM2, n_x);
    if (v > best) {
      best = v;
      at = k;
    }
  }
  AT(out, i, n_out) = at;
}
