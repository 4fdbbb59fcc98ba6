// Reference: one thread per query row (b, h, i), two passes over the keys j <= i in fp32:
// the first finds the largest score, the second sums exp(score - max) and the weighted V rows.
// @kernel attention_reference
// @grid ceil_div(B * H * S, 64)
// @block 64
// @constraint D <= 128
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

extern "C" __global__ void attention_reference(const __half* q, const __half* k, const __half* v,
                                               __half* o, int B, int H, int S, int D, float scale) {
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // (b * H + h) * S + i
  if (row >= (long long)B * H * S) return;
  const int i = (int)(row % S);
  const long long head = (row - i) * D;  // where this (b, h) starts in q, k, v
  const long long qi = row * D;

  float m = NEG_INF;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d)
      s += __half2float(q[qi + d]) * __half2float(k[head + (long long)j * D + d]);
    m = fmaxf(m, s * scale);
  }

  float l = 0.0f, acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d)
      s += __half2float(q[qi + d]) * __half2float(k[head + (long long)j * D + d]);
    const float p = expf(s * scale - m);
    l += p;
    for (int d = 0; d < D; ++d) acc[d] += p * __half2float(v[head + (long long)j * D + d]);
  }
  for (int d = 0; d < D; ++d) o[qi + d] = __float2half_rn(acc[d] / l);
}
