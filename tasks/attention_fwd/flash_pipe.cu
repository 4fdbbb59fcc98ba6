// Tensor-core FlashAttention (FA2 layout) fed by a cp.async double buffer: one block per
// (b, h, tile of 16 * WARPS queries), each warp owning 16 query rows whose Q fragments stay in
// registers, as in flash_mma. What differs: the K and V tiles of BLOCK_N keys arrive through
// cp.async in dynamic shared memory, two stages, so the next tile is in flight while this one
// is multiplied; the mma operands come from shared memory through ldmatrix (K as stored, V
// transposed by .trans), four 8x8 fragments per instruction; the softmax works in base 2 with
// the scale folded into log2(e), and the causal mask is applied only on tiles that reach past
// a row of the warp or past S; query tiles are numbered from the last, so the blocks with the
// most keys start first and the short ones fill the tail. P enters P V rounded once to fp16, as
// in FlashAttention (P_SPLIT 0), or as fp16 hi + lo parts, two mma each, as in flash_mma
// (P_SPLIT 1: fp32-level accuracy, half again the tensor-core work).
// Rows are padded by 8 halves (272 bytes), so the 8 rows one ldmatrix reads fall in 8
// different 16-byte bank groups. Head dimensions below 128 skip the 16-dim steps past D; a D
// that is not a multiple of 8 loads its tiles with guarded scalar reads into the same layout.
// @kernel flash_pipe
// @grid ceil_div(S, 16 * WARPS), B * H
// @block 32 * WARPS, 1
// @shared 4 * BLOCK_N * 272
// @param WARPS in [4, 8] default 4
// @param BLOCK_N in [64, 32, 128] default 64
// @param P_SPLIT in [0, 1] default 0
// @constraint D <= 128
// @constraint 4 * BLOCK_N * 272 <= local_mem_bytes
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

#define DMAX 128
#define ROW_BYTES ((DMAX + 8) * 2)  // a padded row of K or V in shared memory
#define BLOCK_M (16 * WARPS)
#define THREADS (32 * WARPS)
#define NT (BLOCK_N / 8)  // 8-key tiles of S
#define DT (DMAX / 8)     // 8-dim tiles of O
#define TILE_BYTES (BLOCK_N * ROW_BYTES)
#define CHUNKS (BLOCK_N * DMAX / 8)  // 16-byte chunks of one K or V tile

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; bytes past src_bytes (0 or 16) are zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a (16x16, row-major) * b (16x8, column-major), fp16 in, fp32 accumulate.
__device__ __forceinline__ void mma16816(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ unsigned pack2(float lo, float hi) {  // lo: the lower 16 bits
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// Eight halves of a row, zeros past `left` valid elements, as one 16-byte word.
__device__ __forceinline__ uint4 gather8(const __half* src, int left) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned lo = 2 * i < left ? __half_as_ushort(src[2 * i]) : 0u;
    const unsigned hi = 2 * i + 1 < left ? __half_as_ushort(src[2 * i + 1]) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Keys n0 .. n0 + BLOCK_N - 1 of K and V into stage `stage`: zeros past S and past D.
__device__ __forceinline__ void load_tile(unsigned char* smem, const __half* __restrict__ k,
                                          const __half* __restrict__ v, long long head, int n0,
                                          int S, int D, int stage, int tid) {
  const unsigned base = smem_addr(smem) + stage * 2 * TILE_BYTES;
  for (int c = tid; c < CHUNKS; c += THREADS) {
    const int r = c / (DMAX / 8), d = (c % (DMAX / 8)) * 8, row = n0 + r;
    const int off = r * ROW_BYTES + d * 2;
    const long long at = head + (long long)row * D + d;
    if ((D & 7) == 0 || row >= S || d >= D) {  // the whole chunk or none of it
      const bool in = row < S && d < D;
      cp_async16(base + off, in ? k + at : k, in ? 16 : 0);
      cp_async16(base + TILE_BYTES + off, in ? v + at : v, in ? 16 : 0);
    } else {
      unsigned char* dst = smem + stage * 2 * TILE_BYTES + off;
      *reinterpret_cast<uint4*>(dst) = gather8(k + at, D - d);
      *reinterpret_cast<uint4*>(dst + TILE_BYTES) = gather8(v + at, D - d);
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    flash_pipe(const __half* __restrict__ q, const __half* __restrict__ k,
               const __half* __restrict__ v, __half* __restrict__ o, int B, int H, int S, int D,
               float scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;                 // fragment row group, thread in the group
  const int i0 = (gridDim.x - 1 - blockIdx.x) * BLOCK_M;  // the longest query tiles first
  const int w0 = i0 + warp * 16;                          // the warp's first query row
  const int r0 = w0 + g, r1 = r0 + 8;                     // this thread's two rows
  const long long head = (long long)blockIdx.y * S * D;
  const float scale2 = scale * 1.4426950408889634f;  // scores in base 2

  // Q as A fragments: rows r0/r1, dims 2*t4 + {0, 1} and + 8 of each 16-dim step.
  unsigned qa[DMAX / 16][4];
#pragma unroll
  for (int kst = 0; kst < DMAX / 16; ++kst) {
    float x[2][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = h ? r1 : r0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int d = kst * 16 + 2 * t4 + (e & 1) + (e >> 1) * 8;
        x[h][e] = (r < S && d < D) ? __half2float(q[head + (long long)r * D + d]) : 0.0f;
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

  // ldmatrix lane offsets. K (non-transposed): matrices (keys +0, dims +0), (+0, +8), (+8, +0),
  // (+8, +8), giving the B fragments of two 8-key tiles. V (.trans): matrices (keys +0, dims +0),
  // (+8, +0), (+0, +8), (+8, +8), giving the B fragments of two 8-dim tiles.
  const unsigned k_lane = ((lane >> 4) * 8 + (lane & 7)) * ROW_BYTES + ((lane >> 3) & 1) * 16;
  const unsigned v_lane = (((lane >> 3) & 1) * 8 + (lane & 7)) * ROW_BYTES + (lane >> 4) * 16;
  const unsigned sbase = smem_addr(smem);

  const int kv_end = min(S, i0 + BLOCK_M);
  const int tiles = (kv_end + BLOCK_N - 1) / BLOCK_N;
  load_tile(smem, k, v, head, 0, S, D, 0, tid);
  cp_async_commit();
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) load_tile(smem, k, v, head, (t + 1) * BLOCK_N, S, D, (t + 1) & 1, tid);
    cp_async_commit();  // committed even when empty, so that one group is always the next tile
    cp_async_wait<1>();
    __syncthreads();
    const int n0 = t * BLOCK_N;
    const unsigned kb = sbase + (t & 1) * 2 * TILE_BYTES + k_lane;
    const unsigned vb = sbase + (t & 1) * 2 * TILE_BYTES + TILE_BYTES + v_lane;

    if (w0 < S && w0 + 15 >= n0) {  // warp-uniform: some row of the warp sees this tile
      float sc[NT][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sc[nt][e] = 0.0f;
#pragma unroll
      for (int kst = 0; kst < DMAX / 16; ++kst) {
        if (kst * 16 >= D) break;
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
          unsigned b[4];
          ldmatrix_x4(b, kb + nt * 8 * ROW_BYTES + kst * 32);
          mma16816(sc[nt], qa[kst], b);
          mma16816(sc[nt + 1], qa[kst], b + 2);
        }
      }

      // Scale into base 2, the causal mask where a key can pass a row, the row max over the
      // quad that shares the row.
      const bool edge = n0 + BLOCK_N - 1 > w0 || n0 + BLOCK_N > S;
      float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float s = sc[nt][e] * scale2;
          if (edge) {
            const int j = n0 + nt * 8 + 2 * t4 + (e & 1), r = e < 2 ? r0 : r1;
            if (j > r || j >= S) s = NEG_INF;
          }
          sc[nt][e] = s;
          if (e < 2)
            mx0 = fmaxf(mx0, s);
          else
            mx1 = fmaxf(mx1, s);
        }
#pragma unroll
      for (int w = 1; w < 4; w <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, w));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, w));
      }
      // Every row sees key 0 in the first tile, so the new max is finite.
      const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
      const float a0 = exp2f(m0 - mn0), a1 = exp2f(m1 - mn1);  // 0 at the first tile
      m0 = mn0;
      m1 = mn1;
      l0 *= a0;
      l1 *= a1;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float p = exp2f(sc[nt][e] - (e < 2 ? mn0 : mn1));  // 0 where masked
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
        const float* s0 = sc[2 * kk];
        const float* s1 = sc[2 * kk + 1];
        const unsigned pa[4] = {pack2(s0[0], s0[1]), pack2(s0[2], s0[3]), pack2(s1[0], s1[1]),
                                pack2(s1[2], s1[3])};
        unsigned plo[4];
        if (P_SPLIT) {
#pragma unroll
          for (int f = 0; f < 4; ++f) {
            const float* src = (f < 2 ? s0 : s1) + 2 * (f & 1);
            const __half2 hi = *reinterpret_cast<const __half2*>(&pa[f]);
            plo[f] = pack2(src[0] - __low2float(hi), src[1] - __high2float(hi));
          }
        }
#pragma unroll
        for (int dt = 0; dt < DT; dt += 2) {
          if (dt * 8 >= D) break;
          unsigned b[4];
          ldmatrix_x4_trans(b, vb + kk * 16 * ROW_BYTES + dt * 16);
          mma16816(oacc[dt], pa, b);
          mma16816(oacc[dt + 1], pa, b + 2);
          if (P_SPLIT) {
            mma16816(oacc[dt], plo, b);
            mma16816(oacc[dt + 1], plo, b + 2);
          }
        }
      }
    }
    __syncthreads();  // this stage is refilled by the next iteration's copies
  }

#pragma unroll
  for (int w = 1; w < 4; w <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, w);
    l1 += __shfl_xor_sync(0xffffffffu, l1, w);
  }
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = h ? r1 : r0, d = dt * 8 + 2 * t4;
      const float inv = h ? inv1 : inv0;
      if (r >= S || d >= D) continue;
      __half* dst = o + head + (long long)r * D + d;
      const float x = oacc[dt][2 * h] * inv, y = oacc[dt][2 * h + 1] * inv;
      if ((D & 1) == 0) {
        *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
      } else {
        dst[0] = __float2half_rn(x);
        if (d + 1 < D) dst[1] = __float2half_rn(y);
      }
    }
}
