// Tensor cores through the nvcuda::wmma API (<mma.h>, 16x16x16 fp16 fragments, fp32
// accumulators): a block of WARPS_M x WARPS_N warps computes a BM x BN tile of C, each warp a
// (BM/WARPS_M) x (BN/WARPS_N) sub-tile. Per K step of 32 the block stages A and B in shared
// memory (16-byte loads where the rows are 16-byte aligned, K and N multiples of 8, guarded
// scalar loads otherwise; zeros past the edges), synchronises, and each warp runs its mma_syncs.
// One shared-memory buffer, no overlap of loads and math. Each warp writes its accumulators
// through a small shared-memory patch so the fp16 stores can be bounds-checked.
// @kernel gemm_wmma
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block 32 * WARPS_M * WARPS_N, 1
// @param BM in [64, 128] default 128
// @param BN in [64, 128] default 128
// @param WARPS_M in [1, 2, 4] default 2
// @param WARPS_N in [1, 2, 4] default 4
// @constraint BM % (16 * WARPS_M) == 0 and BN % (16 * WARPS_N) == 0
// @constraint (BM // WARPS_M // 16) * (BN // WARPS_N // 16) <= 16
#include <cuda_fp16.h>
#include <mma.h>

#define BK 32
#define THREADS (32 * WARPS_M * WARPS_N)
#define FM (BM / WARPS_M / 16)
#define FN (BN / WARPS_N / 16)
#define AS_LD (BK + 8)
#define BS_LD (BN + 8)
#define CS_LD 20

using namespace nvcuda;

// Eight halves of row `src` as one 16-byte word, zeros past `left` valid elements; one 16-byte
// load when `vec` (the row and K or N are 16-byte aligned).
__device__ __forceinline__ uint4 load8(const __half* src, int left, bool vec) {
  if (vec) return left >= 8 ? __ldg(reinterpret_cast<const uint4*>(src)) : make_uint4(0, 0, 0, 0);
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned lo = 2 * i < left ? __half_as_ushort(src[2 * i]) : 0u;
    const unsigned hi = 2 * i + 1 < left ? __half_as_ushort(src[2 * i + 1]) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_wmma(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
              int M, int N, int K) {
  __shared__ __align__(32) __half As[BM][AS_LD];
  __shared__ __align__(32) __half Bs[BK][BS_LD];
  __shared__ __align__(32) float Cs[WARPS_M * WARPS_N][16][CS_LD];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 8 == 0) && ((size_t)A % 16 == 0);
  const bool b_vec = (N % 8 == 0) && ((size_t)B % 16 == 0);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int c = tid; c < BM * BK / 8; c += THREADS) {
      const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      const int m = bm + r, k = k0 + kc;
      *reinterpret_cast<uint4*>(&As[r][kc]) =
          load8(A + (long long)m * K + k, m < M ? K - k : 0, a_vec);
    }
    for (int c = tid; c < BK * BN / 8; c += THREADS) {
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int k = k0 + r, n = bn + nc;
      *reinterpret_cast<uint4*>(&Bs[r][nc]) =
          load8(B + (long long)k * N + n, k < K ? N - n : 0, b_vec);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i)
        wmma::load_matrix_sync(a[i], &As[wm * (BM / WARPS_M) + i * 16][kk], AS_LD);
#pragma unroll
      for (int j = 0; j < FN; ++j)
        wmma::load_matrix_sync(b[j], &Bs[kk][wn * (BN / WARPS_N) + j * 16], BS_LD);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  float* patch = &Cs[warp][0][0];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      wmma::store_matrix_sync(patch, acc[i][j], CS_LD, wmma::mem_row_major);
      __syncwarp();
      const int m0 = bm + wm * (BM / WARPS_M) + i * 16, n0 = bn + wn * (BN / WARPS_N) + j * 16;
      for (int e = lane; e < 256; e += 32) {
        const int r = e >> 4, c = e & 15;
        if (m0 + r < M && n0 + c < N)
          C[(long long)(m0 + r) * N + n0 + c] = __float2half_rn(patch[r * CS_LD + c]);
      }
      __syncwarp();
    }
}
