// 97_ScaledDotProductAttention: softmax(q k^T / sqrt(head_dim)) v per (batch, head), no mask; one
// work-item per query row: the row's largest score, the sum of exponentials, then the weighted
// sum of v's rows accumulated in the output row.
// @kernel sdpa
// @grid ceil_div(batch_size * num_heads * seq_len, 16)
// @block 16
__kernel void sdpa(__global const float* q, __global const float* k, __global const float* v,
                   __global float* out, int batch_size, int num_heads, int seq_len, int head_dim) {
  const long i = get_global_id(0);
  if (i >= (long)batch_size * num_heads * seq_len) return;
  const long head = (i / seq_len) * seq_len * head_dim;
  __global const float* qi = q + i * head_dim;
  __global float* o = out + i * head_dim;
  const float scale = 1.0f / sqrt((float)head_dim);
  float m = -INFINITY;
  for (int j = 0; j < seq_len; ++j) {
    float s = 0.0f;
    for (int d = 0; d < head_dim; ++d) s += qi[d] * k[head + (long)j * head_dim + d];
    m = fmax(m, s * scale);
  }
  float l = 0.0f;
  for (int d = 0; d < head_dim; ++d) o[d] = 0.0f;
  for (int j = 0; j < seq_len; ++j) {
    float s = 0.0f;
    for (int d = 0; d < head_dim; ++d) s += qi[d] * k[head + (long)j * head_dim + d];
    const float p = exp(s * scale - m);
    l += p;
    for (int d = 0; d < head_dim; ++d) o[d] += p * v[head + (long)j * head_dim + d];
  }
  for (int d = 0; d < head_dim; ++d) o[d] /= l;
}
