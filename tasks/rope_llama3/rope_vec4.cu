// Four consecutive pairs per thread with 8-byte vector loads and stores (uint2 = 4 halves), one
// head per thread, q and k in one launch. Needs D to be a multiple of 8.
// @kernel rope_vec4
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 8), BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @constraint D % 8 == 0
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_vec4(const __half* __restrict__ q, const __half* __restrict__ k,
              const float* __restrict__ cos_t, const float* __restrict__ sin_t,
              __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq, int Hkv,
              int D) {
  const int chunks = D / 8;
  const int half = D / 2;
  long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long tq = (long long)B * S * Hq * chunks;
  if (t >= tq + (long long)B * S * Hkv * chunks) return;
  const __half* x = q;
  __half* out = q_out;
  int H = Hq;
  if (t >= tq) {
    t -= tq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  const int i = (int)(t % chunks) * 4;
  const long long row = t / chunks;
  const int s = (int)((row / H) % S);
  const long long base = row * D + i;
  const float4 c = __ldg(reinterpret_cast<const float4*>(cos_t + (long long)s * half + i));
  const float4 sn = __ldg(reinterpret_cast<const float4*>(sin_t + (long long)s * half + i));
  const uint2 a = *reinterpret_cast<const uint2*>(x + base);
  const uint2 b = *reinterpret_cast<const uint2*>(x + base + half);
  const __half2* a2 = reinterpret_cast<const __half2*>(&a);
  const __half2* b2 = reinterpret_cast<const __half2*>(&b);
  const float2 x1lo = __half22float2(a2[0]), x1hi = __half22float2(a2[1]);
  const float2 x2lo = __half22float2(b2[0]), x2hi = __half22float2(b2[1]);
  uint2 oa, ob;
  __half2* oa2 = reinterpret_cast<__half2*>(&oa);
  __half2* ob2 = reinterpret_cast<__half2*>(&ob);
  oa2[0] = __floats2half2_rn(x1lo.x * c.x - x2lo.x * sn.x, x1lo.y * c.y - x2lo.y * sn.y);
  oa2[1] = __floats2half2_rn(x1hi.x * c.z - x2hi.x * sn.z, x1hi.y * c.w - x2hi.y * sn.w);
  ob2[0] = __floats2half2_rn(x2lo.x * c.x + x1lo.x * sn.x, x2lo.y * c.y + x1lo.y * sn.y);
  ob2[1] = __floats2half2_rn(x2hi.x * c.z + x1hi.x * sn.z, x2hi.y * c.w + x1hi.y * sn.w);
  *reinterpret_cast<uint2*>(out + base) = oa;
  *reinterpret_cast<uint2*>(out + base + half) = ob;
}
