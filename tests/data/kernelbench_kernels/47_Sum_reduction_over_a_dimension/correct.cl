// 47_Sum_reduction_over_a_dimension: out[b, 0, j] = sum over i of x[b, i, j] (x[batch_size, dim1,
// dim2]), one work-item per output, reading down the column at a stride of dim2.
// @kernel sum_dim1
// @grid ceil_div(batch_size * dim2, 64)
// @block 64
__kernel void sum_dim1(__global const float* x, __global float* out, int batch_size, int dim1,
                       int dim2) {
  const long i = get_global_id(0);
  if (i >= (long)batch_size * dim2) return;
  __global const float* col = x + (i / dim2) * dim1 * dim2 + i % dim2;
  float s = 0.0f;
  for (int k = 0; k < dim1; ++k) s += col[(long)k * dim2];
  out[i] = s;
}
