// One work-group per position (b, s): the group stages that position's cos/sin row in local
// memory once, waits at a barrier, then its work-items stride over every pair of every q and k
// head of the row. Needs D/2 <= 256.
// @kernel rope_lds
// @grid B * S
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @constraint D // 2 <= 256

__kernel void rope_lds(__global const half* restrict q, __global const half* restrict k,
                       __global const float* restrict cos_t, __global const float* restrict sin_t,
                       __global half* restrict q_out, __global half* restrict k_out, int B, int S,
                       int Hq, int Hkv, int D) {
  __local float cs[256], sn[256];
  const int half_d = D / 2;
  const long row = get_group_id(0);  // b * S + s
  const int s = (int)(row % S);
  for (int i = get_local_id(0); i < half_d; i += BLOCK) {
    cs[i] = cos_t[(long)s * half_d + i];
    sn[i] = sin_t[(long)s * half_d + i];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int pairs = (Hq + Hkv) * half_d;
  for (int p = get_local_id(0); p < pairs; p += BLOCK) {
    const int hh = p / half_d, i = p % half_d;
    const bool is_q = hh < Hq;
    const long base = (is_q ? row * Hq + hh : row * Hkv + (hh - Hq)) * D + i;
    __global const half* x = is_q ? q : k;
    __global half* out = is_q ? q_out : k_out;
    const float x1 = vload_half(base, x), x2 = vload_half(base + half_d, x);
    vstore_half_rte(x1 * cs[i] - x2 * sn[i], base, out);
    vstore_half_rte(x2 * cs[i] + x1 * sn[i], base + half_d, out);
  }
}
