// Starting kernel (kfoundry import, op class matmul): out = lhs rhs in fp32 with TILE x TILE tiles
// of both operands staged in shared memory (zeros past the edges); each thread computes ROWS
// outputs TILE / ROWS rows apart in one column, so a block of TILE x (TILE / ROWS) threads covers a
// TILE x TILE tile of out.
// @kernel kf_matmul_tiled
// @grid ceil_div(KF_N, TILE), ceil_div(KF_M, TILE)
// @block TILE, TILE // ROWS
// @param TILE in [16, 32] default 32
// @param ROWS in [1, 2, 4, 8] default 4
// @constraint TILE * (TILE // ROWS) <= max_work_group_size
#include <cuda_fp16.h>

template <typename TA, typename TB, typename U>
__device__ __forceinline__ void MatmulTiled(const TA* __restrict__ A, const TB* __restrict__ B,
                                            U* __restrict__ C, long long M, long long N,
                                            long long K) {
  constexpr int kStep = TILE / ROWS;  // the rows between a thread's outputs
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long col = (long long)blockIdx.x * TILE + tx, row0 = (long long)blockIdx.y * TILE + ty;
  float acc[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) acc[r] = 0.0f;
  for (long long k0 = 0; k0 < K; k0 += TILE) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int y = ty + r * kStep;
      const long long m = row0 + r * kStep, k = k0 + y;
      As[y][tx] = m < M && k0 + tx < K ? static_cast<float>(A[m * K + k0 + tx]) : 0.0f;
      Bs[y][tx] = k < K && col < N ? static_cast<float>(B[k * N + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) {
      const float b = Bs[k][tx];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) acc[r] = fmaf(As[ty + r * kStep][k], b, acc[r]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const long long m = row0 + r * kStep;
    if (m < M && col < N) C[m * N + col] = static_cast<U>(acc[r]);
  }
}

extern "C" __global__ void __launch_bounds__(TILE*(TILE / ROWS)) kf_matmul_tiled(KF_PARAMS) {
  MatmulTiled(KF_LHS, KF_RHS, KF_OUT, KF_M, KF_N, KF_K);
}
