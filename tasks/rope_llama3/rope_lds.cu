// One block per position (b, s): the block stages that position's cos/sin row in shared memory
// once, synchronises, then its threads stride over every pair of every q and k head of the row.
// Needs D/2 <= 256.
// @kernel rope_lds
// @grid B * S
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @constraint D // 2 <= 256
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(BLOCK)
    rope_lds(const __half* __restrict__ q, const __half* __restrict__ k,
             const float* __restrict__ cos_t, const float* __restrict__ sin_t,
             __half* __restrict__ q_out, __half* __restrict__ k_out, int B, int S, int Hq, int Hkv,
             int D) {
  __shared__ float cs[256], sn[256];
  const int half = D / 2;
  const long long row = blockIdx.x;
  const int s = (int)(row % S);
  for (int i = threadIdx.x; i < half; i += BLOCK) {
    cs[i] = cos_t[(long long)s * half + i];
    sn[i] = sin_t[(long long)s * half + i];
  }
  __syncthreads();
  const int pairs = (Hq + Hkv) * half;
  for (int p = threadIdx.x; p < pairs; p += BLOCK) {
    const int hh = p / half, i = p % half;
    const bool is_q = hh < Hq;
    const long long base = (is_q ? row * Hq + hh : row * Hkv + (hh - Hq)) * D + i;
    const __half* x = is_q ? q : k;
    __half* out = is_q ? q_out : k_out;
    const float x1 = __half2float(x[base]), x2 = __half2float(x[base + half]);
    out[base] = __float2half_rn(x1 * cs[i] - x2 * sn[i]);
    out[base + half] = __float2half_rn(x2 * cs[i] + x1 * sn[i]);
  }
}
