// Reference: one thread per row, three sequential passes (max, sum, write) in double precision.
// @kernel softmax_reference
// @grid ceil_div(R, 32)
// @block 32
#include <cuda_fp16.h>

extern "C" __global__ void softmax_reference(const __half* x, __half* y, int R, int N) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const __half* xr = x + (long long)r * N;
  __half* yr = y + (long long)r * N;
  double m = __half2float(xr[0]);
  for (int j = 1; j < N; ++j) m = fmax(m, (double)__half2float(xr[j]));
  double sum = 0.0;
  for (int j = 0; j < N; ++j) sum += exp((double)__half2float(xr[j]) - m);
  for (int j = 0; j < N; ++j)
    yr[j] = __float2half_rn((float)(exp((double)__half2float(xr[j]) - m) / sum));
}
