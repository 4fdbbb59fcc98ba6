// Reference: one work-item per row, the row's products summed in order in double where the device
// has it (cl_khr_fp64), else in fp32 with Kahan compensation. The workspaces are not touched.
// @kernel spmv_reference
// @grid ceil_div(R, 64)
// @block 64

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void spmv_reference(__global const int* row_ptr, __global const int* col_idx,
                             __global const float* vals, __global const float* x, __global float* y,
                             __global int* carry_row, __global float* carry_val,
                             __global int* counter, int R, int C, int NNZ) {
  const long r = get_global_id(0);
  if (r >= R) return;
#ifdef cl_khr_fp64
  double s = 0.0;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += (double)vals[k] * (double)x[col_idx[k]];
  y[r] = (float)s;
#else
  float s = 0.0f, c = 0.0f;  // Kahan: c holds the low part lost by the last addition
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
    const float t = vals[k] * x[col_idx[k]] - c;
    const float u = s + t;
    c = (u - s) - t;
    s = u;
  }
  y[r] = s;
#endif
}
