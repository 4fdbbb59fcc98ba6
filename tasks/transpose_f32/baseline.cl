// Baseline: the naive transpose, one work-item per element in a 2-D range over src: neighbouring
// work-items read consecutive elements of a src row and write them down a dst column (strided by
// R).
// @kernel transpose_baseline
// @grid ceil_div(C, 32), ceil_div(R, 8)
// @block 32, 8

__kernel void transpose_baseline(__global const float* src, __global float* dst, int R, int C) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (r < R && c < C) dst[(long)c * R + r] = src[(long)r * C + c];
}
