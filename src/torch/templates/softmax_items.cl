// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one work-item per line (max, sum of exponentials, scaled
// outputs), so with inner > 1 neighbouring work-items read neighbouring elements.
// @kernel kf_softmax_items
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 32
// @constraint BLOCK <= max_work_group_size

__kernel void kf_softmax_items(KF_PARAMS) {
  const long line = get_global_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  if (line >= (long)KF_OUTER * inner) return;
  const long base = (line / inner) * extent * inner + line % inner;
  float m = -INFINITY;
  for (long j = 0; j < extent; ++j) m = fmax(m, KF_X[base + j * inner]);
  float sum = 0.0f;
  for (long j = 0; j < extent; ++j) sum += exp(KF_X[base + j * inner] - m);
  const float inv = 1.0f / sum;
  for (long j = 0; j < extent; ++j)
    KF_OUT[base + j * inner] = exp(KF_X[base + j * inner] - m) * inv;
}
