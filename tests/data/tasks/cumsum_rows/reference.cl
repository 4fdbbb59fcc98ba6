// One work-item per row, summing in order.
// @kernel cumsum_ref
// @grid ceil_div(R, 64)
// @block 64
__kernel void cumsum_ref(__global const float* x, __global float* y, int R, int C) {
  int r = get_global_id(0);
  if (r >= R) return;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) {
    sum += x[r * C + c];
    y[r * C + c] = sum;
  }
}
