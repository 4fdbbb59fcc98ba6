// Starting kernel (kfoundry import, op class matmul): out = lhs rhs, one work-item per output
// element, the work-group BX along a row of out and BY along a column, UNROLL partial sums.
// @kernel kf_matmul_items
// @grid ceil_div(KF_N, BX), ceil_div(KF_M, BY)
// @block BX, BY
// @param BX in [8, 16, 32, 64] default 16
// @param BY in [1, 2, 4, 8] default 4
// @param UNROLL in [1, 2, 4] default 2
// @constraint BX * BY <= max_work_group_size

__kernel void kf_matmul_items(KF_PARAMS) {
  const long rows = KF_M, cols = KF_N, depth = KF_K;
  const long col = get_global_id(0), row = get_global_id(1);
  if (row >= rows || col >= cols) return;
  float acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  long k = 0;
  for (; k + UNROLL <= depth; k += UNROLL)
    for (int u = 0; u < UNROLL; ++u)
      acc[u] += KF_LHS[row * depth + k + u] * KF_RHS[(k + u) * cols + col];
  for (; k < depth; ++k) acc[0] += KF_LHS[row * depth + k] * KF_RHS[k * cols + col];
  float s = 0.0f;
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  KF_OUT[row * cols + col] = s;
}
