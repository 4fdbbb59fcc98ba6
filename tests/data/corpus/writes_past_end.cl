// Bad kernel: the baseline without its bounds check. Where the pair count is not a multiple of
// the block (the d64 check set), the last group's extra work-items write a few hundred bytes past
// the end of k_out: right everywhere inside the buffer, wrong outside it. Must be `incorrect`,
// named by the guard zone after k_out.
// @kernel rope_baseline
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

__kernel void rope_baseline(__global const half* q, __global const half* k,
                            __global const float* cos_t, __global const float* sin_t,
                            __global half* q_out, __global half* k_out, int B, int S, int Hq,
                            int Hkv, int D) {
  int half_d = D / 2;
  long p = get_global_id(0);
  long pq = (long)B * S * Hq * half_d, pk = (long)B * S * Hkv * half_d;
  __global const half* x = q;
  __global half* out = q_out;
  int H = Hq;
  if (p >= pq) {
    p -= pq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  int i = (int)(p % half_d);
  long row = p / half_d;
  int s = (int)((row / H) % S);
  long base = row * D;
  float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  float x1 = vload_half(base + i, x), x2 = vload_half(base + i + half_d, x);
  vstore_half_rte(x1 * c - x2 * sn, base + i, out);
  vstore_half_rte(x2 * c + x1 * sn, base + i + half_d, out);
}
