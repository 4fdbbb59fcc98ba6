// z = x * y in bf16 (ushort bits): widen by shifting, multiply in float, round to nearest even.
// @kernel bf16_mul_ref
// @grid ceil_div(N, 64)
// @block 64
float Widen(ushort b) {
  return as_float((uint)b << 16);
}

ushort Narrow(float f) {
  uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);  // NaN stays NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return (ushort)(x >> 16);
}

__kernel void bf16_mul_ref(__global const ushort* x, __global const ushort* y, __global ushort* z,
                           int N) {
  int i = get_global_id(0);
  if (i < N) z[i] = Narrow(Widen(x[i]) * Widen(y[i]));
}
