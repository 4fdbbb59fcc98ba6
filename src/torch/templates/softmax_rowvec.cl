// Starting kernel (kfoundry import, op class softmax): softmax along one dimension, the input
// viewed as [outer, extent, inner]; one work-item per line. Where the lines are contiguous
// (inner 1) each reads its row as VEC-wide vectors, keeping a running (max, sum of exponentials
// relative to it), so a CPU vectorises within the row; then one pass writes the outputs. Strided
// lines (inner > 1) take the scalar path.
// @kernel kf_softmax_rowvec
// @grid ceil_div(KF_OUTER * KF_INNER, BLOCK)
// @block BLOCK
// @param BLOCK in [1, 2, 4, 8, 16] default 4
// @param VEC in [4, 8] default 8
// @constraint BLOCK <= max_work_group_size
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

float hmax4(float4 v) {
  return fmax(fmax(v.x, v.y), fmax(v.z, v.w));
}
float hmax8(float8 v) {
  return hmax4(fmax(v.lo, v.hi));
}
float hmax16(float16 v) {
  return hmax8(fmax(v.lo, v.hi));
}
float hsum4(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}
float hsum8(float8 v) {
  return hsum4(v.lo + v.hi);
}
float hsum16(float16 v) {
  return hsum8(v.lo + v.hi);
}

__kernel void kf_softmax_rowvec(KF_PARAMS) {
  const long line = get_global_id(0);
  const long inner = KF_INNER, extent = KF_EXTENT;
  if (line >= (long)KF_OUTER * inner) return;
  const long base = (line / inner) * extent * inner + line % inner;
  __global const float* in = KF_X + base;
  __global float* o = KF_OUT + base;
  if (inner == 1) {
    const long nvec = extent / VEC;
    float m = -FLT_MAX, sum = 0.0f;
    for (long c = 0; c < nvec; ++c) {
      const floatV v = VLOAD(c, in);
      const float mn = fmax(m, CAT(hmax, VEC)(v));
      sum = sum * exp(m - mn) + CAT(hsum, VEC)(exp(v - mn));
      m = mn;
    }
    for (long j = nvec * VEC; j < extent; ++j) {
      const float mn = fmax(m, in[j]);
      sum = sum * exp(m - mn) + exp(in[j] - mn);
      m = mn;
    }
    const float inv = 1.0f / sum;
    for (long c = 0; c < nvec; ++c) VSTORE(exp(VLOAD(c, in) - m) * inv, c, o);
    for (long j = nvec * VEC; j < extent; ++j) o[j] = exp(in[j] - m) * inv;
    return;
  }
  float m = -INFINITY;
  for (long j = 0; j < extent; ++j) m = fmax(m, in[j * inner]);
  float sum = 0.0f;
  for (long j = 0; j < extent; ++j) sum += exp(in[j * inner] - m);
  const float inv = 1.0f / sum;
  for (long j = 0; j < extent; ++j) o[j * inner] = exp(in[j * inner] - m) * inv;
}
