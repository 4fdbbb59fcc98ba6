// Deliberately wrong: the interleaved (GPT-J) convention instead of half-split. Must be `incorrect`.
// @kernel rope_interleaved
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
#include <cuda_fp16.h>
extern "C" __global__ void rope_interleaved(const __half* q, const __half* k, const float* cos_t,
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
  float x1 = __half2float(x[base + 2 * i]), x2 = __half2float(x[base + 2 * i + 1]);
  out[base + 2 * i] = __float2half_rn(x1 * c - x2 * sn);
  out[base + 2 * i + 1] = __float2half_rn(x2 * c + x1 * sn);
}
