// One work-group per row, three passes like the baseline (max, sum, write), but each work-item
// reads VEC consecutive halves per vload_halfN (which needs only 2-byte alignment, so any row
// start works) and reduces them in registers before the local-memory tree. The N % VEC tail is
// handled one element at a time.
// VEC stops at 8 (16 halves would be two 16-byte loads on a GPU anyway): at VEC 16 PoCL 3.1
// (Debian 12, pthread device) dies with SIGSEGV on rows that start at an odd element (R 2, N 33),
// while the same rows run at VEC 4 and 8, and so do the norms' 16-wide loads of odd rows.
// @kernel softmax_vec
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param VEC in [4, 8] default 8
// @constraint BLOCK <= max_work_group_size

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload_half, VEC)
#define VSTORE CAT(CAT(vstore_half, VEC), _rte)

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
#define HMAX CAT(hmax, VEC)
#define HSUM CAT(hsum, VEC)

__kernel void softmax_vec(__global const half* restrict x, __global half* restrict y, int R,
                          int N) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * N;
  __global half* yr = y + (long)get_group_id(0) * N;
  const int nvec = N / VEC;

  float m = -FLT_MAX;
  for (int c = t; c < nvec; c += BLOCK) m = fmax(m, HMAX(VLOAD(0, xr + c * VEC)));
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
  for (int c = t; c < nvec; c += BLOCK) sum += HSUM(exp(VLOAD(0, xr + c * VEC) - m));
  for (int j = nvec * VEC + t; j < N; j += BLOCK) sum += exp(vload_half(j, xr) - m);
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / red[0];

  for (int c = t; c < nvec; c += BLOCK)
    VSTORE(exp(VLOAD(0, xr + c * VEC) - m) * inv, 0, yr + c * VEC);
  for (int j = nvec * VEC + t; j < N; j += BLOCK)
    vstore_half_rte(exp(vload_half(j, xr) - m) * inv, j, yr);
}
