// Vector CSR: a team of TEAM consecutive lanes of a warp per row (BLOCK / TEAM rows per block).
// The team strides over the row's nonzeros together (coalesced reads of col_idx and vals), then
// adds its TEAM partial sums with __shfl_down_sync inside the team, in a fixed order. Suits rows
// of tens of nonzeros and up; very short rows leave most of a team idle, yet on an H200 at the
// size of record (16 nonzeros a row on average) a whole warp per row was the fastest team: TEAM 32
// 1.27 ms, 16 1.35 ms, 8 1.79 ms, 2 3.7 ms (BLOCK 256), the baseline 2.46 ms. The workspaces are
// not used.
// @kernel spmv_vector
// @grid ceil_div(R, BLOCK // TEAM)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 256
// @param TEAM in [2, 4, 8, 16, 32] default 32
// @constraint BLOCK <= max_work_group_size

extern "C" __global__ void __launch_bounds__(BLOCK)
    spmv_vector(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y,
                int* carry_row, float* carry_val, int* counter, int R, int C, int NNZ) {
  const int lane = threadIdx.x % TEAM;
  const long long r = (long long)blockIdx.x * (BLOCK / TEAM) + threadIdx.x / TEAM;
  float s = 0.0f;
  if (r < R) {  // no early return: every lane of the warp takes part in the shuffles
    const int end = __ldg(row_ptr + r + 1);
    for (int k = __ldg(row_ptr + r) + lane; k < end; k += TEAM)
      s += __ldg(vals + k) * __ldg(x + __ldg(col_idx + k));
  }
#pragma unroll
  for (int off = TEAM / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, TEAM);
  if (lane == 0 && r < R) y[r] = s;
}
