// Baseline: one work-group per row, scalar loads, three passes over the row: the mean and then
// the variance (the mean of the squared deviations), each reduced with a local-memory tree, then
// the normalised row written.
// @kernel layernorm_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

__kernel void layernorm_baseline(__global const half* x, __global const half* w,
                                 __global const half* b, __global half* y, int R, int C,
                                 float eps) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * C;
  __global half* yr = y + (long)get_group_id(0) * C;

  float s = 0.0f;
  for (int c = t; c < C; c += BLOCK) s += vload_half(c, xr);
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean = red[0] / C;
  barrier(CLK_LOCAL_MEM_FENCE);

  float q = 0.0f;
  for (int c = t; c < C; c += BLOCK) {
    const float d = vload_half(c, xr) - mean;
    q += d * d;
  }
  red[t] = q;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float rstd = rsqrt(red[0] / C + eps);

  for (int c = t; c < C; c += BLOCK)
    vstore_half_rte((vload_half(c, xr) - mean) * rstd * vload_half(c, w) + vload_half(c, b), c, yr);
}
