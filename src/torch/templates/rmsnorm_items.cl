// Starting kernel (kfoundry import, op class rmsnorm): x / sqrt(mean(x^2) + eps) along one
// dimension, the input viewed as [outer, extent, inner]; one work-item per line, so with
// inner > 1 neighbouring work-items read neighbouring elements.
// @kernel kf_rmsnorm_items
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 64
// @constraint BLOCK <= max_work_group_size

__kernel void kf_rmsnorm_items(KF_PARAMS) {
  const long line = get_global_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  if (line >= (long)KF_OUTER * inner) return;
  const long base = (line / inner) * extent * inner + line % inner;
  float sq = 0.0f;
  for (long j = 0; j < extent; ++j) sq += KF_X[base + j * inner] * KF_X[base + j * inner];
  const float inv = 1.0f / sqrt(sq / (float)extent + KF_EPS);
  for (long j = 0; j < extent; ++j) KF_OUT[base + j * inner] = KF_X[base + j * inner] * inv;
}
