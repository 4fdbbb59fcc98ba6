// A correct kernel whose compile takes long: the preprocessor doubles one statement 2^16 times
// into a chain the optimiser must work through. The compile deadline must end it as a
// compile_error, not let it wait out the host deadline as a timeout.
// @kernel rope_baseline
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128

#define STEP(v) v = v * 1.0000001f + (v > 1e30f ? 1.0f : 0.0f);
#define X1(v) STEP(v) STEP(v)
#define X2(v) X1(v) X1(v)
#define X3(v) X2(v) X2(v)
#define X4(v) X3(v) X3(v)
#define X5(v) X4(v) X4(v)
#define X6(v) X5(v) X5(v)
#define X7(v) X6(v) X6(v)
#define X8(v) X7(v) X7(v)
#define X9(v) X8(v) X8(v)
#define X10(v) X9(v) X9(v)
#define X11(v) X10(v) X10(v)
#define X12(v) X11(v) X11(v)
#define X13(v) X12(v) X12(v)
#define X14(v) X13(v) X13(v)
#define X15(v) X14(v) X14(v)
#define X16(v) X15(v) X15(v)

__kernel void rope_baseline(__global const half* q, __global const half* k,
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
  float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  float slow = c;
  X16(slow)
  c = slow > 1e37f ? slow : c;
  float x1 = vload_half(base + i, x), x2 = vload_half(base + i + half_d, x);
  vstore_half_rte(x1 * c - x2 * sn, base + i, out);
  vstore_half_rte(x1 * sn + x2 * c, base + i + half_d, out);
}
