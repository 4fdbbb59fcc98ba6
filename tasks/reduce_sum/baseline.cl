// Baseline: the classic first reduction. Each work-item sums a grid-stride share of x, the group
// combines its work-items in a local-memory tree and writes its partial; the last group to take a
// ticket (fence + atomic counter) sums the partials the same way and writes out[0]. It leaves the
// workspaces at zero.
// @kernel reduce_sum_baseline
// @grid min(ceil_div(N, BLOCK), 1024)
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

__kernel void reduce_sum_baseline(__global const float* x, __global float* out,
                                  __global float* partials, __global int* counter, int N) {
  __local float buf[BLOCK];
  __local int is_last;
  const int lid = get_local_id(0);
  const int groups = get_num_groups(0);
  float s = 0.0f;
  for (long i = get_global_id(0); i < N; i += (long)groups * BLOCK) s += x[i];
  buf[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (lid < h) buf[lid] += buf[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    partials[get_group_id(0)] = buf[0];
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    is_last = atomic_inc(counter) == groups - 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  __global volatile float* ready = partials;
  s = 0.0f;
  for (int i = lid; i < groups; i += BLOCK) {
    s += ready[i];
    ready[i] = 0.0f;
  }
  buf[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (lid < h) buf[lid] += buf[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    out[0] = buf[0];
    counter[0] = 0;
  }
}
