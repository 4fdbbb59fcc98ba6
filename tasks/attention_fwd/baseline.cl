// Baseline: one work-group of 128 work-items per query row. The row walks its keys j <= i in
// chunks of 128: work-item t scores key c + t into local memory, tree reductions give the
// chunk's max and sum (online softmax across chunks), then work-item t accumulates output dim t.
// @kernel attention_baseline
// @grid B * H * S
// @block 128
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

#define BLOCK 128

__kernel void attention_baseline(__global const elem_t* q, __global const elem_t* k,
                                 __global const elem_t* v, __global elem_t* o, int B, int H, int S,
                                 int D, float scale) {
  __local float qs[BLOCK];           // the query row
  __local float p[BLOCK];            // the chunk's probabilities
  __local float red[BLOCK];          // reduction scratch
  const long row = get_group_id(0);  // (b * H + h) * S + i
  const int t = get_local_id(0);
  const int i = (int)(row % S);
  const long head = (row - i) * D;
  qs[t] = t < D ? LoadElem(row * D + t, q) : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);

  float m = -INFINITY, l = 0.0f, acc = 0.0f;  // work-item t owns output dim t
  for (int c = 0; c <= i; c += BLOCK) {
    const int j = c + t;
    float s = -INFINITY;
    if (j <= i) {
      s = 0.0f;
      for (int d = 0; d < D; ++d) s += qs[d] * LoadElem(head + (long)j * D + d, k);
      s *= scale;
    }
    red[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
      if (t < w) red[t] = fmax(red[t], red[t + w]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float m_new = fmax(m, red[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
    const float pt = j <= i ? exp(s - m_new) : 0.0f;
    p[t] = pt;
    red[t] = pt;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
      if (t < w) red[t] += red[t + w];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float alpha = exp(m - m_new);  // 0 at the first chunk, where m = -inf
    l = l * alpha + red[0];
    m = m_new;
    if (t < D) {
      const int n = min(BLOCK, i + 1 - c);
      float a = 0.0f;
      for (int jj = 0; jj < n; ++jj) a += p[jj] * LoadElem(head + (long)(c + jj) * D + t, v);
      acc = acc * alpha + a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // p and red are rewritten by the next chunk
  }
  if (t < D) StoreElem(acc / l, row * D + t, o);
}
