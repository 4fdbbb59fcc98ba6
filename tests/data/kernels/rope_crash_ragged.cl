// Correct, except at the ragged check size set (S = 77): there every work-item writes a terabyte
// past the end of its output, which kills the process on a CPU device (SIGSEGV). The verdict must
// be `crash` naming that size set, its seed and the candidate's launch, not only the signal.
// @kernel rope_crash_ragged
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
__kernel void rope_crash_ragged(__global const half* q, __global const half* k,
                                __global const float* cos_t, __global const float* sin_t,
                                __global half* q_out, __global half* k_out, int B, int S, int Hq,
                                int Hkv, int D) {
  int half_d = D / 2;
  long p = get_global_id(0);
  long pq = (long)B * S * Hq * half_d, pk = (long)B * S * Hkv * half_d;
  if (p >= pq + pk) return;
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
  long far = (long)(S == 77) << 40;  // 0 at every other size set
  float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  float x1 = vload_half(base + i, x), x2 = vload_half(base + i + half_d, x);
  vstore_half_rte(x1 * c - x2 * sn, base + i + far, out);
  vstore_half_rte(x2 * c + x1 * sn, base + i + half_d, out);
}
