// Shared-memory tiling: a TILE x TILE block computes a TILE x TILE tile of C, one element per
// thread, staging TILE x TILE tiles of A and B in shared memory as fp32 (converted once on the
// way in, zeros past the matrix edges), so each global element is read once per block instead of
// once per thread. Rows are padded against bank conflicts.
// @kernel gemm_tiled
// @grid ceil_div(N, TILE), ceil_div(M, TILE)
// @block TILE, TILE
// @param TILE in [8, 16, 32] default 16
// @constraint TILE * TILE <= max_work_group_size
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(TILE* TILE)
    gemm_tiled(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
               int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int n = blockIdx.x * TILE + tx;
  const int m = blockIdx.y * TILE + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (m < M && k0 + tx < K) ? __half2float(A[(long long)m * K + k0 + tx]) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && n < N) ? __half2float(B[(long long)(k0 + ty) * N + n]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (m < M && n < N) C[(long long)m * N + n] = __float2half_rn(acc);
}
