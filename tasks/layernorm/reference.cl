// Reference: one work-item per row, two passes for the statistics (the mean, then the mean of the
// squared deviations) and the normalisation in double where the device has it (cl_khr_fp64), else
// in float; one rounding to fp16 at the end.
// @kernel layernorm_reference
// @grid ceil_div(R, 32)
// @block 32
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void layernorm_reference(__global const half* x, __global const half* w,
                                  __global const half* b, __global half* y, int R, int C,
                                  float eps) {
  const int r = get_global_id(0);
  if (r >= R) return;
  __global const half* xr = x + (long)r * C;
  __global half* yr = y + (long)r * C;
  acc_t s = 0;
  for (int c = 0; c < C; ++c) s += (acc_t)vload_half(c, xr);
  const acc_t mean = s / C;
  acc_t q = 0;
  for (int c = 0; c < C; ++c) {
    const acc_t d = (acc_t)vload_half(c, xr) - mean;
    q += d * d;
  }
  const acc_t rstd = (acc_t)1 / sqrt(q / C + (acc_t)eps);
  for (int c = 0; c < C; ++c)
    vstore_half_rte(((acc_t)vload_half(c, xr) - mean) * rstd * (acc_t)vload_half(c, w) +
                        (acc_t)vload_half(c, b),
                    c, yr);
}
