// Improved: each thread rotates 8 consecutive pairs with 16-byte loads and stores, and reuses the
// cos/sin values it holds in registers across HPT heads (q heads, then k heads, in one pass).
// Needs D to be a multiple of 16 (every Llama head dimension is).
// @kernel rope_vec8
// @grid ceil_div(B * S * ceil_div(Hq + Hkv, HPT) * (D // 16), BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param HPT in [1, 2, 4, 8] default 2
// @constraint D % 16 == 0
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_vec8(const __half* __restrict__ q, const __half* __restrict__ k,
              const float* __restrict__ cos_t, const float* __restrict__ sin_t,
              __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq, int Hkv,
              int D) {
  const int chunks = D >> 4;  // 8-pair chunks per head
  const int half = D >> 1;
  const int H = Hq + Hkv;
  const int groups = (H + HPT - 1) / HPT;
  long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long long)B * S * groups * chunks) return;
  const int c = (int)(t % chunks);
  long long r = t / chunks;
  const int g = (int)(r % groups);
  const long long row = r / groups;  // b * S + s
  const int s = (int)(row % S);
  const int i = c * 8;

  const float4* ct = reinterpret_cast<const float4*>(cos_t + (long long)s * half + i);
  const float4* st = reinterpret_cast<const float4*>(sin_t + (long long)s * half + i);
  const float4 c0 = __ldg(ct), c1 = __ldg(ct + 1), s0 = __ldg(st), s1 = __ldg(st + 1);
  const float cs[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
  const float sn[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};

#pragma unroll
  for (int j = 0; j < HPT; ++j) {
    const int hh = g * HPT + j;
    if (hh >= H) break;
    const bool is_q = hh < Hq;
    const long long base = is_q ? (row * Hq + hh) * D : (row * Hkv + (hh - Hq)) * D;
    const __half* src = (is_q ? q : k) + base + i;
    __half* dst = (is_q ? q_out : k_out) + base + i;
    uint4 a = *reinterpret_cast<const uint4*>(src);
    uint4 b = *reinterpret_cast<const uint4*>(src + half);
    const __half2* a2 = reinterpret_cast<const __half2*>(&a);
    const __half2* b2 = reinterpret_cast<const __half2*>(&b);
    uint4 oa, ob;
    __half2* oa2 = reinterpret_cast<__half2*>(&oa);
    __half2* ob2 = reinterpret_cast<__half2*>(&ob);
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 x1 = __half22float2(a2[p]), x2 = __half22float2(b2[p]);
      const float ca = cs[2 * p], cb = cs[2 * p + 1], sa = sn[2 * p], sb = sn[2 * p + 1];
      oa2[p] = __floats2half2_rn(x1.x * ca - x2.x * sa, x1.y * cb - x2.y * sb);
      ob2[p] = __floats2half2_rn(x2.x * ca + x1.x * sa, x2.y * cb + x1.y * sb);
    }
    *reinterpret_cast<uint4*>(dst) = oa;
    *reinterpret_cast<uint4*>(dst + half) = ob;
  }
}
