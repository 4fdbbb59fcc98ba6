// An fp32 GEMM on TF32 tensor cores (nvcuda::wmma, 16x16x8 tf32 fragments, fp32 accumulators):
// each operand keeps 10 bits of mantissa. One warp per 16x16 tile of C, A and B staged through
// shared memory with zeros past the edges. On inputs in [-1, 1] its error hides under a loose
// tolerance; the precision probe sees it.
// @kernel gemm_tf32_mma
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 32, 1
#include <mma.h>

using namespace nvcuda;

extern "C" __global__ void gemm_tf32_mma(const float* A, const float* B, float* C, int M, int N,
                                         int K) {
  __shared__ float as[16 * 8], bs[8 * 16], cs[16 * 16];
  const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < K; k0 += 8) {
    for (int i = threadIdx.x; i < 128; i += 32) {
      const int ar = i / 8, ac = i % 8, br = i / 16, bc = i % 16;
      as[i] = m0 + ar < M && k0 + ac < K ? A[(long long)(m0 + ar) * K + k0 + ac] : 0.0f;
      bs[i] = k0 + br < K && n0 + bc < N ? B[(long long)(k0 + br) * N + n0 + bc] : 0.0f;
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
    wmma::load_matrix_sync(a, as, 8);
    wmma::load_matrix_sync(b, bs, 16);
    for (int t = 0; t < a.num_elements; ++t) a.x[t] = wmma::__float_to_tf32(a.x[t]);
    for (int t = 0; t < b.num_elements; ++t) b.x[t] = wmma::__float_to_tf32(b.x[t]);
    wmma::mma_sync(acc, a, b, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(cs, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = threadIdx.x; i < 256; i += 32) {
    const int r = i / 16, c = i % 16;
    if (m0 + r < M && n0 + c < N) C[(long long)(m0 + r) * N + n0 + c] = cs[i];
  }
}
