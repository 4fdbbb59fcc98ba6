// Reference: one thread per query row (b, h, i), two passes over the keys j <= i in fp32:
// the first finds the largest score, the second sums exp(score - max) and the weighted V rows.
// @kernel attention_reference
// @grid ceil_div(B * H * S, 64)
// @block 64
// @constraint D <= 128
#if KF_BF16
#include <cuda_bf16.h>  // the attention_fwd.bf16 variant
typedef __nv_bfloat16 elem_t;
__device__ inline float ToFloat(elem_t x) {
  return __bfloat162float(x);
}
__device__ inline elem_t FromFloat(float x) {
  return __float2bfloat16_rn(x);
}
#else
#include <cuda_fp16.h>
typedef __half elem_t;
__device__ inline float ToFloat(elem_t x) {
  return __half2float(x);
}
__device__ inline elem_t FromFloat(float x) {
  return __float2half_rn(x);
}
#endif

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

extern "C" __global__ void attention_reference(const elem_t* q, const elem_t* k, const elem_t* v,
                                               elem_t* o, int B, int H, int S, int D, float scale) {
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // (b * H + h) * S + i
  if (row >= (long long)B * H * S) return;
  const int i = (int)(row % S);
  const long long head = (row - i) * D;  // where this (b, h) starts in q, k, v
  const long long qi = row * D;

  float m = NEG_INF;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += ToFloat(q[qi + d]) * ToFloat(k[head + (long long)j * D + d]);
    m = fmaxf(m, s * scale);
  }

  float l = 0.0f, acc[128];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  for (int j = 0; j <= i; ++j) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += ToFloat(q[qi + d]) * ToFloat(k[head + (long long)j * D + d]);
    const float p = expf(s * scale - m);
    l += p;
    for (int d = 0; d < D; ++d) acc[d] += p * ToFloat(v[head + (long long)j * D + d]);
  }
  for (int d = 0; d < D; ++d) o[qi + d] = FromFloat(acc[d] / l);
}
