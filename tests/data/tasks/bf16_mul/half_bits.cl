// Wrong: writes the product's fp16 bits where bf16 bits belong.
// @kernel bf16_mul_half
// @grid ceil_div(N, 64)
// @block 64
__kernel void bf16_mul_half(__global const ushort* x, __global const ushort* y, __global ushort* z,
                            int N) {
  int i = get_global_id(0);
  if (i < N)
    vstore_half_rte(as_float((uint)x[i] << 16) * as_float((uint)y[i] << 16), i, (__global half*)z);
}
