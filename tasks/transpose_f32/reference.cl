// Reference: one work-item per output element dst[c, r], read from src[r, c].
// @kernel transpose_reference
// @grid ceil_div(R * C, 256)
// @block 256

__kernel void transpose_reference(__global const float* src, __global float* dst, int R, int C) {
  long e = get_global_id(0);
  if (e >= (long)R * C) return;
  long c = e / R, r = e % R;
  dst[e] = src[r * C + c];
}
