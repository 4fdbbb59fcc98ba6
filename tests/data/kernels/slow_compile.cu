// A correct kernel whose compile takes long: the preprocessor doubles one statement 2^16 times
// into a chain the optimiser must work through. The builder's compile deadline must end it as a
// compile_error.
// @kernel rope_baseline
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256
#include <cuda_fp16.h>

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

extern "C" __global__ void rope_baseline(const __half* q, const __half* k, const float* cos_t,
                                         const float* sin_t, __half* q_out, __half* k_out, int B,
                                         int S, int Hq, int Hkv, int D) {
  int half = D / 2;
  long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long pq = (long long)B * S * Hq * half, pk = (long long)B * S * Hkv * half;
  if (p >= pq + pk) return;
  const __half* x = q;
  __half* out = q_out;
  int H = Hq;
  if (p >= pq) {
    p -= pq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  int i = (int)(p % half);
  long long row = p / half;
  int s = (int)((row / H) % S);
  long long base = row * D;
  float c = cos_t[(long long)s * half + i], sn = sin_t[(long long)s * half + i];
  float slow = c;
  X16(slow)
  c = slow > 1e37f ? slow : c;
  float x1 = __half2float(x[base + i]), x2 = __half2float(x[base + i + half]);
  out[base + i] = __float2half_rn(x1 * c - x2 * sn);
  out[base + i + half] = __float2half_rn(x2 * c + x1 * sn);
}
