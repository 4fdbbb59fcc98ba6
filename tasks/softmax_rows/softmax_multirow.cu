// Several rows per block, for short rows: TPR consecutive threads (a warp or a part of one) own a
// row, so a block of BLOCK threads covers BLOCK / TPR rows. Scalar coalesced loads, three passes,
// every reduction within the TPR lanes by shuffles: no shared memory and no block barrier. Lanes
// past the last row stay in the warp for the shuffles but read and write nothing.
// @kernel softmax_multirow
// @grid ceil_div(R, BLOCK // TPR)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param TPR in [4, 8, 16, 32] default 32
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

constexpr float kLowest = -3.0e38f;  // below every fp16 value, and finite

extern "C" __global__ void __launch_bounds__(BLOCK)
    softmax_multirow(const __half* __restrict__ x, __half* __restrict__ y, int R, int N) {
  const int row = blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
  const int lane = threadIdx.x % TPR;
  const bool active = row < R;
  const int n = active ? N : 0;
  const __half* xr = x + (long long)(active ? row : 0) * N;
  __half* yr = y + (long long)(active ? row : 0) * N;

  float m = kLowest;
  for (int j = lane; j < n; j += TPR) m = fmaxf(m, __half2float(xr[j]));
#pragma unroll
  for (int o = TPR / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));

  float sum = 0.0f;
  for (int j = lane; j < n; j += TPR) sum += __expf(__half2float(xr[j]) - m);
#pragma unroll
  for (int o = TPR / 2; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  const float inv = 1.0f / sum;

  for (int j = lane; j < n; j += TPR)
    yr[j] = __float2half_rn(__expf(__half2float(xr[j]) - m) * inv);
}
