// Warp-level FlashAttention: one block per (b, h, tile of WARPS * ROWS queries), each warp
// owning ROWS query rows. Per tile of BLOCK_N keys staged in shared memory (16-byte global
// loads when D % 8 == 0), lane c scores keys c, c + 32, ... (K rows padded so those reads are
// conflict-free), a shuffle butterfly gives the tile's max, and for P * V each key's
// probability is broadcast with __shfl_sync while every lane accumulates its 4 output dims in
// fp32 registers. Each lane keeps a share of the row sum, added up by shuffles at the end.
// @kernel flash_warp
// @grid ceil_div(S, WARPS * ROWS), B * H
// @block 32 * WARPS, 1
// @param WARPS in [2, 4, 8] default 4
// @param ROWS in [1, 2, 4] default 2
// @param BLOCK_N in [32, 64] default 64
// @constraint D <= 128
// @constraint (BLOCK_N * 130 + BLOCK_N * 128 + WARPS * ROWS * 128) * 2 <= 49152
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

#define DMAX 128
#define KSTR (DMAX + 2)  // padded K row: lane c's row starts in bank c
#define KPL (BLOCK_N / 32)
#define BLOCK_M (WARPS * ROWS)

// Copies 8 consecutive halves of row `at` (dims d..d+7) into shared memory, zero past D or
// when the row is outside the sequence.
__device__ __forceinline__ void copy8(const __half* __restrict__ src, long long at, int d, int D,
                                      bool row_in, __half* dst) {
  __half2 h[4];
  if (row_in && d + 8 <= D && (D & 7) == 0) {  // whole and 16-byte aligned
    const uint4 u = __ldg(reinterpret_cast<const uint4*>(src + at));
    const __half2* p = reinterpret_cast<const __half2*>(&u);
#pragma unroll
    for (int e = 0; e < 4; ++e) h[e] = p[e];
  } else {
    __half x[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = (row_in && d + e < D) ? src[at + e] : __float2half(0.0f);
#pragma unroll
    for (int e = 0; e < 4; ++e) h[e] = __halves2half2(x[2 * e], x[2 * e + 1]);
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) reinterpret_cast<__half2*>(dst)[e] = h[e];
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    flash_warp(const __half* __restrict__ q, const __half* __restrict__ k,
               const __half* __restrict__ v, __half* __restrict__ o, int B, int H, int S, int D,
               float scale) {
  __shared__ __align__(16) __half qs[BLOCK_M * DMAX];
  __shared__ __align__(16) __half ks[BLOCK_N * KSTR];
  __shared__ __align__(16) __half vs[BLOCK_N * DMAX];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int i0 = blockIdx.x * BLOCK_M;
  const long long head = (long long)blockIdx.y * S * D;

  for (int e = tid; e < BLOCK_M * DMAX / 8; e += 32 * WARPS) {
    const int r = e / (DMAX / 8), d = (e % (DMAX / 8)) * 8;
    copy8(q, head + (long long)(i0 + r) * D + d, d, D, i0 + r < S, qs + r * DMAX + d);
  }

  float m[ROWS], l[ROWS], acc[ROWS][4];  // l: this lane's share of the row sum
#pragma unroll
  for (int rr = 0; rr < ROWS; ++rr) {
    m[rr] = NEG_INF;
    l[rr] = 0.0f;
#pragma unroll
    for (int u = 0; u < 4; ++u) acc[rr][u] = 0.0f;
  }

  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    for (int e = tid; e < BLOCK_N * DMAX / 8; e += 32 * WARPS) {
      const int r = e / (DMAX / 8), d = (e % (DMAX / 8)) * 8;
      const long long at = head + (long long)(n0 + r) * D + d;
      copy8(k, at, d, D, n0 + r < S, ks + r * KSTR + d);
      copy8(v, at, d, D, n0 + r < S, vs + r * DMAX + d);
    }
    __syncthreads();

#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
      const int row = warp * ROWS + rr, i = i0 + row;
      const int n = i < S ? min(BLOCK_N, i + 1 - n0) : 0;  // keys of this tile row i sees
      if (n <= 0) continue;                                // warp-uniform
      const __half2* qrow = reinterpret_cast<const __half2*>(qs + row * DMAX);
      float s[KPL], tmax = NEG_INF;
#pragma unroll
      for (int kk = 0; kk < KPL; ++kk) {
        const int c = kk * 32 + lane;
        const __half2* krow = reinterpret_cast<const __half2*>(ks + c * KSTR);
        float dot = 0.0f;
#pragma unroll 8
        for (int d2 = 0; d2 < DMAX / 2; ++d2) {
          const float2 qv = __half22float2(qrow[d2]), kv = __half22float2(krow[d2]);
          dot = fmaf(qv.x, kv.x, dot);
          dot = fmaf(qv.y, kv.y, dot);
        }
        s[kk] = c < n ? dot * scale : NEG_INF;
        tmax = fmaxf(tmax, s[kk]);
      }
#pragma unroll
      for (int w = 16; w > 0; w >>= 1) tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, w));
      const float m_new = fmaxf(m[rr], tmax);
      const float alpha = __expf(m[rr] - m_new);  // 0 at the first tile, where m = -inf
      m[rr] = m_new;
      l[rr] *= alpha;
#pragma unroll
      for (int u = 0; u < 4; ++u) acc[rr][u] *= alpha;
#pragma unroll
      for (int kk = 0; kk < KPL; ++kk) {
        const float p = __expf(s[kk] - m_new);  // 0 past the causal limit
        l[rr] += p;
        const int cnt = min(32, n - kk * 32);  // warp-uniform
        for (int src = 0; src < cnt; ++src) {
          const float pc = __shfl_sync(0xffffffffu, p, src);
          const __half2* vrow = reinterpret_cast<const __half2*>(vs + (kk * 32 + src) * DMAX);
          const float2 v01 = __half22float2(vrow[2 * lane]);
          const float2 v23 = __half22float2(vrow[2 * lane + 1]);
          acc[rr][0] = fmaf(pc, v01.x, acc[rr][0]);
          acc[rr][1] = fmaf(pc, v01.y, acc[rr][1]);
          acc[rr][2] = fmaf(pc, v23.x, acc[rr][2]);
          acc[rr][3] = fmaf(pc, v23.y, acc[rr][3]);
        }
      }
    }
    __syncthreads();  // the tiles are rewritten next
  }

#pragma unroll
  for (int rr = 0; rr < ROWS; ++rr) {
    const int i = i0 + warp * ROWS + rr;
    float sum = l[rr];
#pragma unroll
    for (int w = 16; w > 0; w >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, w);
    if (i >= S) continue;
    const float inv = 1.0f / sum;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int d = 4 * lane + u;
      if (d < D) o[head + (long long)i * D + d] = __float2half_rn(acc[rr][u] * inv);
    }
  }
}
