// Starting kernel (kfoundry import, op class scan): the running sum along one dimension, the input
// viewed as [outer, extent, inner], in one launch: one work-group per line, each work-item summing
// its own contiguous chunk, the chunk sums scanned in local memory (Hillis-Steele), then each
// chunk scanned again from its offset.
// @kernel kf_scan_group
// @grid KF_OUTER * KF_INNER
// @block BLOCK
// @param BLOCK in [8, 16, 32, 64, 128] default 32
// @constraint BLOCK <= max_work_group_size

__kernel void kf_scan_group(KF_PARAMS) {
  __local float part[2][BLOCK];
  const int t = get_local_id(0);
  const long line = get_group_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  const long base = (line / inner) * extent * inner + line % inner;
  const long chunk = (extent + BLOCK - 1) / BLOCK;
  const long lo = min(extent, t * chunk), hi = min(extent, lo + chunk);
  float s = 0.0f;
  for (long j = lo; j < hi; ++j) s += KF_X[base + j * inner];
  int cur = 0;
  part[cur][t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = 1; d < BLOCK; d <<= 1) {
    part[1 - cur][t] = part[cur][t] + (t >= d ? part[cur][t - d] : 0.0f);
    cur = 1 - cur;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float run = part[cur][t] - s;  // the sum of the chunks before this one
  for (long j = lo; j < hi; ++j) {
    run += KF_X[base + j * inner];
    KF_OUT[base + j * inner] = run;
  }
}
