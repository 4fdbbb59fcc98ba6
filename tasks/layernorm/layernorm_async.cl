// Staged through local memory by the work-group's asynchronous copies: one work-group per row
// copies the row into local memory TILE halves at a time (async_work_group_copy) and computes the
// exact two-pass statistics from there (the mean, then the mean of the squared deviations, with
// VEC-wide vload_halfN from local memory, each reduced by a local-memory tree); then it writes
// each chunk of y into local memory and copies it out the same way. When C <= TILE the row stays
// in local memory for all three passes and x is read from global memory once; longer rows are
// copied in again for each pass. (The barriers before the later passes' copies stay outside the
// `if (chunks > 1)`, although every work-item takes the same branch: PoCL 3.1 crashed with them
// inside.)
// @kernel layernorm_async
// @grid R
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 64
// @param TILE in [1024, 2048, 4096, 8192] default 8192
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

// The sum of every work-item's v; red is free again when it returns.
float group_sum(float v, __local float* red) {
  const int t = get_local_id(0);
  red[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float s = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return s;
}

__kernel void layernorm_async(__global const half* restrict x, __global const half* restrict w,
                              __global const half* restrict b, __global half* restrict y, int R,
                              int C, float eps) {
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
  float s = 0.0f;
  for (int k = 0; k < chunks; ++k) {
    const int base = k * TILE, n = min(TILE, C - base), nv = n / VEC;
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the previous chunk
    event_t e = async_work_group_copy(xs, xg + base, (size_t)n, 0);
    wait_group_events(1, &e);
    for (int c = t; c < nv; c += BLOCK) acc += VLOAD(c, xl);
    for (int j = nv * VEC + t; j < n; j += BLOCK) s += vload_half(j, xl);
  }
  const float mean = group_sum(s + HSUM(acc), red) / C;

  acc = (floatV)(0.0f);
  float q = 0.0f;
  for (int k = 0; k < chunks; ++k) {
    const int base = k * TILE, n = min(TILE, C - base), nv = n / VEC;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (chunks > 1) {  // the same for the whole group; a single chunk is still in xs
      event_t e = async_work_group_copy(xs, xg + base, (size_t)n, 0);
      wait_group_events(1, &e);
    }
    for (int c = t; c < nv; c += BLOCK) {
      const floatV d = VLOAD(c, xl) - mean;
      acc = fma(d, d, acc);
    }
    for (int j = nv * VEC + t; j < n; j += BLOCK) {
      const float d = vload_half(j, xl) - mean;
      q = fma(d, d, q);
    }
  }
  const float rstd = rsqrt(group_sum(q + HSUM(acc), red) / C + eps);

  for (int k = 0; k < chunks; ++k) {
    const int base = k * TILE, n = min(TILE, C - base), nv = n / VEC;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (chunks > 1) {
      event_t e = async_work_group_copy(xs, xg + base, (size_t)n, 0);
      wait_group_events(1, &e);
    }
    for (int c = t; c < nv; c += BLOCK) {
      const int col = base + c * VEC;
      VSTORE((VLOAD(c, xl) - mean) * rstd * VLOAD(0, w + col) + VLOAD(0, b + col), c, yl);
    }
    for (int j = nv * VEC + t; j < n; j += BLOCK) {
      const float g = vload_half(base + j, w), h = vload_half(base + j, b);
      vstore_half_rte((vload_half(j, xl) - mean) * rstd * g + h, j, yl);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(yg + base, ys, (size_t)n, 0);
    wait_group_events(1, &e);
  }
}
