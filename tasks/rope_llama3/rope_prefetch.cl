// Vectorised as rope_vec8 (8 consecutive pairs per work-item, cos/sin reused across HPT heads),
// and before rotating one head it asks for the next head's two halves (prefetch), so their loads
// are under way while this head is computed.
// Needs D to be a multiple of 16 (every Llama head dimension is).
// @kernel rope_prefetch
// @grid ceil_div(B * S * ceil_div(Hq + Hkv, HPT) * (D // 16), BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @param HPT in [2, 4, 8] default 4
// @constraint D % 16 == 0

__kernel void rope_prefetch(__global const half* restrict q, __global const half* restrict k,
                            __global const float* restrict cos_t,
                            __global const float* restrict sin_t, __global half* restrict q_out,
                            __global half* restrict k_out, int B, int S, int Hq, int Hkv, int D) {
  const int chunks = D >> 4;
  const int half_d = D >> 1;
  const int H = Hq + Hkv;
  const int groups = (H + HPT - 1) / HPT;
  long t = get_global_id(0);
  if (t >= (long)B * S * groups * chunks) return;
  const int c = (int)(t % chunks);
  long r = t / chunks;
  const int g = (int)(r % groups);
  const long row = r / groups;
  const int s = (int)(row % S);
  const int i = c * 8;
  const float8 cs = vload8(0, cos_t + (long)s * half_d + i);
  const float8 sn = vload8(0, sin_t + (long)s * half_d + i);
  for (int j = 0; j < HPT; ++j) {
    const int hh = g * HPT + j;
    if (hh >= H) break;
    if (j + 1 < HPT && hh + 1 < H) {
      const int nh = hh + 1;
      const bool next_q = nh < Hq;
      const long nbase = (next_q ? (row * Hq + nh) : (row * Hkv + (nh - Hq))) * D + i;
      __global const half* nsrc = next_q ? q : k;
      prefetch((__global const ushort*)(nsrc + nbase), 8);
      prefetch((__global const ushort*)(nsrc + nbase + half_d), 8);
    }
    const bool is_q = hh < Hq;
    const long base = (is_q ? (row * Hq + hh) : (row * Hkv + (hh - Hq))) * D + i;
    __global const half* src = is_q ? q : k;
    __global half* dst = is_q ? q_out : k_out;
    const float8 x1 = vload_half8(0, src + base);
    const float8 x2 = vload_half8(0, src + base + half_d);
    vstore_half8_rte(x1 * cs - x2 * sn, 0, dst + base);
    vstore_half8_rte(x2 * cs + x1 * sn, 0, dst + base + half_d);
  }
}
