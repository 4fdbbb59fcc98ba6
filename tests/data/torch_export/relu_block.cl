// ReLU for the task `kfoundry import` writes from kernelbench/19_ReLU.py, as a template: BLOCK
// work-items per group, each doing VEC elements strided by the group (the launch rule reads both).
// @kernel relu_block
// @param BLOCK in [16, 32] default 32
// @param VEC in [2, 3] default 2
// @grid ceil_div(batch_size * dim, BLOCK * VEC)
// @block BLOCK
__kernel void relu_block(__global const float* x, __global float* out, int batch_size, int dim) {
  long base = (long)get_group_id(0) * BLOCK * VEC + get_local_id(0);
  for (int k = 0; k < VEC; ++k) {
    long i = base + (long)k * BLOCK;
    if (i < (long)batch_size * dim) out[i] = fmax(x[i], 0.0f);
  }
}
