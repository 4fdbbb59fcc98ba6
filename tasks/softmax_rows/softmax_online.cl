// Online softmax: one work-group per row reads the row once for the reduction, each work-item
// keeping a running (max, sum of exponentials relative to that max) over VEC-element vectors; the
// pairs are merged by a local-memory tree. A second pass writes y: two reads of x instead of three.
// VEC stops at 8 (16 halves would be two 16-byte loads on a GPU anyway): at VEC 16 PoCL 3.1
// (Debian 12, pthread device) dies with SIGSEGV on rows that start at an odd element (R 2, N 33),
// while the same rows run at VEC 4 and 8, and so do the norms' 16-wide loads of odd rows.
// @kernel softmax_online
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

// The state (m, d) of two sets merged: d is the sum of exp(v - m) over the values seen. -FLT_MAX
// (no value yet) is finite, so two empty states merge to d = 0, not NaN.
float2 merge(float2 a, float2 b) {
  const float mn = fmax(a.x, b.x);
  return (float2)(mn, a.y * exp(a.x - mn) + b.y * exp(b.x - mn));
}

__kernel void softmax_online(__global const half* restrict x, __global half* restrict y, int R,
                             int N) {
  __local float2 red[BLOCK];
  const int t = get_local_id(0);
  __global const half* xr = x + (long)get_group_id(0) * N;
  __global half* yr = y + (long)get_group_id(0) * N;
  const int nvec = N / VEC;

  float2 st = (float2)(-FLT_MAX, 0.0f);
  for (int c = t; c < nvec; c += BLOCK) {
    const floatV v = VLOAD(0, xr + c * VEC);
    const float mn = fmax(st.x, HMAX(v));
    st = (float2)(mn, st.y * exp(st.x - mn) + HSUM(exp(v - mn)));
  }
  for (int j = nvec * VEC + t; j < N; j += BLOCK) st = merge(st, (float2)(vload_half(j, xr), 1.0f));
  red[t] = st;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = merge(red[t], red[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float m = red[0].x, inv = 1.0f / red[0].y;

  for (int c = t; c < nvec; c += BLOCK)
    VSTORE(exp(VLOAD(0, xr + c * VEC) - m) * inv, 0, yr + c * VEC);
  for (int j = nvec * VEC + t; j < N; j += BLOCK)
    vstore_half_rte(exp(vload_half(j, xr) - m) * inv, j, yr);
}
