// 89_cumsum: the running sum along each row of x[batch_size, row_shape_0], one work-item per row
// (a single launch; a row-parallel scan would take two).
// @kernel cumsum
// @grid ceil_div(batch_size, 16)
// @block 16
__kernel void cumsum(__global const float* x, __global float* out, int batch_size,
                     int row_shape_0) {
  const int row = get_global_id(0);
  if (row >= batch_size) return;
  __global const float* in = x + (long)row * row_shape_0;
  __global float* o = out + (long)row * row_shape_0;
  float s = 0.0f;
  for (int j = 0; j < row_shape_0; ++j) {
    s += in[j];
    o[j] = s;
  }
}
