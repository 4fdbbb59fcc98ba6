// Reference: one work-item per row, three sequential passes (max, sum, write), accumulating in
// double where the device has it (cl_khr_fp64), else in float.
// @kernel softmax_reference
// @grid ceil_div(R, 32)
// @block 32
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void softmax_reference(__global const half* x, __global half* y, int R, int N) {
  int r = get_global_id(0);
  if (r >= R) return;
  __global const half* xr = x + (long)r * N;
  __global half* yr = y + (long)r * N;
  acc_t m = vload_half(0, xr);
  for (int j = 1; j < N; ++j) m = fmax(m, (acc_t)vload_half(j, xr));
  acc_t sum = 0;
  for (int j = 0; j < N; ++j) sum += exp((acc_t)vload_half(j, xr) - m);
  for (int j = 0; j < N; ++j)
    vstore_half_rte((float)(exp((acc_t)vload_half(j, xr) - m) / sum), j, yr);
}
