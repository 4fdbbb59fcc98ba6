// FlashAttention-style tiling: one block per (b, h, tile of BLOCK_M queries), one thread per
// query row. The Q tile (transposed, so each thread's reads are conflict-free) and each tile
// of BLOCK_N keys and values are staged in shared memory as fp16, zero past D and S; the
// thread keeps its row's running max, running sum and 128 fp32 accumulators in registers,
// rescaling them once per key tile (online softmax). Key tiles stop at the tile's last query.
// @kernel flash_tiled
// @grid ceil_div(S, BLOCK_M), B * H
// @block BLOCK_M, 1
// @param BLOCK_M in [32, 64, 128] default 64
// @param BLOCK_N in [16, 32, 64] default 32
// @constraint D <= 128
// @constraint (BLOCK_M + 2 * BLOCK_N) * 128 * 2 <= 49152
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

#define DMAX 128

extern "C" __global__ void __launch_bounds__(BLOCK_M)
    flash_tiled(const __half* __restrict__ q, const __half* __restrict__ k,
                const __half* __restrict__ v, __half* __restrict__ o, int B, int H, int S, int D,
                float scale) {
  __shared__ __half qs[DMAX * BLOCK_M];  // [d][row]
  __shared__ __half ks[BLOCK_N * DMAX];  // [key][d]
  __shared__ __half vs[BLOCK_N * DMAX];
  const int t = threadIdx.x;
  const int i0 = blockIdx.x * BLOCK_M;
  const int i = i0 + t;
  const long long head = (long long)blockIdx.y * S * D;
  const __half zero = __float2half(0.0f);

  for (int e = t; e < BLOCK_M * DMAX; e += BLOCK_M) {
    const int r = e / DMAX, d = e % DMAX;
    qs[d * BLOCK_M + r] = (i0 + r < S && d < D) ? q[head + (long long)(i0 + r) * D + d] : zero;
  }

  float m = NEG_INF, l = 0.0f, acc[DMAX];
#pragma unroll
  for (int d = 0; d < DMAX; ++d) acc[d] = 0.0f;
  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    for (int e = t; e < BLOCK_N * DMAX; e += BLOCK_M) {
      const int r = e / DMAX, d = e % DMAX;
      const bool in = n0 + r < S && d < D;
      const long long at = head + (long long)(n0 + r) * D + d;
      ks[e] = in ? k[at] : zero;
      vs[e] = in ? v[at] : zero;
    }
    __syncthreads();
    if (i < S) {
      const int n = min(BLOCK_N, i + 1 - n0);  // keys of this tile that row i sees
      float s[BLOCK_N];
#pragma unroll
      for (int c = 0; c < BLOCK_N; ++c) s[c] = 0.0f;
      for (int d = 0; d < DMAX; ++d) {
        const float qd = __half2float(qs[d * BLOCK_M + t]);
#pragma unroll
        for (int c = 0; c < BLOCK_N; ++c) s[c] += qd * __half2float(ks[c * DMAX + d]);
      }
      float m_new = m;
#pragma unroll
      for (int c = 0; c < BLOCK_N; ++c) {
        s[c] = c < n ? s[c] * scale : NEG_INF;
        m_new = fmaxf(m_new, s[c]);
      }
      const float alpha = __expf(m - m_new);  // 0 at the first tile, where m = -inf
      l *= alpha;
#pragma unroll
      for (int d = 0; d < DMAX; ++d) acc[d] *= alpha;
#pragma unroll
      for (int c = 0; c < BLOCK_N; ++c) {
        const float p = __expf(s[c] - m_new);  // 0 past the causal limit
        l += p;
#pragma unroll
        for (int d = 0; d < DMAX; d += 2) {
          const float2 vv = __half22float2(*reinterpret_cast<const __half2*>(&vs[c * DMAX + d]));
          acc[d] += p * vv.x;
          acc[d + 1] += p * vv.y;
        }
      }
      m = m_new;
    }
    __syncthreads();  // the tiles are rewritten next
  }
  if (i < S) {
    const float inv = 1.0f / l;
#pragma unroll
    for (int d = 0; d < DMAX; ++d)
      if (d < D) o[head + (long long)i * D + d] = __float2half_rn(acc[d] * inv);
  }
}
