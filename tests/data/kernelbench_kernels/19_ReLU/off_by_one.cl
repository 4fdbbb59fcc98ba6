// 19_ReLU, off by one: correct.cl except that the bound is one short, so the last element is never written, so it differs from the
// module in exactly one element at every size set.
// @kernel relu
// @grid ceil_div(batch_size * dim, 64)
// @block 64
__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  const long i = get_global_id(0);
  if (i < (long)batch_size * dim - 1) out[i] = fmax(x[i], 0.0f);
}
