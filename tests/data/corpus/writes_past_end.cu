// Bad kernel: the baseline without its bounds check. Where the pair count is not a multiple of
// the block (the d64 check set), the last block's extra threads write a few hundred bytes past the
// end of k_out: right everywhere inside the buffer, wrong outside it. Must be `incorrect`, named
// by the guard zone after k_out.
// @kernel rope_baseline
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256
#include <cuda_fp16.h>

extern "C" __global__ void rope_baseline(const __half* q, const __half* k, const float* cos_t,
                                         const float* sin_t, __half* q_out, __half* k_out, int B,
                                         int S, int Hq, int Hkv, int D) {
  int half = D / 2;
  long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long pq = (long long)B * S * Hq * half, pk = (long long)B * S * Hkv * half;
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
  long long row = p / half;  // (b, s, h) flattened
  int s = (int)((row / H) % S);
  long long base = row * D;
  float c = cos_t[(long long)s * half + i], sn = sin_t[(long long)s * half + i];
  float x1 = __half2float(x[base + i]), x2 = __half2float(x[base + i + half]);
  out[base + i] = __float2half_rn(x1 * c - x2 * sn);
  out[base + i + half] = __float2half_rn(x2 * c + x1 * sn);
}
