// Deliberately broken: a syntax error. Must be judged `compile_error` with the compiler's message.
// @kernel rope_broken
// @grid 1
// @block 1
__kernel void rope_broken(__global const half* q, __global const half* k,
                          __global const float* cos_t, __global const float* sin_t,
                          __global half* q_out, __global half* k_out, int B, int S, int Hq, int Hkv,
                          int D) {
  int x = ;
}
