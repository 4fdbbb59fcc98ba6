// One rotated pair of HPT consecutive heads per work-item: cos/sin are read once and reused from
// registers across the heads, the head loop unrolled; q and k in one launch.
// @kernel rope_heads
// @grid ceil_div(B * S * ceil_div(Hq + Hkv, HPT) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @param HPT in [2, 4, 8] default 4

__kernel void rope_heads(__global const half* restrict q, __global const half* restrict k,
                         __global const float* restrict cos_t, __global const float* restrict sin_t,
                         __global half* restrict q_out, __global half* restrict k_out, int B, int S,
                         int Hq, int Hkv, int D) {
  const int half_d = D / 2;
  const int H = Hq + Hkv;
  const int groups = (H + HPT - 1) / HPT;
  const long t = get_global_id(0);
  if (t >= (long)B * S * groups * half_d) return;
  const int i = (int)(t % half_d);
  const long r = t / half_d;
  const int g = (int)(r % groups);
  const long row = r / groups;  // b * S + s
  const int s = (int)(row % S);
  const float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
#pragma unroll
  for (int j = 0; j < HPT; ++j) {
    const int hh = g * HPT + j;
    if (hh < H) {
      const bool is_q = hh < Hq;
      const long base = (is_q ? row * Hq + hh : row * Hkv + (hh - Hq)) * D + i;
      __global const half* x = is_q ? q : k;
      __global half* out = is_q ? q_out : k_out;
      const float x1 = vload_half(base, x), x2 = vload_half(base + half_d, x);
      vstore_half_rte(x1 * c - x2 * sn, base, out);
      vstore_half_rte(x2 * c + x1 * sn, base + half_d, out);
    }
  }
}
