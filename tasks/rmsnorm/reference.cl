// Reference: one work-item per row, the sum of squares and the scaling in double where the
// device has it (cl_khr_fp64), else in float; one rounding to fp16 at the end.
// @kernel rmsnorm_reference
// @grid ceil_div(R, 32)
// @block 32
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void rmsnorm_reference(__global const half* x, __global const half* w, __global half* y,
                                int R, int C, float eps) {
  const int r = get_global_id(0);
  if (r >= R) return;
  __global const half* xr = x + (long)r * C;
  __global half* yr = y + (long)r * C;
  acc_t ss = 0;
  for (int c = 0; c < C; ++c) {
    const acc_t v = vload_half(c, xr);
    ss += v * v;
  }
  const acc_t inv = (acc_t)1 / sqrt(ss / C + (acc_t)eps);
  for (int c = 0; c < C; ++c)
    vstore_half_rte((acc_t)vload_half(c, xr) * inv * (acc_t)vload_half(c, w), c, yr);
}
