// The baseline: the reference as it is.
// @kernel rmsnorm_base
// @grid ceil_div(R, 64)
// @block 64
__kernel void rmsnorm_base(__global const float* x, __global float* y, int R, int C, float eps) {
  int r = get_global_id(0);
  if (r >= R) return;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += x[r * C + c] * x[r * C + c];
  float scale = rsqrt(sum / C + eps);
  for (int c = 0; c < C; ++c) y[r * C + c] = x[r * C + c] * scale;
}
