// 33_BatchNorm, off by one: correct.cl except that the last element of the output is 1 too large, so it differs from the
// module in exactly one element at every size set.
// biased variance over (batch, dim1, dim2), then out = (x - mean) / sqrt(var + 1e-5) * w + b.
// The running statistics are inputs the forward would update; the output does not read them.
// @kernel batchnorm
// @grid ceil_div(features, 16)
// @block 16
__kernel void batchnorm(__global const float* x, __global const float* bn_weight,
                        __global const float* bn_bias, __global const float* bn_running_mean,
                        __global const float* bn_running_var,
                        __global const long* bn_num_batches_tracked, __global float* out,
                        int batch_size, int features, int dim1, int dim2) {
  const int c = get_global_id(0);
  if (c >= features) return;
  const long plane = (long)dim1 * dim2;
  const float count = (float)(batch_size * plane);
  float sum = 0.0f;
  for (int n = 0; n < batch_size; ++n) {
    __global const float* p = x + ((long)n * features + c) * plane;
    for (long i = 0; i < plane; ++i) sum += p[i];
  }
  const float mean = sum / count;
  float sq = 0.0f;
  for (int n = 0; n < batch_size; ++n) {
    __global const float* p = x + ((long)n * features + c) * plane;
    for (long i = 0; i < plane; ++i) sq += (p[i] - mean) * (p[i] - mean);
  }
  const float scale = bn_weight[c] / sqrt(sq / count + 1e-5f), shift = bn_bias[c];
  for (int n = 0; n < batch_size; ++n) {
    const long at = ((long)n * features + c) * plane;
    for (long i = 0; i < plane; ++i) {
      const bool last = n == batch_size - 1 && c == features - 1 && i == plane - 1;
      out[at + i] = (x[at + i] - mean) * scale + shift + (last ? 1.0f : 0.0f);
    }
  }
}
