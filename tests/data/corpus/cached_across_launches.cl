// Tries to keep its result between launches. OpenCL C 1.2 has no program-scope globals, so the
// only memory that outlives a launch is an argument buffer: this kernel marks the `sin` table
// (its last element) to say "computed", which the input checksums must catch.
// @kernel cached
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
__kernel void cached(__global const half* q, __global const half* k, __global const float* cos_t,
                     __global const float* sin_t, __global half* q_out, __global half* k_out, int B,
                     int S, int Hq, int Hkv, int D) {
  int half_d = D / 2;
  long p = get_global_id(0);
  long pq = (long)B * S * Hq * half_d, pk = (long)B * S * Hkv * half_d;
  if (p >= pq + pk) return;
  __global const half* x = q;
  __global half* out = q_out;
  int H = Hq;
  if (p >= pq) {
    p -= pq;
    x = k;
    out = k_out;
    H = Hkv;
  }
  int i = (int)(p % half_d);
  long row = p / half_d;
  int s = (int)((row / H) % S);
  long base = row * D;
  float c = cos_t[(long)s * half_d + i], sn = sin_t[(long)s * half_d + i];
  float x1 = vload_half(base + i, x), x2 = vload_half(base + i + half_d, x);
  vstore_half_rte(x1 * c - x2 * sn, base + i, out);
  vstore_half_rte(x2 * c + x1 * sn, base + i + half_d, out);
  if (p == 0) ((__global float*)sin_t)[(long)S * half_d - 1] = 12345.0f;  // the "computed" mark
}
