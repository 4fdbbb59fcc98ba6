// Asks for 8 MiB of local/shared memory per group, over every device's limit.
// @kernel big_local
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
#include <cuda_fp16.h>
extern "C" __global__ void big_local(const __half* q, const __half* k, const float* cos_t,
                                     const float* sin_t, __half* q_out, __half* k_out, int B, int S,
                                     int Hq, int Hkv, int D) {
  int half_d = D / 2;
  long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long pq = (long long)B * S * Hq * half_d, pk = (long long)B * S * Hkv * half_d;
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
  int i = (int)(p % half_d);
  long long row = p / half_d;
  int s = (int)((row / H) % S);
  long long base = row * D;
  float c = cos_t[(long long)s * half_d + i], sn = sin_t[(long long)s * half_d + i];
  float x1 = __half2float(x[base + i]), x2 = __half2float(x[base + i + half_d]);
  __shared__ float scratch[2 << 20];
  scratch[threadIdx.x] = x1;
  __syncthreads();
  x1 = scratch[threadIdx.x];
  out[base + i] = __float2half_rn(x1 * c - x2 * sn);
  out[base + i + half_d] = __float2half_rn(x2 * c + x1 * sn);
}
