// Scalar CSR, tuned: each work-item takes RPT consecutive rows (one contiguous stretch of col_idx
// and vals, which suits a CPU's caches and prefetchers), and sums each row with UNROLL
// independent partial sums (combined in a fixed order at the end) so UNROLL gathers of x are in
// flight at once. On PoCL (2 cores) at the cpu set (256 nonzeros a row on average) UNROLL 8 is
// 1.4-1.5x the baseline's single chain of dependent adds; on short rows (median 10) UNROLL > 1
// mostly adds remainder work. On a GPU, prefer the vector or merge templates. The workspaces are
// not used.
// @kernel spmv_scalar
// @grid ceil_div(R, BLOCK * RPT)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128, 256] default 256
// @param RPT in [1, 2, 4, 8, 16] default 1
// @param UNROLL in [1, 2, 4, 8] default 8
// @constraint BLOCK <= max_work_group_size

__kernel void spmv_scalar(__global const int* restrict row_ptr,
                          __global const int* restrict col_idx, __global const float* restrict vals,
                          __global const float* restrict x, __global float* restrict y,
                          __global int* carry_row, __global float* carry_val, __global int* counter,
                          int R, int C, int NNZ) {
  const long first = (long)get_global_id(0) * RPT;
  int begin = first < R ? row_ptr[first] : 0;
  for (int q = 0; q < RPT; ++q) {
    const long r = first + q;
    if (r >= R) return;
    const int end = row_ptr[r + 1];
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
    int k = begin;
    for (; k + UNROLL <= end; k += UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) acc[u] += vals[k + u] * x[col_idx[k + u]];
    }
    for (; k < end; ++k) acc[0] += vals[k] * x[col_idx[k]];
    float s = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; ++u) s += acc[u];
    y[r] = s;
    begin = end;
  }
}
