// Per-work-item partials and atomic tickets, no local memory and no barrier: each work-item sums
// its grid-stride share of x with float4 loads (the ragged tail by the first work-items), stores
// its partial and takes a ticket from the counter; the work-item holding the last ticket adds all
// the partials in index order. Up to 8192 work-items (the workspace's size).
// @kernel reduce_ticket
// @grid min(GRID, ceil_div(N, BLOCK * 4))
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 64
// @param GRID in [4, 8, 32, 64] default 8
// @constraint GRID * BLOCK <= 8192 and BLOCK <= max_work_group_size

__kernel void reduce_ticket(__global const float* restrict x, __global float* restrict out,
                            __global float* partials, __global int* counter, int N) {
  const long gid = get_global_id(0);
  const int items = get_global_size(0);
  const long nvec = N / 4;
  float4 acc = (float4)(0.0f);
  for (long i = gid; i < nvec; i += items) acc += vload4(i, x);
  float s = (acc.x + acc.y) + (acc.z + acc.w);
  if (gid < N - nvec * 4) s += x[nvec * 4 + gid];
  partials[gid] = s;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  if (atomic_inc(counter) != items - 1) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  __global volatile float* ready = partials;
  s = 0.0f;
  for (int j = 0; j < items; ++j) {
    s += ready[j];
    ready[j] = 0.0f;
  }
  out[0] = s;
  counter[0] = 0;
}
