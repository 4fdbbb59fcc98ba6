// Register-cached row: one work-group per row; each work-item loads its first ITEMS vectors of VEC
// halves (vload_halfN, any row start) into private floatN registers while summing their squares,
// so x is read from memory once when C <= BLOCK * VEC * ITEMS (the default caches 4096, a
// Llama-7B/8B row); vectors past the cache are read again for the write. Local-memory tree
// reduction; fixed-trip loops over the cache are unrolled.
// @kernel rmsnorm_cached
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param VEC in [4, 8, 16] default 8
// @param ITEMS in [1, 2, 4, 8] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK * VEC * ITEMS <= 16384
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

__kernel void rmsnorm_cached(__global const half* restrict x, __global const half* restrict w,
                             __global half* restrict y, int R, int C, float eps) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * C;
  __global half* yr = y + (long)get_group_id(0) * C;
  const int nvec = C / VEC;

  floatV v[ITEMS];
  floatV acc = (floatV)(0.0f);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    v[i] = c < nvec ? VLOAD(c, xr) : (floatV)(0.0f);
    acc = fma(v[i], v[i], acc);
  }
  for (int c = t + ITEMS * BLOCK; c < nvec; c += BLOCK) {
    const floatV u = VLOAD(c, xr);
    acc = fma(u, u, acc);
  }
  float ss = HSUM(acc);
  for (int j = nvec * VEC + t; j < C; j += BLOCK) {
    const float u = vload_half(j, xr);
    ss = fma(u, u, ss);
  }
  red[t] = ss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = rsqrt(red[0] / C + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < nvec) VSTORE(v[i] * inv * VLOAD(c, w), c, yr);
  }
  for (int c = t + ITEMS * BLOCK; c < nvec; c += BLOCK)
    VSTORE(VLOAD(c, xr) * inv * VLOAD(c, w), c, yr);
  for (int j = nvec * VEC + t; j < C; j += BLOCK)
    vstore_half_rte(vload_half(j, xr) * inv * vload_half(j, w), j, yr);
}
