// One work-item per row, no cooperation: each work-item walks its own row with VEC-wide
// vload_halfN loads (which need only 2-byte alignment, so any row start works), sums the squares
// in a floatN register, then walks the row again (x and w) to write y. The C % VEC tail is handled
// one element at a time. No local memory and no barrier.
// @kernel rmsnorm_rowitem
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

__kernel void rmsnorm_rowitem(__global const half* restrict x, __global const half* restrict w,
                              __global half* restrict y, int R, int C, float eps) {
  const int r = get_global_id(0);
  if (r >= R) return;
  __global const half* xr = x + (long)r * C;
  __global half* yr = y + (long)r * C;
  const int nvec = C / VEC;

  floatV acc = (floatV)(0.0f);
  for (int c = 0; c < nvec; ++c) {
    const floatV v = VLOAD(c, xr);
    acc = fma(v, v, acc);
  }
  float ss = HSUM(acc);
  for (int j = nvec * VEC; j < C; ++j) {
    const float v = vload_half(j, xr);
    ss = fma(v, v, ss);
  }
  const float inv = rsqrt(ss / C + eps);

  for (int c = 0; c < nvec; ++c) VSTORE(VLOAD(c, xr) * inv * VLOAD(c, w), c, yr);
  for (int j = nvec * VEC; j < C; ++j)
    vstore_half_rte(vload_half(j, xr) * inv * vload_half(j, w), j, yr);
}
