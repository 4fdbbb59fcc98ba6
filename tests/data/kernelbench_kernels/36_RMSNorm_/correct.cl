// 36_RMSNorm_: x / sqrt(mean(x^2 over features) + 1e-6) for x[batch_size, features, dim1, dim2]
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
  for (int f = 0; f < features; ++f) out[at + f * plane] = x[at + f * plane] * inv;
}
