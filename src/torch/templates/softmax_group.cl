// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one work-group per line, each pass (max, sum of exponentials)
// reduced by a local-memory tree, then the scaled outputs.
// @kernel kf_softmax_group
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @constraint BLOCK <= max_work_group_size

__kernel void kf_softmax_group(KF_PARAMS) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  const long line = get_group_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  const long base = (line / inner) * extent * inner + line % inner;
  float m = -INFINITY;
  for (long j = t; j < extent; j += BLOCK) m = fmax(m, KF_X[base + j * inner]);
  red[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (long j = t; j < extent; j += BLOCK) sum += exp(KF_X[base + j * inner] - m);
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / red[0];
  for (long j = t; j < extent; j += BLOCK)
    KF_OUT[base + j * inner] = exp(KF_X[base + j * inner] - m) * inv;
}
