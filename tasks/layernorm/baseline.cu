// Baseline: one block per row, scalar loads, three passes over the row: the mean and then the
// variance (the mean of the squared deviations), each reduced with a shared-memory tree, then the
// normalised row written.
// @kernel layernorm_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256
#include <cuda_fp16.h>

extern "C" __global__ void layernorm_baseline(const __half* x, const __half* w, const __half* b,
                                              __half* y, int R, int C, float eps) {
  __shared__ float red[BLOCK];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * C;
  __half* yr = y + (long long)blockIdx.x * C;

  float s = 0.0f;
  for (int c = t; c < C; c += BLOCK) s += __half2float(xr[c]);
  red[t] = s;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  const float mean = red[0] / C;
  __syncthreads();

  float q = 0.0f;
  for (int c = t; c < C; c += BLOCK) {
    const float d = __half2float(xr[c]) - mean;
    q += d * d;
  }
  red[t] = q;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  const float rstd = rsqrtf(red[0] / C + eps);

  for (int c = t; c < C; c += BLOCK)
    yr[c] = __float2half_rn((__half2float(xr[c]) - mean) * rstd * __half2float(w[c]) +
                            __half2float(b[c]));
}
