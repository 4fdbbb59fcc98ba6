// Starting kernel (kfoundry import, op class layernorm): (x - mean) / sqrt(var + eps) * w + b over
// the normalised trailing dimensions (extent elements per line); one work-group per line, the
// mean and then the biased variance reduced by a local-memory tree.
// @kernel kf_layernorm_group
// @grid KF_OUTER
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @constraint BLOCK <= max_work_group_size

__kernel void kf_layernorm_group(KF_PARAMS) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  const long extent = KF_EXTENT;
  __global const float* in = KF_X + get_group_id(0) * extent;
  __global float* o = KF_OUT + get_group_id(0) * extent;
  float s = 0.0f;
  for (long j = t; j < extent; j += BLOCK) s += in[j];
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean = red[0] / (float)extent;
  barrier(CLK_LOCAL_MEM_FENCE);
  s = 0.0f;
  for (long j = t; j < extent; j += BLOCK) s += (in[j] - mean) * (in[j] - mean);
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / sqrt(red[0] / (float)extent + KF_EPS);
  for (long j = t; j < extent; j += BLOCK) o[j] = (in[j] - mean) * inv * KF_WEIGHT[j] + KF_BIAS[j];
}
