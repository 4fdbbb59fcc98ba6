// One rotated pair of HPT consecutive heads per thread: cos/sin are read once and reused from
// registers across the heads, the head loop unrolled; q and k in one launch.
// @kernel rope_heads
// @grid ceil_div(B * S * ceil_div(Hq + Hkv, HPT) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param HPT in [2, 4, 8] default 4
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_heads(const __half* __restrict__ q, const __half* __restrict__ k,
               const float* __restrict__ cos_t, const float* __restrict__ sin_t,
               __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq,
               int Hkv, int D) {
  const int half = D / 2;
  const int H = Hq + Hkv;
  const int groups = (H + HPT - 1) / HPT;
  const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long long)B * S * groups * half) return;
  const int i = (int)(t % half);
  const long long r = t / half;
  const int g = (int)(r % groups);
  const long long row = r / groups;
  const int s = (int)(row % S);
  const float c = __ldg(cos_t + (long long)s * half + i),
              sn = __ldg(sin_t + (long long)s * half + i);
#pragma unroll
  for (int j = 0; j < HPT; ++j) {
    const int hh = g * HPT + j;
    if (hh < H) {
      const bool is_q = hh < Hq;
      const long long base = (is_q ? row * Hq + hh : row * Hkv + (hh - Hq)) * D + i;
      const __half* x = is_q ? q : k;
      __half* out = is_q ? q_out : k_out;
      const float x1 = __half2float(x[base]), x2 = __half2float(x[base + half]);
      out[base] = __float2half_rn(x1 * c - x2 * sn);
      out[base + half] = __float2half_rn(x2 * c + x1 * sn);
    }
  }
}
