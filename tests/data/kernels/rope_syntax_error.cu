// Deliberately broken: a syntax error. Must be judged `compile_error` with the compiler's message.
// @kernel rope_broken
// @grid 1
// @block 1
#include <cuda_fp16.h>
extern "C" __global__ void rope_broken(const __half* q, const __half* k, const float* cos_t,
                                       const float* sin_t, __half* q_out, __half* k_out, int B,
                                       int S, int Hq, int Hkv, int D) {
  int x = ;
}
