// Two launches. The first scans each BLOCK-long chunk of a row in local memory, writes the chunk's
// inclusive scan to y and its total to the scratch buffer `totals`; the second adds to every chunk
// the totals of the chunks before it in its row.
// @param BLOCK in [64, 128] default 64
// @scratch totals f32 R * ceil_div(C, BLOCK)

// @kernel scan_chunks
// @grid ceil_div(C, BLOCK), R
// @block BLOCK, 1
__kernel void scan_chunks(__global const float* x, __global float* y, int R, int C,
                          __global float* totals) {
  __local float part[BLOCK];
  const int t = get_local_id(0), chunk = get_group_id(0), r = get_group_id(1);
  const int c = chunk * BLOCK + t;
  part[t] = c < C ? x[r * C + c] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < BLOCK; step *= 2) {
    float add = t >= step ? part[t - step] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    part[t] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (c < C) y[r * C + c] = part[t];
  if (t == BLOCK - 1) totals[r * get_num_groups(0) + chunk] = part[t];
}

// @kernel add_offsets
// @grid ceil_div(C, BLOCK), R
// @block BLOCK, 1
__kernel void add_offsets(__global const float* x, __global float* y, int R, int C,
                          __global float* totals) {
  const int t = get_local_id(0), chunk = get_group_id(0), r = get_group_id(1);
  const int c = chunk * BLOCK + t;
  float offset = 0.0f;
  for (int k = 0; k < chunk; ++k) offset += totals[r * get_num_groups(0) + k];
  if (c < C) y[r * C + c] += offset;
}
