// ReLU for the task `kfoundry import` writes from kernelbench/19_ReLU.py: one work-item per element.
// @kernel relu
// @grid ceil_div(batch_size * dim, 64)
// @block 64
__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  int i = get_global_id(0);
  if (i < batch_size * dim) out[i] = fmax(x[i], 0.0f);
}
