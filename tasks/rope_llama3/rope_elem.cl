// One output element per work-item, q and k in one launch: the simplest mapping, fully coalesced.
// @kernel rope_elem
// @grid ceil_div(B * S * (Hq + Hkv) * D, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256

__kernel void rope_elem(__global const half* restrict q, __global const half* restrict k,
                        __global const float* restrict cos_t, __global const float* restrict sin_t,
                        __global half* restrict q_out, __global half* restrict k_out, int B, int S,
                        int Hq, int Hkv, int D) {
  long e = get_global_id(0);
  const long nq = (long)B * S * Hq * D;
  if (e >= nq + (long)B * S * Hkv * D) return;
  __global const half* x = q;
  __global half* out = q_out;
  int H = Hq;
  if (e >= nq) {
    e -= nq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  const int half_d = D / 2;
  const int d = (int)(e % D);
  const int s = (int)((e / D / H) % S);
  const int i = d < half_d ? d : d - half_d;
  const float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  const float v = vload_half(e, x);
  const float partner = vload_half(d < half_d ? e + half_d : e - half_d, x);
  vstore_half_rte(d < half_d ? v * c - partner * sn : v * c + partner * sn, e, out);
}
