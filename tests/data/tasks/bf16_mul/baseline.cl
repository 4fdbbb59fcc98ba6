// z = x * y in bf16, two elements per work-item, rounding written as a comparison of the dropped
// half against the halfway point (ties to the even kept half).
// @kernel bf16_mul_pairs
// @grid ceil_div(N, 128)
// @block 64
ushort RoundToBf16(float f) {
  uint x = as_uint(f);
  if (isnan(f)) return (ushort)0x7fc0;
  uint kept = x >> 16, dropped = x & 0xffffu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u))) ++kept;
  return (ushort)kept;
}

__kernel void bf16_mul_pairs(__global const ushort* x, __global const ushort* y, __global ushort* z,
                             int N) {
  int i = 2 * get_global_id(0);
  for (int k = i; k < i + 2 && k < N; ++k)
    z[k] = RoundToBf16(as_float((uint)x[k] << 16) * as_float((uint)y[k] << 16));
}
