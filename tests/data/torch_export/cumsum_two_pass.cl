// Two launches for 89_cumsum's signature (x, out, batch_size, row_shape_0): the first scans each
// BLOCK-long chunk of a row in local memory, writes the chunk's inclusive scan to out and its total
// to the scratch buffer `totals`; the second adds to every chunk the totals of the chunks before
// it in its row. Given as a template beside cumsum_quadratic.cl, it is the run's best, and its
// export carries both launches and the scratch buffer.
// @param BLOCK in [64, 128] default 64
// @scratch totals f32 batch_size * ceil_div(row_shape_0, BLOCK)

// @kernel scan_chunks
// @grid ceil_div(row_shape_0, BLOCK), batch_size
// @block BLOCK, 1
__kernel void scan_chunks(__global const float* x, __global float* out, int batch_size,
                          int row_shape_0, __global float* totals) {
  __local float part[BLOCK];
  const int t = get_local_id(0), chunk = get_group_id(0), r = get_group_id(1);
  const int c = chunk * BLOCK + t;
  const long row = (long)r * row_shape_0;
  part[t] = c < row_shape_0 ? x[row + c] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < BLOCK; step *= 2) {
    float add = t >= step ? part[t - step] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    part[t] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (c < row_shape_0) out[row + c] = part[t];
  if (t == BLOCK - 1) totals[r * get_num_groups(0) + chunk] = part[t];
}

// @kernel add_offsets
// @grid ceil_div(row_shape_0, BLOCK), batch_size
// @block BLOCK, 1
__kernel void add_offsets(__global const float* x, __global float* out, int batch_size,
                          int row_shape_0, __global float* totals) {
  const int t = get_local_id(0), chunk = get_group_id(0), r = get_group_id(1);
  const int c = chunk * BLOCK + t;
  float offset = 0.0f;
  for (int k = 0; k < chunk; ++k) offset += totals[r * get_num_groups(0) + k];
  if (c < row_shape_0) out[(long)r * row_shape_0 + c] += offset;
}
