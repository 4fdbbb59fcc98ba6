// Computes but writes nothing.
// @kernel writes_nothing
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
#include <cuda_fp16.h>
extern "C" __global__ void writes_nothing(const __half* q, const __half* k, const float* cos_t,
                                          const float* sin_t, __half* q_out, __half* k_out, int B,
                                          int S, int Hq, int Hkv, int D) {}
