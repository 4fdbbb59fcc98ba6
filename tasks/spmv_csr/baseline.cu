// Baseline: the scalar CSR kernel, one thread per row, its products summed in order in fp32.
// The workspaces are not used.
// @kernel spmv_baseline
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [128, 256, 512] default 256

extern "C" __global__ void spmv_baseline(const int* row_ptr, const int* col_idx, const float* vals,
                                         const float* x, float* y, int* carry_row, float* carry_val,
                                         int* counter, int R, int C, int NNZ) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  float s = 0.0f;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += vals[k] * x[col_idx[k]];
  y[r] = s;
}
