// 40_LayerNorm: LayerNorm over the last three dimensions (features, dim1, dim2) with elementwise
// weight and bias, eps 1e-5; one work-group per batch row, the mean and then the biased variance
// reduced in local memory.
// @kernel layernorm
// @grid batch_size
// @block 64
__kernel void layernorm(__global const float* x, __global const float* ln_weight,
                        __global const float* ln_bias, __global float* out, int batch_size,
                        int features, int dim1, int dim2) {
  __local float red[64];
  const int t = get_local_id(0);
  const long n = (long)features * dim1 * dim2;
  __global const float* in = x + get_group_id(0) * n;
  __global float* o = out + get_group_id(0) * n;
  float s = 0.0f;
  for (long j = t; j < n; j += 64) s += in[j];
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 32; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean = red[0] / n;
  barrier(CLK_LOCAL_MEM_FENCE);
  s = 0.0f;
  for (long j = t; j < n; j += 64) s += (in[j] - mean) * (in[j] - mean);
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 32; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / sqrt(red[0] / n + 1e-5f);
  for (long j = t; j < n; j += 64) o[j] = (in[j] - mean) * inv * ln_weight[j] + ln_bias[j];
}
