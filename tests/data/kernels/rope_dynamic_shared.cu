// The rope baseline with each thread's cos and sin passed through dynamic shared memory near the
// end of SHARED_KB KB: over 48 KB, the launch works only if the backend raised the kernel's
// dynamic limit; 300 KB is over any device's limit (an invalid_config before compiling).
// @kernel rope_dynamic_shared
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)
// @block BLOCK
// @shared SHARED_KB * 1024
// @param BLOCK in [256] default 256
// @param SHARED_KB in [96, 300] default 96
#include <cuda_fp16.h>

extern "C" __global__ void rope_dynamic_shared(const __half* q, const __half* k, const float* cos_t,
                                               const float* sin_t, __half* q_out, __half* k_out,
                                               int B, int S, int Hq, int Hkv, int D) {
  extern __shared__ float smem[];
  float* slot = smem + SHARED_KB * 256 - 2 * BLOCK + 2 * threadIdx.x;  // the last 2 KB
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
  long long row = p / half;  // (b, s, h) flattened
  int s = (int)((row / H) % S);
  long long base = row * D;
  slot[0] = cos_t[(long long)s * half + i];
  slot[1] = sin_t[(long long)s * half + i];
  float c = slot[0], sn = slot[1];
  float x1 = __half2float(x[base + i]), x2 = __half2float(x[base + i + half]);
  out[base + i] = __float2half_rn(x1 * c - x2 * sn);
  out[base + i + half] = __float2half_rn(x2 * c + x1 * sn);
}
