// Reference: one work-item per query row (b, h, i), two passes over the keys j <= i in fp32:
// the first finds the largest score, the second sums exp(score - max) and the weighted V rows.
// @kernel attention_reference
// @grid ceil_div(B * H * S, 64)
// @block 64
// @constraint D <= 128

#if KF_BF16
// OpenCL has no bfloat16 (the attention_fwd.bf16 variant): its bits sit in a ushort, widened by a
// shift and narrowed to nearest even (a NaN kept a NaN).
typedef ushort elem_t;
float LoadElem(long i, __global const ushort* p) {
  return as_float((uint)p[i] << 16);
}
void StoreElem(float f, long i, __global ushort* p) {
  uint x = as_uint(f);
  p[i] = (x & 0x7fffffffu) > 0x7f800000u ? (ushort)((x >> 16) | 0x40u)
                                         : (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
#else
typedef half elem_t;
#define LoadElem(i, p) vload_half(i, p)
#define StoreElem(f, i, p) vstore_half_rte(f, i, p)
#endif

__kernel void attention_reference(__global const elem_t* q, __global const elem_t* k,
                                  __global const elem_t* v, __global elem_t* o, int B, int H, int S,
                                  int D, float scale) {
  const long row = get_global_id(0);  // (b * H + h) * S + i
  if (row >= (long)B * H * S) return;
  const int i = (int)(row % S);
  const long head = (row - i) * D;  // where this (b, h) starts in q, k, v
  const long qi = row * D;

  float m = -INFINITY;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += LoadElem(qi + d, q) * LoadElem(head + (long)j * D + d, k);
    m = fmax(m, s * scale);
  }

  float l = 0.0f, acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += LoadElem(qi + d, q) * LoadElem(head + (long)j * D + d, k);
    const float p = exp(s * scale - m);
    l += p;
    for (int d = 0; d < D; ++d) acc[d] += p * LoadElem(head + (long)j * D + d, v);
  }
  for (int d = 0; d < D; ++d) StoreElem(acc[d] / l, qi + d, o);
}
