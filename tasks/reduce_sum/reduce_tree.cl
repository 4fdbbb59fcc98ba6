// Local-memory tree with more loads in flight: each work-item keeps UNROLL independent
// accumulators over its grid-stride share, the group combines its work-items in a local-memory
// tree, and the last group to take a ticket (fence + atomic counter) sums the partials in index
// order.
// @kernel reduce_tree
// @grid min(GRID, ceil_div(N, BLOCK))
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param GRID in [8, 32, 128, 512] default 32
// @param UNROLL in [1, 2, 4, 8] default 4
// @constraint BLOCK <= max_work_group_size

// Sums the group's values into buf[0]; every work-item of the group calls it.
float group_tree_sum(__local float* buf, float v) {
  const int lid = get_local_id(0);
  buf[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (lid < h) buf[lid] += buf[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return buf[0];
}

__kernel void reduce_tree(__global const float* restrict x, __global float* restrict out,
                          __global float* partials, __global int* counter, int N) {
  __local float buf[BLOCK];
  __local int is_last;
  const int lid = get_local_id(0);
  const int groups = get_num_groups(0);
  const long stride = (long)groups * BLOCK;
  long i = get_global_id(0);
  float acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  for (; i + (UNROLL - 1) * stride < N; i += UNROLL * stride) {
    for (int u = 0; u < UNROLL; ++u) acc[u] += x[i + u * stride];
  }
  for (; i < N; i += stride) acc[0] += x[i];
  float s = 0.0f;
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  s = group_tree_sum(buf, s);
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
  s = group_tree_sum(buf, s);
  if (lid == 0) {
    out[0] = s;
    counter[0] = 0;
  }
}
