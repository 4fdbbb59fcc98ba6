// Baseline: the scalar CSR kernel, one work-item per row, its products summed in order in fp32.
// The workspaces are not used.
// @kernel spmv_baseline
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64

__kernel void spmv_baseline(__global const int* row_ptr, __global const int* col_idx,
                            __global const float* vals, __global const float* x, __global float* y,
                            __global int* carry_row, __global float* carry_val,
                            __global int* counter, int R, int C, int NNZ) {
  const int r = get_global_id(0);
  if (r >= R) return;
  float s = 0.0f;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += vals[k] * x[col_idx[k]];
  y[r] = s;
}
