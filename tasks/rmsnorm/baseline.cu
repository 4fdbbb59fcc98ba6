// Baseline: one block per row, scalar loads; the sum of squares reduced with a shared-memory
// tree, then a second pass over the row (x again, and w) writes y.
// @kernel rmsnorm_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_baseline(const __half* x, const __half* w, __half* y, int R,
                                            int C, float eps) {
  __shared__ float red[BLOCK];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * C;
  __half* yr = y + (long long)blockIdx.x * C;

  float ss = 0.0f;
  for (int c = t; c < C; c += BLOCK) {
    const float v = __half2float(xr[c]);
    ss += v * v;
  }
  red[t] = ss;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float inv = rsqrtf(red[0] / C + eps);

  for (int c = t; c < C; c += BLOCK)
    yr[c] = __float2half_rn(__half2float(xr[c]) * inv * __half2float(w[c]));
}
