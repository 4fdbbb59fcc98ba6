// Starting kernel (kfoundry import, op class rmsnorm): x / sqrt(mean(x^2) + eps) along one
// dimension, the input viewed as [outer, extent, inner]; one work-group per line, the sum of
// squares reduced by a local-memory tree.
// @kernel kf_rmsnorm_group
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @constraint BLOCK <= max_work_group_size

__kernel void kf_rmsnorm_group(KF_PARAMS) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  const long line = get_group_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  const long base = (line / inner) * extent * inner + line % inner;
  float sq = 0.0f;
  for (long j = t; j < extent; j += BLOCK) sq += KF_X[base + j * inner] * KF_X[base + j * inner];
  red[t] = sq;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / sqrt(red[0] / (float)extent + KF_EPS);
  for (long j = t; j < extent; j += BLOCK) KF_OUT[base + j * inner] = KF_X[base + j * inner] * inv;
}
