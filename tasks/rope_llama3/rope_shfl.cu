// Warp-cooperative pairs: a warp covers 16 pairs of one head, lanes 0-15 holding x[i] and lanes
// 16-31 holding x[i + D/2], so each thread makes one 2-byte coalesced load and gets its partner
// with a shuffle instead of a second load. Needs D/2 to be a multiple of 16.
// @kernel rope_shfl
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 32) * 32, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @constraint (D // 2) % 16 == 0
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_shfl(const __half* __restrict__ q, const __half* __restrict__ k,
              const float* __restrict__ cos_t, const float* __restrict__ sin_t,
              __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq, int Hkv,
              int D) {
  const int half = D / 2;
  const int chunks = half / 16;  // 16-pair chunks per head, one warp each
  long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const int lane = threadIdx.x & 31;
  long long w = t >> 5;  // the warp's chunk
  const long long wq = (long long)B * S * Hq * chunks;
  const bool active = w < wq + (long long)B * S * Hkv * chunks;  // whole warps stay for the shuffle
  const __half* x = q;
  __half* out = q_out;
  int H = Hq;
  if (w >= wq) {
    w -= wq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  const long long row = w / chunks;  // (b, s, h)
  const int i = (int)(w % chunks) * 16 + (lane & 15);
  const bool upper = lane >= 16;
  const long long at = row * D + i + (upper ? half : 0);
  const int s = (int)((row / H) % S);
  const float v = active ? __half2float(x[at]) : 0.0f;
  const float partner = __shfl_xor_sync(0xffffffffu, v, 16);
  if (!active) return;
  const float c = __ldg(cos_t + (long long)s * half + i),
              sn = __ldg(sin_t + (long long)s * half + i);
  out[at] = __float2half_rn(upper ? v * c + partner * sn : v * c - partner * sn);
}
