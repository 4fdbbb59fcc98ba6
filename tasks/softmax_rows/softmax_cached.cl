// Local-memory row cache: one work-group per row stages the first CACHE elements of its row in
// local memory as fp32 while finding the max (VEC-wide loads), turns them into exponentials in
// place while summing, and scales them into y, so x is read once when N <= CACHE. The part of a
// longer row past the cache is read again in each pass.
// @kernel softmax_cached
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param VEC in [4, 8] default 8
// @param CACHE in [2048, 4096, 8192, 32768] default 8192
// @constraint BLOCK <= max_work_group_size
// @constraint (CACHE + BLOCK) * 4 <= local_mem_bytes

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload_half, VEC)
#define VLOADF CAT(vload, VEC)
#define VSTOREF CAT(vstore, VEC)
#define VSTORE CAT(CAT(vstore_half, VEC), _rte)

float hmax4(float4 v) {
  return fmax(fmax(v.x, v.y), fmax(v.z, v.w));
}
float hmax8(float8 v) {
  return hmax4(fmax(v.lo, v.hi));
}
float hsum4(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}
float hsum8(float8 v) {
  return hsum4(v.lo + v.hi);
}
#define HMAX CAT(hmax, VEC)
#define HSUM CAT(hsum, VEC)

__kernel void softmax_cached(__global const half* restrict x, __global half* restrict y, int R,
                             int N) {
  __local float row[CACHE];
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * N;
  __global half* yr = y + (long)get_group_id(0) * N;
  const int nvec = N / VEC;
  const int cvec = min(nvec, CACHE / VEC);  // vectors c < cvec are cached (CACHE % VEC == 0)

  float m = -FLT_MAX;
  for (int c = t; c < nvec; c += BLOCK) {
    const floatV v = VLOAD(0, xr + c * VEC);
    if (c < cvec) VSTOREF(v, 0, row + c * VEC);
    m = fmax(m, HMAX(v));
  }
  for (int j = nvec * VEC + t; j < N; j += BLOCK) m = fmax(m, vload_half(j, xr));
  red[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  float sum = 0.0f;
  for (int c = t; c < cvec; c += BLOCK) {
    const floatV e = exp(VLOADF(0, row + c * VEC) - m);
    VSTOREF(e, 0, row + c * VEC);
    sum += HSUM(e);
  }
  for (int c = cvec + t; c < nvec; c += BLOCK) sum += HSUM(exp(VLOAD(0, xr + c * VEC) - m));
  for (int j = nvec * VEC + t; j < N; j += BLOCK) sum += exp(vload_half(j, xr) - m);
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / red[0];

  for (int c = t; c < cvec; c += BLOCK) VSTORE(VLOADF(0, row + c * VEC) * inv, 0, yr + c * VEC);
  for (int c = cvec + t; c < nvec; c += BLOCK)
    VSTORE(exp(VLOAD(0, xr + c * VEC) - m) * inv, 0, yr + c * VEC);
  for (int j = nvec * VEC + t; j < N; j += BLOCK)
    vstore_half_rte(exp(vload_half(j, xr) - m) * inv, j, yr);
}
