// Baseline: one block of 128 threads per query row. The row walks its keys j <= i in chunks of
// 128: thread t scores key c + t into shared memory, tree reductions give the chunk's max and
// sum (online softmax across chunks), then thread t accumulates output dim t.
// @kernel attention_baseline
// @grid B * H * S
// @block 128
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

#define BLOCK 128

extern "C" __global__ void __launch_bounds__(BLOCK)
    attention_baseline(const elem_t* q, const elem_t* k, const elem_t* v, elem_t* o, int B, int H,
                       int S, int D, float scale) {
  __shared__ float qs[BLOCK];        // the query row
  __shared__ float p[BLOCK];         // the chunk's probabilities
  __shared__ float red[BLOCK];       // reduction scratch
  const long long row = blockIdx.x;  // (b * H + h) * S + i
  const int t = threadIdx.x;
  const int i = (int)(row % S);
  const long long head = (row - i) * D;
  qs[t] = t < D ? ToFloat(q[row * D + t]) : 0.0f;
  __syncthreads();

  float m = NEG_INF, l = 0.0f, acc = 0.0f;  // thread t owns output dim t
  for (int c = 0; c <= i; c += BLOCK) {
    const int j = c + t;
    float s = NEG_INF;
    if (j <= i) {
      s = 0.0f;
      for (int d = 0; d < D; ++d) s += qs[d] * ToFloat(k[head + (long long)j * D + d]);
      s *= scale;
    }
    red[t] = s;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
      if (t < w) red[t] = fmaxf(red[t], red[t + w]);
      __syncthreads();
    }
    const float m_new = fmaxf(m, red[0]);
    __syncthreads();
    const float pt = j <= i ? expf(s - m_new) : 0.0f;
    p[t] = pt;
    red[t] = pt;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
      if (t < w) red[t] += red[t + w];
      __syncthreads();
    }
    const float alpha = expf(m - m_new);  // 0 at the first chunk, where m = -inf
    l = l * alpha + red[0];
    m = m_new;
    if (t < D) {
      const int n = min(BLOCK, i + 1 - c);
      float a = 0.0f;
      for (int jj = 0; jj < n; ++jj) a += p[jj] * ToFloat(v[head + (long long)(c + jj) * D + t]);
      acc = acc * alpha + a;
    }
    __syncthreads();  // p and red are rewritten by the next chunk
  }
  if (t < D) o[row * D + t] = FromFloat(acc / l);
}
