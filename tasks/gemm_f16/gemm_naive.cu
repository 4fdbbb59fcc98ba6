// One thread per output element, fp32 accumulation, read-only cached loads and an unrolled K
// loop with UNROLL independent partial sums (more loads in flight). The block shape is tunable:
// BX threads along N (coalesced B and C), BY along M.
// @kernel gemm_naive
// @grid ceil_div(N, BX), ceil_div(M, BY)
// @block BX, BY
// @param BX in [16, 32, 64, 128] default 32
// @param BY in [1, 2, 4, 8, 16] default 8
// @param UNROLL in [1, 2, 4, 8] default 4
// @constraint BX * BY <= max_work_group_size
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BX* BY)
    gemm_naive(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
               int M, int N, int K) {
  const int n = blockIdx.x * BX + threadIdx.x;
  const int m = blockIdx.y * BY + threadIdx.y;
  if (m >= M || n >= N) return;
  const __half* a = A + (long long)m * K;
  const __half* b = B + n;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  int k = 0;
  for (; k + UNROLL <= K; k += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc[u] += __half2float(__ldg(a + k + u)) * __half2float(__ldg(b + (long long)(k + u) * N));
  }
  for (; k < K; ++k)
    acc[0] += __half2float(__ldg(a + k)) * __half2float(__ldg(b + (long long)k * N));
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) sum += acc[u];
  C[(long long)m * N + n] = __float2half_rn(sum);
}
