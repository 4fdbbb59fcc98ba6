// Staged through local memory by the work-group's asynchronous copies: one work-group per row
// copies the row into local memory TILE halves at a time (async_work_group_copy), sums the squares
// from there (VEC-wide vload_halfN from local memory), then writes each chunk of y into local
// memory and copies it out the same way. When C <= TILE the row stays in local memory between the
// two passes and x is read from global memory once; longer rows are copied in again for the
// second pass. (The barrier before the second pass's copy stays outside the `if (chunks > 1)`,
// although every work-item takes the same branch: PoCL 3.1 crashed with it inside.)
// @kernel rmsnorm_async
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param TILE in [1024, 2048, 4096, 8192] default 4096
// @param VEC in [4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint 2 * 2 * TILE + 4 * BLOCK <= local_mem_bytes
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

__kernel void rmsnorm_async(__global const half* restrict x, __global const half* restrict w,
                            __global half* restrict y, int R, int C, float eps) {
  __local ushort xs[TILE];  // fp16 bits: OpenCL C 1.2 has no half arrays without cl_khr_fp16
  __local ushort ys[TILE];
  __local float red[BLOCK];
  __local const half* xl = (__local const half*)xs;
  __local half* yl = (__local half*)ys;
  const int t = get_local_id(0);
  __global const ushort* xg = (__global const ushort*)(x + (long)get_group_id(0) * C);
  __global ushort* yg = (__global ushort*)(y + (long)get_group_id(0) * C);
  const int chunks = (C + TILE - 1) / TILE;

  floatV acc = (floatV)(0.0f);
  float ss = 0.0f;
  for (int k = 0; k < chunks; ++k) {
    const int base = k * TILE, n = min(TILE, C - base), nv = n / VEC;
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the previous chunk
    event_t e = async_work_group_copy(xs, xg + base, (size_t)n, 0);
    wait_group_events(1, &e);
    for (int c = t; c < nv; c += BLOCK) {
      const floatV v = VLOAD(c, xl);
      acc = fma(v, v, acc);
    }
    for (int j = nv * VEC + t; j < n; j += BLOCK) {
      const float v = vload_half(j, xl);
      ss = fma(v, v, ss);
    }
  }
  red[t] = ss + HSUM(acc);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = rsqrt(red[0] / C + eps);

  for (int k = 0; k < chunks; ++k) {
    const int base = k * TILE, n = min(TILE, C - base), nv = n / VEC;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (chunks > 1) {  // the same for the whole group; a single chunk is still in xs
      event_t e = async_work_group_copy(xs, xg + base, (size_t)n, 0);
      wait_group_events(1, &e);
    }
    for (int c = t; c < nv; c += BLOCK)
      VSTORE(VLOAD(c, xl) * inv * VLOAD(0, w + base + c * VEC), c, yl);
    for (int j = nv * VEC + t; j < n; j += BLOCK)
      vstore_half_rte(vload_half(j, xl) * inv * vload_half(base + j, w), j, yl);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(yg + base, ys, (size_t)n, 0);
    wait_group_events(1, &e);
  }
}
