// Row softmax for the task `kfoundry import` writes from kernelbench/23_Softmax.py, as a
// template: one group of BLOCK work-items per row, each pass a strided loop and a tree reduction
// in local memory. The grid is one group per row: a launch rule that read the wrong size would
// leave rows unwritten.
// @kernel softmax_group
// @param BLOCK in [16, 32] default 16
// @grid batch_size
// @block BLOCK
__kernel void softmax_group(__global const float* x, __global float* out, int batch_size, int dim) {
  __local float part[BLOCK];
  const int row = get_group_id(0), t = get_local_id(0);
  __global const float* in = x + (size_t)row * dim;
  __global float* o = out + (size_t)row * dim;
  float m = -INFINITY;
  for (int j = t; j < dim; j += BLOCK) m = fmax(m, in[j]);
  part[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s /= 2) {
    if (t < s) part[t] = fmax(part[t], part[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (int j = t; j < dim; j += BLOCK) sum += exp(in[j] - m);
  part[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLOCK / 2; s > 0; s /= 2) {
    if (t < s) part[t] += part[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = part[0];
  for (int j = t; j < dim; j += BLOCK) o[j] = exp(in[j] - m) / sum;
}
