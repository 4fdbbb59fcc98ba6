// Reference: one thread per output element, computing in fp32.
// @kernel rope_reference
// @grid ceil_div(B * S * (Hq + Hkv) * D, 256)
// @block 256
#include <cuda_fp16.h>

extern "C" __global__ void rope_reference(const __half* q, const __half* k, const float* cos_t,
                                          const float* sin_t, __half* q_out, __half* k_out, int B,
                                          int S, int Hq, int Hkv, int D) {
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long nq = (long long)B * S * Hq * D, nk = (long long)B * S * Hkv * D;
  if (e >= nq + nk) return;
  const __half* x = q;
  __half* out = q_out;
  int H = Hq;
  if (e >= nq) {
    e -= nq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  int half = D / 2;
  int d = (int)(e % D);
  int s = (int)((e / D / H) % S);
  int i = d % half;
  float c = cos_t[(long long)s * half + i], sn = sin_t[(long long)s * half + i];
  float v = __half2float(x[e]);
  float r;
  if (d < half) {
    r = v * c - __half2float(x[e + half]) * sn;
  } else {
    r = v * c + __half2float(x[e - half]) * sn;
  }
  out[e] = __float2half_rn(r);
}
