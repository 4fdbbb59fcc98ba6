// Starting kernel (kfoundry import, op class reduction): the sum (or mean) along one dimension,
// the input viewed as [outer, extent, inner], one output per line; one work-group per line,
// reduced by a local-memory tree.
// @kernel kf_reduce_group
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @constraint BLOCK <= max_work_group_size

__kernel void kf_reduce_group(KF_PARAMS) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  const long line = get_group_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  const long base = (line / inner) * extent * inner + line % inner;
  float s = 0.0f;
  for (long j = t; j < extent; j += BLOCK) s += KF_X[base + j * inner];
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) KF_OUT[line] = red[0] * KF_SCALE;
}
