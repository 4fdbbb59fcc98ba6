// Reference: one thread per row, two passes for the statistics (the mean, then the mean of the
// squared deviations) and the normalisation in double precision, one rounding to fp16 at the end.
// @kernel layernorm_reference
// @grid ceil_div(R, 32)
// @block 32
#include <cuda_fp16.h>

extern "C" __global__ void layernorm_reference(const __half* x, const __half* w, const __half* b,
                                               __half* y, int R, int C, float eps) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const __half* xr = x + (long long)r * C;
  __half* yr = y + (long long)r * C;
  double s = 0.0;
  for (int c = 0; c < C; ++c) s += (double)__half2float(xr[c]);
  const double mean = s / C;
  double q = 0.0;
  for (int c = 0; c < C; ++c) {
    const double d = (double)__half2float(xr[c]) - mean;
    q += d * d;
  }
  const double rstd = 1.0 / sqrt(q / C + (double)eps);
  for (int c = 0; c < C; ++c)
    yr[c] = __double2half(((double)__half2float(xr[c]) - mean) * rstd * (double)__half2float(w[c]) +
                          (double)__half2float(b[c]));
}
