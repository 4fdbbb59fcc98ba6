// Reference: one work-group of 1024 work-items; each sums a strided share of x in double, then a
// local-memory tree in double; the total is rounded to fp32 once. The workspaces are untouched.
// @kernel reduce_sum_reference
// @grid 1
// @block 1024
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void reduce_sum_reference(__global const float* x, __global float* out,
                                   __global float* partials, __global int* counter, int N) {
  __local double buf[1024];
  const int lid = get_local_id(0);
  double s = 0.0;
  for (int i = lid; i < N; i += 1024) s += x[i];
  buf[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 512; h > 0; h >>= 1) {
    if (lid < h) buf[lid] += buf[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[0] = (float)buf[0];
}
