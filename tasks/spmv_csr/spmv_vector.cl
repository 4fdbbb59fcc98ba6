// Vector CSR: a team of TEAM consecutive work-items per row (BLOCK / TEAM rows per work-group).
// The team's members stride over the row's nonzeros together (neighbouring work-items read
// neighbouring col_idx and vals), then add their TEAM partial sums by a tree in local memory, in
// a fixed order. Suits rows of tens of nonzeros and up; very short rows leave most of a team
// idle. The workspaces are not used.
// @kernel spmv_vector
// @grid ceil_div(R, BLOCK // TEAM)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @param TEAM in [2, 4, 8, 16, 32] default 8
// @constraint TEAM <= BLOCK and BLOCK <= max_work_group_size

__kernel void spmv_vector(__global const int* restrict row_ptr,
                          __global const int* restrict col_idx, __global const float* restrict vals,
                          __global const float* restrict x, __global float* restrict y,
                          __global int* carry_row, __global float* carry_val, __global int* counter,
                          int R, int C, int NNZ) {
  __local float red[BLOCK];
  const int t = get_local_id(0);
  const int lane = t % TEAM;
  const long r = (long)get_group_id(0) * (BLOCK / TEAM) + t / TEAM;
  float s = 0.0f;
  if (r < R) {
    const int end = row_ptr[r + 1];
    for (int k = row_ptr[r] + lane; k < end; k += TEAM) s += vals[k] * x[col_idx[k]];
  }
  red[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = TEAM / 2; off > 0; off >>= 1) {  // every work-item reaches every barrier
    if (lane < off) red[t] += red[t + off];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0 && r < R) y[r] = red[t];
}
