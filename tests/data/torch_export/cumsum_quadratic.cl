// 89_cumsum the slow way: each element sums its row's prefix on its own (quadratic in the row's
// length). Correct, and the baseline cumsum_two_pass.cl beats by far.
// @kernel cumsum_quadratic
// @grid ceil_div(batch_size * row_shape_0, 64)
// @block 64
__kernel void cumsum_quadratic(__global const float* x, __global float* out, int batch_size,
                               int row_shape_0) {
  const long i = get_global_id(0);
  if (i >= (long)batch_size * row_shape_0) return;
  const long row = i / row_shape_0 * row_shape_0;
  float sum = 0.0f;
  for (long k = row; k <= i; ++k) sum += x[k];
  out[i] = sum;
}
