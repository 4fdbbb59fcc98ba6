// Warp shuffles and vector loads: each thread sums its grid-stride share of x with VEC-wide
// loads (float2/float4, the ragged tail of N % VEC elements picked up by the first threads), a
// warp combines its lanes with __shfl_down_sync, the warps' sums meet in one warp through a small
// shared array, and the last block to take a ticket sums the partials the same way.
// @kernel reduce_shfl
// @grid min(GRID, ceil_div(N, BLOCK * VEC))
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param GRID in [132, 264, 528, 1056] default 528
// @param VEC in [1, 2, 4] default 4
// @constraint BLOCK <= max_work_group_size

#if VEC == 4
typedef float4 vec_t;
__device__ __forceinline__ float lanes_sum(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}
#elif VEC == 2
typedef float2 vec_t;
__device__ __forceinline__ float lanes_sum(float2 v) {
  return v.x + v.y;
}
#else
typedef float vec_t;
__device__ __forceinline__ float lanes_sum(float v) {
  return v;
}
#endif

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int h = 16; h > 0; h >>= 1) v += __shfl_down_sync(0xffffffffu, v, h);
  return v;  // the total in lane 0
}

// Every thread of the block calls it; the total lands in thread 0.
__device__ __forceinline__ float block_sum(float* warp_sums, float v) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.0f);
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce_shfl(const float* __restrict__ x, float* __restrict__ out, float* partials, int* counter,
                int N) {
  __shared__ float warp_sums[BLOCK / 32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  const long long gid = (long long)blockIdx.x * BLOCK + tid;
  const long long stride = (long long)gridDim.x * BLOCK;
  const long long nvec = N / VEC;
  const vec_t* xv = reinterpret_cast<const vec_t*>(x);
  float s = 0.0f;
  for (long long i = gid; i < nvec; i += stride) s += lanes_sum(xv[i]);
  if (gid < N - nvec * VEC) s += x[nvec * VEC + gid];
  s = block_sum(warp_sums, s);
  if (tid == 0) {
    partials[blockIdx.x] = s;
    __threadfence();
    is_last = atomicAdd(counter, 1) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  s = 0.0f;
  for (int b = tid; b < (int)gridDim.x; b += BLOCK) {
    s += __ldcg(partials + b);
    partials[b] = 0.0f;
  }
  s = block_sum(warp_sums, s);
  if (tid == 0) {
    out[0] = s;
    counter[0] = 0;
  }
}
