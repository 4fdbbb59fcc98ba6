// Deliberately broken: writes NaN into every output element. Must be judged `nan`.
// @kernel rope_nan
// @grid ceil_div(B * S * (Hq + Hkv) * D, 128)
// @block 128
#include <cuda_fp16.h>
extern "C" __global__ void rope_nan(const __half* q, const __half* k, const float* cos_t,
                                    const float* sin_t, __half* q_out, __half* k_out, int B, int S,
                                    int Hq, int Hkv, int D) {
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long nq = (long long)B * S * Hq * D, nk = (long long)B * S * Hkv * D;
  float zero = cos_t[0] - cos_t[0];
  if (e < nq)
    q_out[e] = __float2half(zero / zero);
  else if (e < nq + nk)
    k_out[e - nq] = __float2half(zero / zero);
}
