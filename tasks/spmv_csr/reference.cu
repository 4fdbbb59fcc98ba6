// Reference: one thread per row, the row's products summed in order in double. The workspaces
// are not touched.
// @kernel spmv_reference
// @grid ceil_div(R, 128)
// @block 128

extern "C" __global__ void spmv_reference(const int* row_ptr, const int* col_idx, const float* vals,
                                          const float* x, float* y, int* carry_row,
                                          float* carry_val, int* counter, int R, int C, int NNZ) {
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  double s = 0.0;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += (double)vals[k] * (double)x[col_idx[k]];
  y[r] = (float)s;
}
