// Tensor-core FlashAttention (FA2 layout): one block per (b, h, tile of 16 * WARPS queries),
// each warp owning 16 query rows whose Q fragments stay in registers. Per tile of BLOCK_N keys
// staged in shared memory (rows padded by 8 halves against bank conflicts), S = Q K^T and
// O += P V are mma.sync.m16n8k16 with fp32 accumulators; the online softmax works on the
// accumulator fragments directly (4 lanes share a row: quad shuffles for max and sum). P is
// split into fp16 hi + lo parts, two mma each, so P V keeps fp32-level accuracy.
// @kernel flash_mma
// @grid ceil_div(S, 16 * WARPS), B * H
// @block 32 * WARPS, 1
// @param WARPS in [4, 2, 8] default 4
// @param BLOCK_N in [64, 32] default 64
// @constraint D <= 128
// @constraint 2 * BLOCK_N * 136 * 2 <= 49152
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

#define DMAX 128
#define KS (DMAX + 8)  // padded shared row, in halves
#define BLOCK_M (16 * WARPS)
#define NT (BLOCK_N / 8)  // 8-key tiles of S
#define DT (DMAX / 8)     // 8-dim tiles of O

__device__ __forceinline__ unsigned pack2(__half lo, __half hi) {  // lo: the lower 16 bits
  return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}

// c += a (16x16, row-major) * b (16x8, column-major), fp16 in, fp32 accumulate.
__device__ __forceinline__ void mma16816(float c[4], const unsigned a[4], unsigned b0,
                                         unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Copies 8 consecutive halves of row `at` (dims d..d+7) into shared memory, zero past D or
// when the row is outside the sequence.
__device__ __forceinline__ void copy8(const __half* __restrict__ src, long long at, int d, int D,
                                      bool row_in, __half* dst) {
  if (row_in && d + 8 <= D && (D & 7) == 0) {  // whole and 16-byte aligned
    *reinterpret_cast<uint4*>(dst) = __ldg(reinterpret_cast<const uint4*>(src + at));
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) dst[e] = (row_in && d + e < D) ? src[at + e] : __float2half(0.0f);
  }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    flash_mma(const __half* __restrict__ q, const __half* __restrict__ k,
              const __half* __restrict__ v, __half* __restrict__ o, int B, int H, int S, int D,
              float scale) {
  __shared__ __align__(16) __half ks[BLOCK_N * KS];
  __shared__ __align__(16) __half vs[BLOCK_N * KS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;  // fragment row group, thread in the group
  const int i0 = blockIdx.x * BLOCK_M;
  const int w0 = i0 + warp * 16;       // the warp's first query row
  const int r0 = w0 + g, r1 = r0 + 8;  // this thread's two rows
  const long long head = (long long)blockIdx.y * S * D;
  const __half zero = __float2half(0.0f);

  // Q as A fragments: rows r0/r1, dims 2*t4 + {0, 1} and + 8 of each 16-dim step.
  unsigned qa[DMAX / 16][4];
#pragma unroll
  for (int kst = 0; kst < DMAX / 16; ++kst) {
    __half x[2][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = h ? r1 : r0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int d = kst * 16 + 2 * t4 + (e & 1) + (e >> 1) * 8;
        x[h][e] = (r < S && d < D) ? q[head + (long long)r * D + d] : zero;
      }
    }
    qa[kst][0] = pack2(x[0][0], x[0][1]);
    qa[kst][1] = pack2(x[1][0], x[1][1]);
    qa[kst][2] = pack2(x[0][2], x[0][3]);
    qa[kst][3] = pack2(x[1][2], x[1][3]);
  }

  float m0 = NEG_INF, m1 = NEG_INF, l0 = 0.0f, l1 = 0.0f;  // l: this thread's share
  float oacc[DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) oacc[dt][e] = 0.0f;

  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    for (int e = tid; e < BLOCK_N * DMAX / 8; e += 32 * WARPS) {
      const int r = e / (DMAX / 8), d = (e % (DMAX / 8)) * 8;
      const long long at = head + (long long)(n0 + r) * D + d;
      copy8(k, at, d, D, n0 + r < S, ks + r * KS + d);
      copy8(v, at, d, D, n0 + r < S, vs + r * KS + d);
    }
    __syncthreads();

    if (w0 < S && w0 + 15 >= n0) {  // warp-uniform: some row of the warp sees this tile
      float sc[NT][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sc[nt][e] = 0.0f;
#pragma unroll
      for (int kst = 0; kst < DMAX / 16; ++kst)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const __half* kp = ks + (nt * 8 + g) * KS + kst * 16 + 2 * t4;
          mma16816(sc[nt], qa[kst], *reinterpret_cast<const unsigned*>(kp),
                   *reinterpret_cast<const unsigned*>(kp + 8));
        }

      // Scale, causal mask, row max over the quad that shares the row.
      float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int j = n0 + nt * 8 + 2 * t4 + (e & 1), r = e < 2 ? r0 : r1;
          sc[nt][e] = (j <= r && j < S) ? sc[nt][e] * scale : NEG_INF;
          if (e < 2)
            mx0 = fmaxf(mx0, sc[nt][e]);
          else
            mx1 = fmaxf(mx1, sc[nt][e]);
        }
#pragma unroll
      for (int w = 1; w < 4; w <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, w));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, w));
      }
      // Every row sees key 0 in the first tile, so the new max is finite.
      const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
      const float a0 = __expf(m0 - mn0), a1 = __expf(m1 - mn1);  // 0 at the first tile
      m0 = mn0;
      m1 = mn1;
      l0 *= a0;
      l1 *= a1;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float p = __expf(sc[nt][e] - (e < 2 ? mn0 : mn1));  // 0 where masked
          sc[nt][e] = p;
          if (e < 2)
            l0 += p;
          else
            l1 += p;
        }
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        oacc[dt][0] *= a0;
        oacc[dt][1] *= a0;
        oacc[dt][2] *= a1;
        oacc[dt][3] *= a1;
      }

      // O += P V, 16 keys per step; the S accumulators of two key tiles form P's A fragment.
#pragma unroll
      for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
        unsigned phi[4], plo[4];
#pragma unroll
        for (int f = 0; f < 4; ++f) {
          const float* src = sc[2 * kk + (f >> 1)] + 2 * (f & 1);
          const __half h0 = __float2half_rn(src[0]), h1 = __float2half_rn(src[1]);
          phi[f] = pack2(h0, h1);
          plo[f] = pack2(__float2half_rn(src[0] - __half2float(h0)),
                         __float2half_rn(src[1] - __half2float(h1)));
        }
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          const __half* vp = vs + (kk * 16 + 2 * t4) * KS + dt * 8 + g;
          const unsigned b0 = pack2(vp[0], vp[KS]), b1 = pack2(vp[8 * KS], vp[9 * KS]);
          mma16816(oacc[dt], phi, b0, b1);
          mma16816(oacc[dt], plo, b0, b1);
        }
      }
    }
    __syncthreads();  // the tiles are rewritten next
  }

#pragma unroll
  for (int w = 1; w < 4; w <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, w);
    l1 += __shfl_xor_sync(0xffffffffu, l1, w);
  }
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e < 2 ? r0 : r1, d = dt * 8 + 2 * t4 + (e & 1);
      if (r < S && d < D)
        o[head + (long long)r * D + d] = __float2half_rn(oacc[dt][e] / (e < 2 ? l0 : l1));
    }
}
