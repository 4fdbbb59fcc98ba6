// 51_Argmax_over_a_dimension, off by one: correct.cl except that the last index of the output is 1 too large, so it differs from the
// module in exactly one element at every size set.
// dim1, dim2]), as a 64-bit index; one work-item per output.
// @kernel argmax_dim1
// @grid ceil_div(batch_size * dim2, 64)
// @block 64
__kernel void argmax_dim1(__global const float* x, __global long* out, int batch_size, int dim1,
                          int dim2) {
  const long i = get_global_id(0);
  if (i >= (long)batch_size * dim2) return;
  __global const float* col = x + (i / dim2) * dim1 * dim2 + i % dim2;
  float best = col[0];
  long at = 0;
  for (int k = 1; k < dim1; ++k) {
    const float v = col[(long)k * dim2];
    if (v > best) {
      best = v;
      at = k;
    }
  }
  out[i] = at + (i == (long)batch_size * dim2 - 1 ? 1 : 0);
}
