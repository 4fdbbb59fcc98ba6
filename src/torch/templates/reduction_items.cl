// Starting kernel (kfoundry import, op class reduction): the sum (or mean) along one dimension,
// the input viewed as [outer, extent, inner], one output per line; one work-item per line, so
// with inner > 1 neighbouring work-items read neighbouring elements. UNROLL independent partial
// sums.
// @kernel kf_reduce_items
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 64
// @param UNROLL in [1, 2, 4] default 2
// @constraint BLOCK <= max_work_group_size

__kernel void kf_reduce_items(KF_PARAMS) {
  const long line = get_global_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  if (line >= (long)KF_OUTER * inner) return;
  const long base = (line / inner) * extent * inner + line % inner;
  float acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  long j = 0;
  for (; j + UNROLL <= extent; j += UNROLL)
    for (int u = 0; u < UNROLL; ++u) acc[u] += KF_X[base + (j + u) * inner];
  for (; j < extent; ++j) acc[0] += KF_X[base + j * inner];
  float s = 0.0f;
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  KF_OUT[line] = s * KF_SCALE;
}
