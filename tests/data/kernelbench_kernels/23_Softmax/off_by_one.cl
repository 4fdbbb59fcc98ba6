// 23_Softmax, off by one: correct.cl except that the last element of the last row is 1 too large, so it differs from the
// module in exactly one element at every size set.
// the sum of exponentials, then the scaled outputs.
// @kernel softmax
// @grid ceil_div(batch_size, 16)
// @block 16
__kernel void softmax(__global const float* x, __global float* out, int batch_size, int dim) {
  const int row = get_global_id(0);
  if (row >= batch_size) return;
  __global const float* in = x + (long)row * dim;
  __global float* o = out + (long)row * dim;
  float m = -INFINITY;
  for (int j = 0; j < dim; ++j) m = fmax(m, in[j]);
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) sum += exp(in[j] - m);
  for (int j = 0; j < dim; ++j)
    o[j] = exp(in[j] - m) / sum + (row == batch_size - 1 && j == dim - 1 ? 1.0f : 0.0f);
}
