// Per-warp partials and atomic tickets, no shared memory and no block barrier: each warp sums its
// lanes' grid-stride shares (float4 loads, the ragged tail by the first threads) with shuffles,
// lane 0 stores the warp's partial and takes a ticket from the counter; the warp holding the last
// ticket sums all the warps' partials in index order. Up to 8192 warps (the workspace's size).
// @kernel reduce_warp_ticket
// @grid min(GRID, ceil_div(N, BLOCK * 4))
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param GRID in [132, 264, 528, 1056] default 528
// @constraint GRID * (BLOCK // 32) <= 8192

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int h = 16; h > 0; h >>= 1) v += __shfl_down_sync(0xffffffffu, v, h);
  return v;  // the total in lane 0
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce_warp_ticket(const float* __restrict__ x, float* __restrict__ out, float* partials,
                       int* counter, int N) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * BLOCK + threadIdx.x) >> 5;
  const int warps = gridDim.x * (BLOCK / 32);
  const long long gid = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long stride = (long long)gridDim.x * BLOCK;
  const long long nvec = N / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float s = 0.0f;
  for (long long i = gid; i < nvec; i += stride) {
    const float4 v = x4[i];
    s += (v.x + v.y) + (v.z + v.w);
  }
  if (gid < N - nvec * 4) s += x[nvec * 4 + gid];
  s = warp_sum(s);
  int ticket = 0;
  if (lane == 0) {
    partials[warp] = s;
    __threadfence();
    ticket = atomicAdd(counter, 1);
  }
  if (__shfl_sync(0xffffffffu, ticket, 0) != warps - 1) return;
  __threadfence();
  s = 0.0f;
  for (int w = lane; w < warps; w += 32) {
    s += __ldcg(partials + w);
    partials[w] = 0.0f;
  }
  s = warp_sum(s);
  if (lane == 0) {
    out[0] = s;
    counter[0] = 0;
  }
}
