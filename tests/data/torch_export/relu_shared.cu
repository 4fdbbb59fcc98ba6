// ReLU for the task `kfoundry import` writes from kernelbench/19_ReLU.py, in CUDA, each element
// staged through dynamic shared memory so the launch rule has all of @grid, @block and @shared.
// @kernel relu_shared
// @param BLOCK in [64, 128] default 128
// @grid ceil_div(batch_size * dim, BLOCK)
// @block BLOCK
// @shared BLOCK * 4
__global__ void relu_shared(const float* __restrict__ x, float* __restrict__ out, int batch_size,
                            int dim) {
  extern __shared__ float stage[];
  long i = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (i < (long)batch_size * dim) {
    stage[threadIdx.x] = x[i];
    out[i] = fmaxf(stage[threadIdx.x], 0.0f);
  }
}
