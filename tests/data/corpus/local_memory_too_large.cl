// Asks for 8 MiB of local/shared memory per group, over every device's limit.
// @kernel big_local
// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), 128)
// @block 128
__kernel void big_local(__global const half* q, __global const half* k, __global const float* cos_t,
                        __global const float* sin_t, __global half* q_out, __global half* k_out,
                        int B, int S, int Hq, int Hkv, int D) {
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
  __local float scratch[2 << 20];
  scratch[get_local_id(0)] = x1;
  barrier(CLK_LOCAL_MEM_FENCE);
  x1 = scratch[get_local_id(0)];
  vstore_half_rte(x1 * c - x2 * sn, base + i, out);
  vstore_half_rte(x2 * c + x1 * sn, base + i + half_d, out);
}
