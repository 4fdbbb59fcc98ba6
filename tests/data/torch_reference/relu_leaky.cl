// A wrong ReLU for 19_ReLU's task: negative elements leak through at a tenth of their value (a
// leaky ReLU), so every check set has elements off by far more than the tolerance.
// @kernel relu
// @grid ceil_div(batch_size * dim, 64)
// @block 64
__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  int i = get_global_id(0);
  if (i < batch_size * dim) out[i] = x[i] > 0.0f ? x[i] : 0.1f * x[i];
}
