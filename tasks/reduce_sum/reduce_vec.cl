// Vector loads, one barrier: each work-item sums its grid-stride share of x with VEC-wide loads
// (vloadN into a vector accumulator, the ragged tail of N % VEC elements picked up by the first
// work-items), the group's sums meet in local memory after a single barrier and work-item 0 adds
// them in order (no log2(BLOCK) barrier steps, which a CPU runs as separate loops); the last
// group to take a ticket sums the partials the same way.
// @kernel reduce_vec
// @grid min(GRID, ceil_div(N, BLOCK * VEC))
// @block BLOCK
// @param BLOCK in [16, 64, 128, 256] default 64
// @param GRID in [8, 32, 128, 512] default 32
// @param VEC in [2, 4, 8, 16] default 8
// @constraint BLOCK <= max_work_group_size

#define VTYPE_(n) float##n
#define VTYPE(n) VTYPE_(n)
#define VLOAD_(n) vload##n
#define VLOAD(n) VLOAD_(n)
typedef VTYPE(VEC) vec_t;

float lanes_sum(vec_t v) {
#if VEC == 16
  const float8 v8 = v.lo + v.hi;
#elif VEC == 8
  const float8 v8 = v;
#endif
#if VEC >= 8
  const float4 v4 = v8.lo + v8.hi;
#elif VEC == 4
  const float4 v4 = v;
#endif
#if VEC >= 4
  const float2 v2 = v4.lo + v4.hi;
#else
  const float2 v2 = v;
#endif
  return v2.x + v2.y;
}

// Every work-item of the group calls it; the total is valid in work-item 0.
float group_sum(__local float* buf, float v) {
  const int lid = get_local_id(0);
  buf[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    for (int j = 1; j < BLOCK; ++j) v += buf[j];
  }
  return v;
}

__kernel void reduce_vec(__global const float* restrict x, __global float* restrict out,
                         __global float* partials, __global int* counter, int N) {
  __local float buf[BLOCK];
  __local int is_last;
  const int lid = get_local_id(0);
  const int groups = get_num_groups(0);
  const long gid = get_global_id(0);
  const long stride = (long)groups * BLOCK;
  const long nvec = N / VEC;
  vec_t acc = (vec_t)(0.0f);
  for (long i = gid; i < nvec; i += stride) acc += VLOAD(VEC)(i, x);
  float s = lanes_sum(acc);
  if (gid < N - nvec * VEC) s += x[nvec * VEC + gid];
  s = group_sum(buf, s);
  if (lid == 0) {
    partials[get_group_id(0)] = s;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    is_last = atomic_inc(counter) == groups - 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  __global volatile float* ready = partials;
  s = 0.0f;
  for (int g = lid; g < groups; g += BLOCK) {
    s += ready[g];
    ready[g] = 0.0f;
  }
  s = group_sum(buf, s);
  if (lid == 0) {
    out[0] = s;
    counter[0] = 0;
  }
}
