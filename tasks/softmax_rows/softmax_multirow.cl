// Several rows per work-group, for short rows: TPR consecutive work-items own a row and a group
// covers ROWS rows. Scalar loads, three passes; each reduction is a local-memory tree within the
// row's TPR slots. Work-items past the last row take part in the barriers but read and write
// nothing.
// @kernel softmax_multirow
// @grid ceil_div(R, ROWS)
// @block TPR * ROWS
// @param TPR in [2, 4, 8, 16, 32, 64] default 16
// @param ROWS in [1, 2, 4, 8, 16] default 4
// @constraint TPR * ROWS <= max_work_group_size

__kernel void softmax_multirow(__global const half* restrict x, __global half* restrict y, int R,
                               int N) {
  __local float red[TPR * ROWS];
  const int t = get_local_id(0), lane = t % TPR;
  __local float* seg = red + (t - lane);  // this row's TPR slots
  const int row = get_group_id(0) * ROWS + t / TPR;
  const int n = row < R ? N : 0;
  __global const half* xr = x + (long)min(row, R - 1) * N;
  __global half* yr = y + (long)min(row, R - 1) * N;

  float m = -FLT_MAX;
  for (int j = lane; j < n; j += TPR) m = fmax(m, vload_half(j, xr));
  seg[lane] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TPR / 2; s > 0; s >>= 1) {
    if (lane < s) seg[lane] = fmax(seg[lane], seg[lane + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = seg[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  float sum = 0.0f;
  for (int j = lane; j < n; j += TPR) sum += exp(vload_half(j, xr) - m);
  seg[lane] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TPR / 2; s > 0; s >>= 1) {
    if (lane < s) seg[lane] += seg[lane + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / seg[0];

  for (int j = lane; j < n; j += TPR) vstore_half_rte(exp(vload_half(j, xr) - m) * inv, j, yr);
}
