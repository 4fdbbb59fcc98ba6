// Deliberately broken: writes NaN into every output element. Must be judged `nan`.
// @kernel rope_nan
// @grid ceil_div(B * S * (Hq + Hkv) * D, 128)
// @block 128
__kernel void rope_nan(__global const half* q, __global const half* k, __global const float* cos_t,
                       __global const float* sin_t, __global half* q_out, __global half* k_out,
                       int B, int S, int Hq, int Hkv, int D) {
  long e = get_global_id(0);
  long nq = (long)B * S * Hq * D, nk = (long)B * S * Hkv * D;
  float zero = cos_t[0] - cos_t[0];  // 0, but not a constant the compiler may fold
  if (e < nq)
    vstore_half(zero / zero, e, q_out);
  else if (e < nq + nk)
    vstore_half(zero / zero, e - nq, k_out);
}
