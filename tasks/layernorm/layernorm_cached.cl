// Register-cached row: one work-group per row; each work-item loads its first ITEMS vectors of VEC
// halves (vload_halfN, any row start) into private floatN registers, so x is read from memory once
// when C <= BLOCK * VEC * ITEMS (the default caches 8192, a whole 4544-wide Falcon-7B row);
// vectors past the cache are read again in each pass. Exact two-pass statistics from the
// registers (the mean, then the mean of the squared deviations), each reduced by a local-memory
// tree; fixed-trip loops over the cache are unrolled.
// @kernel layernorm_cached
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param VEC in [4, 8, 16] default 8
// @param ITEMS in [1, 2, 4, 8, 16] default 16
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

__kernel void layernorm_cached(__global const half* restrict x, __global const half* restrict w,
                               __global const half* restrict b, __global half* restrict y, int R,
                               int C, float eps) {
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
    acc += v[i];
  }
  for (int c = t + ITEMS * BLOCK; c < nvec; c += BLOCK) acc += VLOAD(c, xr);
  float s = HSUM(acc);
  for (int j = nvec * VEC + t; j < C; j += BLOCK) s += vload_half(j, xr);
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean = red[0] / C;
  barrier(CLK_LOCAL_MEM_FENCE);

  acc = (floatV)(0.0f);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (t + i * BLOCK < nvec) {
      const floatV d = v[i] - mean;
      acc = fma(d, d, acc);
    }
  }
  for (int c = t + ITEMS * BLOCK; c < nvec; c += BLOCK) {
    const floatV d = VLOAD(c, xr) - mean;
    acc = fma(d, d, acc);
  }
  float q = HSUM(acc);
  for (int j = nvec * VEC + t; j < C; j += BLOCK) {
    const float d = vload_half(j, xr) - mean;
    q = fma(d, d, q);
  }
  red[t] = q;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float rstd = rsqrt(red[0] / C + eps);

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int c = t + i * BLOCK;
    if (c < nvec) VSTORE((v[i] - mean) * rstd * VLOAD(c, w) + VLOAD(c, b), c, yr);
  }
  for (int c = t + ITEMS * BLOCK; c < nvec; c += BLOCK)
    VSTORE((VLOAD(c, xr) - mean) * rstd * VLOAD(c, w) + VLOAD(c, b), c, yr);
  for (int j = nvec * VEC + t; j < C; j += BLOCK)
    vstore_half_rte((vload_half(j, xr) - mean) * rstd * vload_half(j, w) + vload_half(j, b), j, yr);
}
