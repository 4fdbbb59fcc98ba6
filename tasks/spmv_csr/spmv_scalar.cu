// Scalar CSR, tuned: one thread per row, RPT rows per thread (rows blockIdx * BLOCK * RPT +
// q * BLOCK + threadIdx, so neighbouring threads keep neighbouring rows and the row_ptr reads and
// y writes stay coalesced), reads through the read-only cache, and each row summed with UNROLL
// independent partial sums (combined in a fixed order at the end) so UNROLL gathers of x are in
// flight at once. Row lengths differ across a warp, so a warp runs as long as its longest row,
// and each thread's nonzeros are far from its neighbours' (uncoalesced): the cell of the simple
// GPU kernel, tuned. Measured on an H200 at the size of record (BLOCK 256, RPT 1): UNROLL 1 about
// as fast as the baseline, UNROLL 4 a third slower. The workspaces are not used.
// @kernel spmv_scalar
// @grid ceil_div(R, BLOCK * RPT)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param RPT in [1, 2, 4] default 1
// @param UNROLL in [1, 2, 4] default 1
// @constraint BLOCK <= max_work_group_size

extern "C" __global__ void __launch_bounds__(BLOCK)
    spmv_scalar(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y,
                int* carry_row, float* carry_val, int* counter, int R, int C, int NNZ) {
  const long long base = (long long)blockIdx.x * BLOCK * RPT + threadIdx.x;
#pragma unroll
  for (int q = 0; q < RPT; ++q) {
    const long long r = base + (long long)q * BLOCK;
    if (r >= R) return;
    const int end = __ldg(row_ptr + r + 1);
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
    int k = __ldg(row_ptr + r);
    for (; k + UNROLL <= end; k += UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        acc[u] += __ldg(vals + k + u) * __ldg(x + __ldg(col_idx + k + u));
    }
    for (; k < end; ++k) acc[0] += __ldg(vals + k) * __ldg(x + __ldg(col_idx + k));
    float s = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; ++u) s += acc[u];
    y[r] = s;
  }
}
