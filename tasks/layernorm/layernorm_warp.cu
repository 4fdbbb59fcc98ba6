// Several rows per block, one row per team of TPR lanes (a warp or a part of one), so a block of
// BLOCK threads covers BLOCK / TPR rows. Single pass for the statistics: each lane keeps a running
// Welford state (count, mean, sum of squared deviations) over its scalar coalesced loads, and the
// team merges the states by shuffles (Chan's pairwise combination: no cancellation, unlike a sum
// and a sum of squares); a second pass writes y. No shared memory, no block barrier. Lanes past
// the last row stay for the shuffles but read and write nothing.
// @kernel layernorm_warp
// @grid ceil_div(R, BLOCK // TPR)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param TPR in [4, 8, 16, 32] default 32
// @constraint BLOCK <= max_work_group_size
// @constraint BLOCK % 32 == 0
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    layernorm_warp(const __half* __restrict__ x, const __half* __restrict__ w,
                   const __half* __restrict__ b, __half* __restrict__ y, int R, int C, float eps) {
  const int row = blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
  const int lane = threadIdx.x % TPR;
  const bool active = row < R;
  const int n = active ? C : 0;
  const __half* xr = x + (long long)(active ? row : 0) * C;
  __half* yr = y + (long long)(active ? row : 0) * C;

  float cnt = 0.0f, mean = 0.0f, m2 = 0.0f;
  for (int c = lane; c < n; c += TPR) {
    const float v = __half2float(xr[c]);
    cnt += 1.0f;
    const float d = v - mean;
    mean += d / cnt;
    m2 = fmaf(d, v - mean, m2);
  }
  for (int o = TPR / 2; o > 0; o >>= 1) {
    const float co = __shfl_xor_sync(0xffffffffu, cnt, o);
    const float mo = __shfl_xor_sync(0xffffffffu, mean, o);
    const float qo = __shfl_xor_sync(0xffffffffu, m2, o);
    // Both lanes of a pair merge (lower lane's state, upper lane's state) in the same order, so
    // they get the same bits, and after the last step every lane of the team holds the same.
    const bool upper = (lane & o) != 0;
    const float na = upper ? co : cnt, ma = upper ? mo : mean, qa = upper ? qo : m2;
    const float nb = upper ? cnt : co, mb = upper ? mean : mo, qb = upper ? m2 : qo;
    const float total = na + nb;
    if (total > 0.0f) {
      const float d = mb - ma, f = nb / total;
      mean = fmaf(d, f, ma);
      m2 = qa + qb + d * d * na * f;
      cnt = total;
    }
  }
  const float rstd = rsqrtf(m2 / C + eps);

  for (int c = lane; c < n; c += TPR)
    yr[c] = __float2half_rn((__half2float(xr[c]) - mean) * rstd * __half2float(w[c]) +
                            __half2float(b[c]));
}
