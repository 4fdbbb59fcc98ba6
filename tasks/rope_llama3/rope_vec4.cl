// Four consecutive pairs per work-item with 8-byte vector loads and stores (vload_half4), one head
// per work-item, q and k in one launch. Needs D to be a multiple of 8.
// @kernel rope_vec4
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 8), BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @constraint D % 8 == 0

__kernel void rope_vec4(__global const half* restrict q, __global const half* restrict k,
                        __global const float* restrict cos_t, __global const float* restrict sin_t,
                        __global half* restrict q_out, __global half* restrict k_out, int B, int S,
                        int Hq, int Hkv, int D) {
  const int chunks = D / 8;  // 4-pair chunks per head
  const int half_d = D / 2;
  long t = get_global_id(0);
  const long tq = (long)B * S * Hq * chunks;
  if (t >= tq + (long)B * S * Hkv * chunks) return;
  __global const half* x = q;
  __global half* out = q_out;
  int H = Hq;
  if (t >= tq) {
    t -= tq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  const int i = (int)(t % chunks) * 4;
  const long row = t / chunks;  // (b, s, h)
  const int s = (int)((row / H) % S);
  const long base = row * D + i;
  const float4 c = vload4(0, cos_t + (long)s * half_d + i);
  const float4 sn = vload4(0, sin_t + (long)s * half_d + i);
  const float4 x1 = vload_half4(0, x + base), x2 = vload_half4(0, x + base + half_d);
  vstore_half4_rte(x1 * c - x2 * sn, 0, out + base);
  vstore_half4_rte(x2 * c + x1 * sn, 0, out + base + half_d);
}
