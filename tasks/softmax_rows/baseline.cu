// Baseline: one block per row, scalar loads, three passes over the row (max, sum of exponentials,
// write), each reduced with a shared-memory tree.
// @kernel softmax_baseline
// @grid R
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256
#include <cuda_fp16.h>

extern "C" __global__ void softmax_baseline(const __half* x, __half* y, int R, int N) {
  __shared__ float red[BLOCK];
  const int t = threadIdx.x;
  const __half* xr = x + (long long)blockIdx.x * N;
  __half* yr = y + (long long)blockIdx.x * N;

  float m = -3.0e38f;  // below every fp16 value
  for (int j = t; j < N; j += BLOCK) m = fmaxf(m, __half2float(xr[j]));
  red[t] = m;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  float sum = 0.0f;
  for (int j = t; j < N; j += BLOCK) sum += expf(__half2float(xr[j]) - m);
  red[t] = sum;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];

  for (int j = t; j < N; j += BLOCK) yr[j] = __float2half_rn(expf(__half2float(xr[j]) - m) * inv);
}
