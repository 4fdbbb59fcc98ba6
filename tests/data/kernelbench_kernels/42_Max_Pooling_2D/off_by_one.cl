// 42_Max_Pooling_2D, off by one: correct.cl except that the last element of the output is 1 too large, so it differs from the
// module in exactly one element at every size set.
// (height - 2) x (width - 2) and output (r, c) takes the maximum of x at rows r - 1, r + 1, r + 3
// and the same columns, those inside the image (padding never wins). One work-item per output.
// @kernel maxpool
// @grid ceil_div(batch_size * channels * (height - 2) * (width - 2), 64)
// @block 64
__kernel void maxpool(__global const float* x, __global float* out, int batch_size, int channels,
                      int height, int width) {
  const long i = get_global_id(0);
  const int oh = height - 2, ow = width - 2;
  if (i >= (long)batch_size * channels * oh * ow) return;
  const int c = i % ow, r = (i / ow) % oh;
  __global const float* img = x + (i / ((long)oh * ow)) * height * width;
  float m = -INFINITY;
  for (int kr = 0; kr < 3; ++kr) {
    const int ir = r - 1 + 2 * kr;
    if (ir < 0 || ir >= height) continue;
    for (int kc = 0; kc < 3; ++kc) {
      const int ic = c - 1 + 2 * kc;
      if (ic >= 0 && ic < width) m = fmax(m, img[(long)ir * width + ic]);
    }
  }
  out[i] = m + (i == (long)batch_size * channels * oh * ow - 1 ? 1.0f : 0.0f);
}
