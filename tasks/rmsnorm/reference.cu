// Reference: one thread per row, the sum of squares and the scaling in double precision, one
// rounding to fp16 at the end.
// @kernel rmsnorm_reference
// @grid ceil_div(R, 32)
// @block 32
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_reference(const __half* x, const __half* w, __half* y, int R,
                                             int C, float eps) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const __half* xr = x + (long long)r * C;
  __half* yr = y + (long long)r * C;
  double ss = 0.0;
  for (int c = 0; c < C; ++c) {
    const double v = __half2float(xr[c]);
    ss += v * v;
  }
  const double inv = 1.0 / sqrt(ss / C + (double)eps);
  for (int c = 0; c < C; ++c)
    yr[c] = __double2half((double)__half2float(xr[c]) * inv * (double)__half2float(w[c]));
}
