// Reference: one work-item per query row (b, h, i), two passes over the keys j <= i in fp32:
// the first finds the largest score, the second sums exp(score - max) and the weighted V rows.
// @kernel attention_reference
// @grid ceil_div(B * H * S, 64)
// @block 64
// @constraint D <= 128

__kernel void attention_reference(__global const half* q, __global const half* k,
                                  __global const half* v, __global half* o, int B, int H, int S,
                                  int D, float scale) {
  const long row = get_global_id(0);  // (b * H + h) * S + i
  if (row >= (long)B * H * S) return;
  const int i = (int)(row % S);
  const long head = (row - i) * D;  // where this (b, h) starts in q, k, v
  const long qi = row * D;

  float m = -INFINITY;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += vload_half(qi + d, q) * vload_half(head + (long)j * D + d, k);
    m = fmax(m, s * scale);
  }

  float l = 0.0f, acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += vload_half(qi + d, q) * vload_half(head + (long)j * D + d, k);
    const float p = exp(s * scale - m);
    l += p;
    for (int d = 0; d < D; ++d) acc[d] += p * vload_half(head + (long)j * D + d, v);
  }
  for (int d = 0; d < D; ++d) vstore_half_rte(acc[d] / l, qi + d, o);
}
