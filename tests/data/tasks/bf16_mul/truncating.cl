// Wrong: narrows to bf16 by dropping the low 16 bits (rounds toward zero).
// @kernel bf16_mul_trunc
// @grid ceil_div(N, 64)
// @block 64
__kernel void bf16_mul_trunc(__global const ushort* x, __global const ushort* y, __global ushort* z,
                             int N) {
  int i = get_global_id(0);
  if (i < N)
    z[i] = (ushort)(as_uint(as_float((uint)x[i] << 16) * as_float((uint)y[i] << 16)) >> 16);
}
