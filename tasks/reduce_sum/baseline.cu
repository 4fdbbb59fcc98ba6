// Baseline: the classic first reduction. Each thread sums a grid-stride share of x, the block
// combines its threads in a shared-memory tree and writes its partial; the last block to take a
// ticket (threadfence + atomic counter) sums the partials the same way and writes out[0]. It
// leaves the workspaces at zero.
// @kernel reduce_sum_baseline
// @grid min(ceil_div(N, BLOCK), 1024)
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256

extern "C" __global__ void reduce_sum_baseline(const float* x, float* out, float* partials,
                                               int* counter, int N) {
  __shared__ float buf[BLOCK];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * BLOCK + tid; i < N; i += (long long)gridDim.x * BLOCK)
    s += x[i];
  buf[tid] = s;
  __syncthreads();
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (tid < h) buf[tid] += buf[tid + h];
    __syncthreads();
  }
  if (tid == 0) {
    partials[blockIdx.x] = buf[0];
    __threadfence();
    is_last = atomicAdd(counter, 1) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  s = 0.0f;
  for (int i = tid; i < (int)gridDim.x; i += BLOCK) {
    s += __ldcg(partials + i);
    partials[i] = 0.0f;
  }
  buf[tid] = s;
  __syncthreads();
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (tid < h) buf[tid] += buf[tid + h];
    __syncthreads();
  }
  if (tid == 0) {
    out[0] = buf[0];
    counter[0] = 0;
  }
}
