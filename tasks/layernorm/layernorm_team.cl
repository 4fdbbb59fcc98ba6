// Several rows per work-group: a team of TPR consecutive work-items owns a row and a group covers
// ROWS rows. Single pass for the statistics: each work-item sums x and x^2 over VEC-wide
// vload_halfN loads (2-byte alignment suffices, so any row start works), the team's pairs meet in
// one local-memory tree within its TPR slots, and var = E[x^2] - mean^2 in fp32 (clamped at 0),
// which loses precision when |mean| is much larger than the standard deviation. A second pass
// writes y. Work-items past the last row take part in the barriers but read and write nothing.
// @kernel layernorm_team
// @grid ceil_div(R, ROWS)
// @block TPR * ROWS
// @param TPR in [1, 2, 4, 8, 16, 32, 64] default 16
// @param ROWS in [1, 2, 4, 8, 16] default 4
// @param VEC in [4, 8, 16] default 8
// @constraint TPR * ROWS <= max_work_group_size
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

__kernel void layernorm_team(__global const half* restrict x, __global const half* restrict w,
                             __global const half* restrict b, __global half* restrict y, int R,
                             int C, float eps) {
  __local float2 red[TPR * ROWS];
  const int t = get_local_id(0), lane = t % TPR;
  __local float2* seg = red + (t - lane);  // this row's TPR slots
  const int row = get_group_id(0) * ROWS + t / TPR;
  const int n = row < R ? C : 0;
  __global const half* xr = x + (long)min(row, R - 1) * C;
  __global half* yr = y + (long)min(row, R - 1) * C;
  const int nvec = n / VEC;

  floatV sv = (floatV)(0.0f), qv = (floatV)(0.0f);
  for (int c = lane; c < nvec; c += TPR) {
    const floatV v = VLOAD(c, xr);
    sv += v;
    qv = fma(v, v, qv);
  }
  float s = HSUM(sv), q = HSUM(qv);
  for (int j = nvec * VEC + lane; j < n; j += TPR) {
    const float v = vload_half(j, xr);
    s += v;
    q = fma(v, v, q);
  }
  seg[lane] = (float2)(s, q);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = TPR / 2; k > 0; k >>= 1) {
    if (lane < k) seg[lane] += seg[lane + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float2 tot = seg[0];
  const float mean = tot.x / C;
  const float rstd = rsqrt(fmax(tot.y / C - mean * mean, 0.0f) + eps);

  for (int c = lane; c < nvec; c += TPR)
    VSTORE((VLOAD(c, xr) - mean) * rstd * VLOAD(c, w) + VLOAD(c, b), c, yr);
  for (int j = nvec * VEC + lane; j < n; j += TPR)
    vstore_half_rte((vload_half(j, xr) - mean) * rstd * vload_half(j, w) + vload_half(j, b), j, yr);
}
