// Starting kernel (kfoundry import, op class layernorm): (x - mean) / sqrt(var + eps) * w + b over
// the normalised trailing dimensions (extent elements per line, weight and bias indexed by the
// position in the line); one work-item per line, mean then biased variance in two passes.
// @kernel kf_layernorm_items
// @grid ceil_div(KF_OUTER, BLOCK)
// @block BLOCK
// @param BLOCK in [1, 2, 4, 8, 16] default 4
// @constraint BLOCK <= max_work_group_size

__kernel void kf_layernorm_items(KF_PARAMS) {
  const long line = get_global_id(0);
  const long extent = KF_EXTENT;
  if (line >= (long)KF_OUTER) return;
  __global const float* in = KF_X + line * extent;
  __global float* o = KF_OUT + line * extent;
  float s = 0.0f;
  for (long j = 0; j < extent; ++j) s += in[j];
  const float mean = s / (float)extent;
  float v = 0.0f;
  for (long j = 0; j < extent; ++j) v += (in[j] - mean) * (in[j] - mean);
  const float inv = 1.0f / sqrt(v / (float)extent + KF_EPS);
  for (long j = 0; j < extent; ++j) o[j] = (in[j] - mean) * inv * KF_WEIGHT[j] + KF_BIAS[j];
}
