// Computes but writes nothing.
// @kernel writes_nothing
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
__kernel void writes_nothing(__global const half* q, __global const half* k,
                             __global const float* cos_t, __global const float* sin_t,
                             __global half* q_out, __global half* k_out, int B, int S, int Hq,
                             int Hkv, int D) {}
