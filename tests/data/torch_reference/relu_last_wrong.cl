// A wrong ReLU for 19_ReLU's task: right everywhere but the last element, which is off by one, so
// the module's output and this kernel's differ in exactly one element at every size set.
// @kernel relu
// @grid ceil_div(batch_size * dim, 64)
// @block 64
__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  int i = get_global_id(0);
  int n = batch_size * dim;
  if (i < n) out[i] = fmax(x[i], 0.0f) + (i == n - 1 ? 1.0f : 0.0f);
}
