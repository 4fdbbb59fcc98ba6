// Starting kernel (kfoundry import, op class matmul): out = lhs rhs with TILE x TILE tiles of both
// operands staged in local memory (zeros past the edges), one output element per work-item.
// @kernel kf_matmul_tiled
// @grid ceil_div(KF_N, TILE), ceil_div(KF_M, TILE)
// @block TILE, TILE
// @param TILE in [4, 8, 16] default 8
// @constraint TILE * TILE <= max_work_group_size

__kernel void kf_matmul_tiled(KF_PARAMS) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  const long rows = KF_M, cols = KF_N, depth = KF_K;
  const int tx = get_local_id(0), ty = get_local_id(1);
  const long col = get_group_id(0) * TILE + tx, row = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (long k0 = 0; k0 < depth; k0 += TILE) {
    As[ty][tx] = (row < rows && k0 + tx < depth) ? KF_LHS[row * depth + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < depth && col < cols) ? KF_RHS[(k0 + ty) * cols + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < rows && col < cols) KF_OUT[row * cols + col] = acc;
}
