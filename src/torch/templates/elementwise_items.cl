// Starting kernel (kfoundry import, op class elementwise): out = f(x) element by element; each
// work-item takes ITEMS elements BLOCK apart within its group's chunk of BLOCK * ITEMS, so
// neighbouring work-items touch neighbouring elements.
// @kernel kf_elementwise
// @grid ceil_div(KF_ELEMENTS, BLOCK * ITEMS)
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128
// @param ITEMS in [1, 2, 4, 8] default 4
// @constraint BLOCK <= max_work_group_size
#define OP(v) (KF_EXPR)

__kernel void kf_elementwise(KF_PARAMS) {
  const long n = (long)KF_ELEMENTS;
  const long base = (long)get_group_id(0) * BLOCK * ITEMS + get_local_id(0);
  for (int k = 0; k < ITEMS; ++k) {
    const long i = base + (long)k * BLOCK;
    if (i < n) {
      const float v = KF_X[i];
      KF_OUT[i] = OP(v);
    }
  }
}
