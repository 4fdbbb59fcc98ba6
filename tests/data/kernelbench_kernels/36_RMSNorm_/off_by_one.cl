// 36_RMSNorm_, off by one: correct.cl except that the last element of the output is 1 too large, so it differs from the
// module in exactly one element at every size set.
// (the model's eps is get_init_inputs' epsilon), one work-item per (batch, dim1, dim2) position
// reading its features at a stride of dim1 * dim2.
// @kernel rmsnorm
// @grid ceil_div(batch_size * dim1 * dim2, 64)
// @block 64
__kernel void rmsnorm(__global const float* x, __global float* out, int batch_size, int features,
                      int dim1, int dim2) {
  const long i = get_global_id(0);
  const long plane = (long)dim1 * dim2;
  if (i >= batch_size * plane) return;
  const long at = (i / plane) * features * plane + i % plane;
  float sq = 0.0f;
  for (int f = 0; f < features; ++f) sq += x[at + f * plane] * x[at + f * plane];
  const float inv = 1.0f / sqrt(sq / features + 1e-6f);
  for (int f = 0; f < features; ++f)
    out[at + f * plane] =
        x[at + f * plane] * inv + (i == batch_size * plane - 1 && f == features - 1 ? 1.0f : 0.0f);
}
