// One work-item per row, no cooperation, a single pass for the statistics: each work-item walks
// its own row with VEC-wide vload_halfN loads (2-byte alignment suffices, so any row start works)
// keeping VEC running Welford states (mean, sum of squared deviations) in floatN registers, one
// per vector lane, merges them (all of the same count) and then the C % VEC tail one element at a
// time; a second walk over the row (x, w and b) writes y. No local memory and no barrier.
// @kernel layernorm_rowitem
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [1, 2, 4, 8, 16, 32, 64] default 4
// @param VEC in [4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint VEC <= 16

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload_half, VEC)
#define VSTORE CAT(CAT(vstore_half, VEC), _rte)

float hsum4(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}
float hsum8(float8 v) {
  return hsum4(v.lo + v.hi);
}
float hsum16(float16 v) {
  return hsum8(v.lo + v.hi);
}
#define HSUM CAT(hsum, VEC)

__kernel void layernorm_rowitem(__global const half* restrict x, __global const half* restrict w,
                                __global const half* restrict b, __global half* restrict y, int R,
                                int C, float eps) {
  const int r = get_global_id(0);
  if (r >= R) return;
  __global const half* xr = x + (long)r * C;
  __global half* yr = y + (long)r * C;
  const int nvec = C / VEC;

  floatV mv = (floatV)(0.0f), qv = (floatV)(0.0f);  // per vector lane, over nvec values each
  for (int c = 0; c < nvec; ++c) {
    const floatV v = VLOAD(c, xr);
    const floatV d = v - mv;
    mv += d * (1.0f / (float)(c + 1));
    qv = fma(d, v - mv, qv);
  }
  // Merge the VEC lanes (each of nvec values): the mean of the means, and the lanes' sums of
  // squared deviations plus nvec times the squared deviations of their means.
  float mean = HSUM(mv) * (1.0f / VEC);
  const floatV dm = mv - mean;
  float m2 = HSUM(qv) + (float)nvec * HSUM(dm * dm);
  float n = (float)(nvec * VEC);
  for (int j = nvec * VEC; j < C; ++j) {
    const float v = vload_half(j, xr);
    n += 1.0f;
    const float d = v - mean;
    mean += d / n;
    m2 = fma(d, v - mean, m2);
  }
  const float rstd = rsqrt(m2 / C + eps);

  for (int c = 0; c < nvec; ++c)
    VSTORE((VLOAD(c, xr) - mean) * rstd * VLOAD(c, w) + VLOAD(c, b), c, yr);
  for (int j = nvec * VEC; j < C; ++j)
    vstore_half_rte((vload_half(j, xr) - mean) * rstd * vload_half(j, w) + vload_half(j, b), j, yr);
}
