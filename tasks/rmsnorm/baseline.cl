// Baseline: one work-group per row, scalar loads; the sum of squares reduced with a local-memory
// tree, then a second pass over the row (x again, and w) writes y.
// @kernel rmsnorm_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

__kernel void rmsnorm_baseline(__global const half* x, __global const half* w, __global half* y,
                               int R, int C, float eps) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * C;
  __global half* yr = y + (long)get_group_id(0) * C;

  float ss = 0.0f;
  for (int c = t; c < C; c += BLOCK) {
    const float v = vload_half(c, xr);
    ss += v * v;
  }
  red[t] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = rsqrt(red[0] / C + eps);

  for (int c = t; c < C; c += BLOCK)
    vstore_half_rte(vload_half(c, xr) * inv * vload_half(c, w), c, yr);
}
