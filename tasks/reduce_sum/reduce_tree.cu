// Shared-memory tree with more loads in flight: each thread keeps UNROLL independent
// accumulators over its grid-stride share (UNROLL scalar loads issued before the adds), the block
// combines its threads in a shared-memory tree whose last 32 steps run in one warp, and the last
// block to take a ticket (threadfence + atomic counter) sums the partials in index order.
// @kernel reduce_tree
// @grid min(GRID, ceil_div(N, BLOCK))
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param GRID in [132, 264, 528, 1056] default 528
// @param UNROLL in [1, 2, 4, 8] default 4
// @constraint BLOCK <= max_work_group_size

// Sums buf[0..BLOCK) into buf[0]; every thread of the block calls it.
__device__ __forceinline__ float block_tree_sum(float* buf, float v) {
  const int tid = threadIdx.x;
  buf[tid] = v;
  __syncthreads();
#pragma unroll
  for (int h = BLOCK / 2; h >= 32; h >>= 1) {
    if (tid < h) buf[tid] = v = v + buf[tid + h];
    __syncthreads();
  }
  if (tid < 32) {
    volatile float* w = buf;
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) {
      const float other = w[tid + h];
      __syncwarp();
      w[tid] = v = v + other;
      __syncwarp();
    }
  }
  return v;  // the total in thread 0
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce_tree(const float* __restrict__ x, float* __restrict__ out, float* partials, int* counter,
                int N) {
  __shared__ float buf[BLOCK];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  const long long stride = (long long)gridDim.x * BLOCK;
  long long i = (long long)blockIdx.x * BLOCK + tid;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  for (; i + (UNROLL - 1) * stride < N; i += UNROLL * stride) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += x[i + u * stride];
  }
  for (; i < N; i += stride) acc[0] += x[i];
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  s = block_tree_sum(buf, s);
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
  s = block_tree_sum(buf, s);
  if (tid == 0) {
    out[0] = s;
    counter[0] = 0;
  }
}
