// Reference: one work-item per output element, computing in fp32.
// @kernel rope_reference
// @grid ceil_div(B * S * (Hq + Hkv) * D, 256)
// @block 256

__kernel void rope_reference(__global const half* q, __global const half* k,
                             __global const float* cos_t, __global const float* sin_t,
                             __global half* q_out, __global half* k_out, int B, int S, int Hq,
                             int Hkv, int D) {
  long e = get_global_id(0);
  long nq = (long)B * S * Hq * D, nk = (long)B * S * Hkv * D;
  if (e >= nq + nk) return;
  __global const half* x = q;
  __global half* out = q_out;
  int H = Hq;
  if (e >= nq) {
    e -= nq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  int half_d = D / 2;
  int d = (int)(e % D);
  int s = (int)((e / D / H) % S);
  int i = d % half_d;
  float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  float v = vload_half(e, x);
  float r;
  if (d < half_d) {
    r = v * c - vload_half(e + half_d, x) * sn;
  } else {
    r = v * c + vload_half(e - half_d, x) * sn;
  }
  vstore_half_rte(r, e, out);
}
