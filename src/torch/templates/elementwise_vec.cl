// Starting kernel (kfoundry import, op class elementwise): out = f(x), each work-item loading and
// storing VEC contiguous elements as one vector; the last partial vector element by element.
// @kernel kf_elementwise_vec
// @grid ceil_div(KF_ELEMENTS, BLOCK * VEC)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 64
// @param VEC in [4, 8] default 8
// @constraint BLOCK <= max_work_group_size
#define OP(v) (KF_EXPR)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VEC)

__kernel void kf_elementwise_vec(KF_PARAMS) {
  const long n = (long)KF_ELEMENTS;
  const long i = (long)get_global_id(0) * VEC;
  if (i + VEC <= n) {
    const floatV v = CAT(vload, VEC)(0, KF_X + i);
    CAT(vstore, VEC)(OP(v), 0, KF_OUT + i);
  } else {
    for (long j = i; j < n; ++j) {
      const float v = KF_X[j];
      KF_OUT[j] = OP(v);
    }
  }
}
