// FlashAttention-style tiling: one work-group per (b, h, tile of BLOCK_M queries), one
// work-item per query row. The Q tile and each tile of BLOCK_N keys and values are staged in
// local memory (fp32, zero past D); each work-item keeps its row's running max, running sum
// and fp32 output accumulator in private memory, rescaling them once per key tile (online
// softmax). Key tiles stop at the tile's last query (causal).
// @kernel flash_tiled
// @grid ceil_div(S, BLOCK_M), B * H
// @block BLOCK_M, 1
// @param BLOCK_M in [16, 32, 64, 128] default 32
// @param BLOCK_N in [8, 16, 32, 64] default 32
// @constraint D <= 128
// @constraint (BLOCK_M + 2 * BLOCK_N) * 128 * 4 <= local_mem_bytes

#define DMAX 128

__kernel void flash_tiled(__global const half* restrict q, __global const half* restrict k,
                          __global const half* restrict v, __global half* restrict o, int B, int H,
                          int S, int D, float scale) {
  __local float qs[BLOCK_M * DMAX];
  __local float ks[BLOCK_N * DMAX];
  __local float vs[BLOCK_N * DMAX];
  const int t = get_local_id(0);
  const int i0 = get_group_id(0) * BLOCK_M;
  const int i = i0 + t;
  const long head = (long)get_group_id(1) * S * D;

  for (int e = t; e < BLOCK_M * DMAX; e += BLOCK_M) {
    const int r = e / DMAX, d = e % DMAX;
    qs[e] = (i0 + r < S && d < D) ? vload_half(head + (long)(i0 + r) * D + d, q) : 0.0f;
  }

  float m = -INFINITY, l = 0.0f, acc[DMAX];
  for (int d = 0; d < DMAX; ++d) acc[d] = 0.0f;
  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    for (int e = t; e < BLOCK_N * DMAX; e += BLOCK_M) {
      const int r = e / DMAX, d = e % DMAX;
      const bool in = n0 + r < S && d < D;
      const long at = head + (long)(n0 + r) * D + d;
      ks[e] = in ? vload_half(at, k) : 0.0f;
      vs[e] = in ? vload_half(at, v) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < S) {
      const int n = min(BLOCK_N, i + 1 - n0);  // keys of this tile that row i sees
      float s[BLOCK_N];
      float m_new = m;
      for (int c = 0; c < n; ++c) {
        float dot = 0.0f;
        for (int d = 0; d < DMAX; ++d) dot += qs[t * DMAX + d] * ks[c * DMAX + d];
        s[c] = dot * scale;
        m_new = fmax(m_new, s[c]);
      }
      const float alpha = exp(m - m_new);  // 0 at the first tile, where m = -inf
      l *= alpha;
      for (int d = 0; d < DMAX; ++d) acc[d] *= alpha;
      for (int c = 0; c < n; ++c) {
        const float p = exp(s[c] - m_new);
        l += p;
        for (int d = 0; d < DMAX; ++d) acc[d] += p * vs[c * DMAX + d];
      }
      m = m_new;
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the tiles are rewritten next
  }
  if (i < S) {
    const float inv = 1.0f / l;
    for (int d = 0; d < D; ++d) vstore_half_rte(acc[d] * inv, head + (long)i * D + d, o);
  }
}
