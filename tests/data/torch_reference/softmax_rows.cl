// Row softmax for the task `kfoundry import` writes from kernelbench/23_Softmax.py: one work-item
// per row, three passes over it (the maximum, the sum of exponentials, the scaled outputs).
// @kernel softmax_rows
// @grid ceil_div(batch_size, 16)
// @block 16
__kernel void softmax_rows(__global const float* x, __global float* out, int batch_size, int dim) {
  int row = get_global_id(0);
  if (row >= batch_size) return;
  __global const float* in = x + (size_t)row * dim;
  __global float* o = out + (size_t)row * dim;
  float m = -INFINITY;
  for (int j = 0; j < dim; ++j) m = fmax(m, in[j]);
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) sum += exp(in[j] - m);
  for (int j = 0; j < dim; ++j) o[j] = exp(in[j] - m) / sum;
}
