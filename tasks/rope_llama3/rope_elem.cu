// One output element per thread, q and k in one launch: the simplest mapping, fully coalesced.
// @kernel rope_elem
// @grid ceil_div(B * S * (Hq + Hkv) * D, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_elem(const __half* __restrict__ q, const __half* __restrict__ k,
              const float* __restrict__ cos_t, const float* __restrict__ sin_t,
              __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq, int Hkv,
              int D) {
  long long e = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long nq = (long long)B * S * Hq * D;
  if (e >= nq + (long long)B * S * Hkv * D) return;
  const __half* x = q;
  __half* out = q_out;
  int H = Hq;
  if (e >= nq) {
    e -= nq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  const int half = D / 2;
  const int d = (int)(e % D);
  const int s = (int)((e / D / H) % S);
  const int i = d < half ? d : d - half;
  const float c = __ldg(cos_t + (long long)s * half + i),
              sn = __ldg(sin_t + (long long)s * half + i);
  const float v = __half2float(x[e]);
  const float partner = __half2float(x[d < half ? e + half : e - half]);
  out[e] = __float2half_rn(d < half ? v * c - partner * sn : v * c + partner * sn);
}
