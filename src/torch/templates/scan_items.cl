// Starting kernel (kfoundry import, op class scan): the running sum along one dimension, the input
// viewed as [outer, extent, inner]; one work-item per line, in order.
// @kernel kf_scan_items
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [4, 8, 16, 32, 64] default 16
// @constraint BLOCK <= max_work_group_size

__kernel void kf_scan_items(KF_PARAMS) {
  const long line = get_global_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  if (line >= (long)KF_OUTER * inner) return;
  const long base = (line / inner) * extent * inner + line % inner;
  float s = 0.0f;
  for (long j = 0; j < extent; ++j) {
    s += KF_X[base + j * inner];
    KF_OUT[base + j * inner] = s;
  }
}
