// Baseline: one work-group per row, scalar loads, three passes over the row (max, sum of
// exponentials, write), each reduced with a local-memory tree.
// @kernel softmax_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

__kernel void softmax_baseline(__global const half* x, __global half* y, int R, int N) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * N;
  __global half* yr = y + (long)get_group_id(0) * N;

  float m = -FLT_MAX;
  for (int j = t; j < N; j += BLOCK) m = fmax(m, vload_half(j, xr));
  red[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  float sum = 0.0f;
  for (int j = t; j < N; j += BLOCK) sum += exp(vload_half(j, xr) - m);
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / red[0];

  for (int j = t; j < N; j += BLOCK) vstore_half_rte(exp(vload_half(j, xr) - m) * inv, j, yr);
}
