// 19_ReLU: out = max(x, 0) element by element, one work-item per element.
// @kernel relu
// @grid ceil_div(batch_size * dim, 64)
// @block 64
__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  const long i = get_global_id(0);
  if (i < (long)batch_size * dim) out[i] = fmax(x[i], 0.0f);
}
