// Starting kernel (kfoundry import, op class matmul): out = lhs rhs, each work-item computing VEC
// consecutive outputs of ROWS rows: one element of lhs times a VEC-wide vector of rhs's row,
// accumulated in ROWS x VEC registers, so a CPU vectorises within the work-item. Outputs past the
// last full vector of a row take a scalar path.
// @kernel kf_matmul_rowvec
// @grid ceil_div(KF_N, BLOCK * VEC), ceil_div(KF_M, ROWS)
// @block BLOCK, 1
// @param BLOCK in [1, 2, 4, 8, 16] default 4
// @param VEC in [4, 8] default 8
// @param ROWS in [1, 2, 4] default 2
// @constraint BLOCK <= max_work_group_size
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

__kernel void kf_matmul_rowvec(KF_PARAMS) {
  const long rows = KF_M, cols = KF_N, depth = KF_K;
  const long col = get_global_id(0) * VEC, row0 = get_global_id(1) * ROWS;
  if (col >= cols || row0 >= rows) return;
  if (col + VEC <= cols) {
    floatV acc[ROWS];
    for (int r = 0; r < ROWS; ++r) acc[r] = (floatV)(0.0f);
    for (long k = 0; k < depth; ++k) {
      const floatV b = VLOAD(0, KF_RHS + k * cols + col);
      for (int r = 0; r < ROWS; ++r)
        if (row0 + r < rows) acc[r] += KF_LHS[(row0 + r) * depth + k] * b;
    }
    for (int r = 0; r < ROWS; ++r)
      if (row0 + r < rows) VSTORE(acc[r], 0, KF_OUT + (row0 + r) * cols + col);
    return;
  }
  for (int r = 0; r < ROWS && row0 + r < rows; ++r) {
    for (long c = col; c < cols; ++c) {
      float s = 0.0f;
      for (long k = 0; k < depth; ++k) s += KF_LHS[(row0 + r) * depth + k] * KF_RHS[k * cols + c];
      KF_OUT[(row0 + r) * cols + c] = s;
    }
  }
}
