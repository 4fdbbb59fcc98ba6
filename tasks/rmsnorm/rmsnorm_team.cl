// Several rows per work-group: a team of TPR consecutive work-items owns a row and a group covers
// ROWS rows. Each work-item reads VEC halves per vload_halfN (2-byte alignment suffices, so any
// row start works); the team's sums of squares meet in a local-memory tree within its TPR slots;
// a second pass writes y. Work-items past the last row take part in the barriers but read and
// write nothing.
// @kernel rmsnorm_team
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

__kernel void rmsnorm_team(__global const half* restrict x, __global const half* restrict w,
                           __global half* restrict y, int R, int C, float eps) {
  __local float red[TPR * ROWS];
  const int t = get_local_id(0), lane = t % TPR;
  __local float* seg = red + (t - lane);  // this row's TPR slots
  const int row = get_group_id(0) * ROWS + t / TPR;
  const int n = row < R ? C : 0;
  __global const half* xr = x + (long)min(row, R - 1) * C;
  __global half* yr = y + (long)min(row, R - 1) * C;
  const int nvec = n / VEC;

  floatV acc = (floatV)(0.0f);
  for (int c = lane; c < nvec; c += TPR) {
    const floatV v = VLOAD(c, xr);
    acc = fma(v, v, acc);
  }
  float ss = HSUM(acc);
  for (int j = nvec * VEC + lane; j < n; j += TPR) {
    const float v = vload_half(j, xr);
    ss = fma(v, v, ss);
  }
  seg[lane] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TPR / 2; s > 0; s >>= 1) {
    if (lane < s) seg[lane] += seg[lane + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = rsqrt(seg[0] / C + eps);

  for (int c = lane; c < nvec; c += TPR) VSTORE(VLOAD(c, xr) * inv * VLOAD(c, w), c, yr);
  for (int j = nvec * VEC + lane; j < n; j += TPR)
    vstore_half_rte(vload_half(j, xr) * inv * vload_half(j, w), j, yr);
}
