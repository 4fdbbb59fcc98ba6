// Several rows per block, one row per team of TPR lanes (a warp or a part of one), so a block of
// BLOCK threads covers BLOCK / TPR rows. Scalar coalesced loads; the sum of squares is reduced
// within the team by shuffles (no shared memory, no block barrier); a second pass over the row
// writes y. Lanes past the last row stay for the shuffles but read and write nothing.
// @kernel rmsnorm_warp
// @grid ceil_div(R, BLOCK // TPR)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param TPR in [4, 8, 16, 32] default 32
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rmsnorm_warp(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ y,
                 int R, int C, float eps) {
  const int row = blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
  const int lane = threadIdx.x % TPR;
  const bool active = row < R;
  const int n = active ? C : 0;
  const __half* xr = x + (long long)(active ? row : 0) * C;
  __half* yr = y + (long long)(active ? row : 0) * C;

  float ss = 0.0f;
  for (int c = lane; c < n; c += TPR) {
    const float v = __half2float(xr[c]);
    ss = fmaf(v, v, ss);
  }
  for (int o = TPR / 2; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  const float inv = rsqrtf(ss / C + eps);

  for (int c = lane; c < n; c += TPR)
    yr[c] = __float2half_rn(__half2float(xr[c]) * inv * __half2float(w[c]));
}
