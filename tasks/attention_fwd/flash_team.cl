// A team of TEAM work-items per query row (OpenCL 1.2 on PoCL has no sub-groups, so the team
// talks through local memory): one work-group per (b, h, tile of BLOCK_M queries). The Q tile
// and each tile of BLOCK_N keys and values are copied into local memory as fp16 with
// async_work_group_copy (a tile's rows are contiguous in [S, D]), then widened to fp32 in local
// memory by the whole group, zero past D and S; for each key tile the team
// splits the keys to score them (the members' partial maxima reduced by the team), then splits
// the output dims to accumulate P * V, each member holding its dims in private fp32 registers.
// Online softmax across key tiles.
// @kernel flash_team
// @grid ceil_div(S, BLOCK_M), B * H
// @block BLOCK_M * TEAM, 1
// @param BLOCK_M in [4, 8, 16, 32] default 8
// @param TEAM in [4, 8, 16, 32] default 8
// @param BLOCK_N in [16, 32, 64] default 32
// @constraint D <= 128
// @constraint BLOCK_M * TEAM <= max_work_group_size
// @constraint (BLOCK_M + 2 * BLOCK_N) * 128 * 6 + (BLOCK_M * BLOCK_N + BLOCK_M * TEAM) * 4 <= local_mem_bytes

#define DMAX 128
#define DPT ((DMAX + TEAM - 1) / TEAM)  // output dims per member

__kernel void flash_team(__global const half* restrict q, __global const half* restrict k,
                         __global const half* restrict v, __global half* restrict o, int B, int H,
                         int S, int D, float scale) {
  __local ushort qh[BLOCK_M * DMAX];  // fp16 bits as copied: rows of D (not DMAX) halves
  __local ushort kh[BLOCK_N * DMAX];
  __local ushort vh[BLOCK_N * DMAX];
  __local float qs[BLOCK_M * DMAX];  // widened to fp32, rows of DMAX
  __local float ks[BLOCK_N * DMAX];
  __local float vs[BLOCK_N * DMAX];
  __local float ps[BLOCK_M * BLOCK_N];  // scores, then probabilities
  __local float red[BLOCK_M * TEAM];    // the members' partial maxima, then sums
  const int lid = get_local_id(0);
  const int r = lid / TEAM, lane = lid % TEAM;
  const int i0 = get_group_id(0) * BLOCK_M;
  const int i = i0 + r;
  const long head = (long)get_group_id(1) * S * D;

  const int q_rows = min(BLOCK_M, S - i0);
  event_t ev = async_work_group_copy(qh, (__global const ushort*)q + head + (long)i0 * D,
                                     (size_t)q_rows * D, 0);
  wait_group_events(1, &ev);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = lid; e < BLOCK_M * DMAX; e += BLOCK_M * TEAM) {
    const int rr = e / DMAX, d = e % DMAX;
    qs[e] = rr < q_rows && d < D ? vload_half(rr * D + d, (__local const half*)qh) : 0.0f;
  }

  float m = -INFINITY, l = 0.0f, acc[DPT];  // l: this member's share of the row sum
  for (int u = 0; u < DPT; ++u) acc[u] = 0.0f;
  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    const int k_rows = min(BLOCK_N, S - n0);
    event_t evs[2];
    evs[0] = async_work_group_copy(kh, (__global const ushort*)k + head + (long)n0 * D,
                                   (size_t)k_rows * D, 0);
    evs[1] = async_work_group_copy(vh, (__global const ushort*)v + head + (long)n0 * D,
                                   (size_t)k_rows * D, 0);
    wait_group_events(2, evs);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < BLOCK_N * DMAX; e += BLOCK_M * TEAM) {
      const int rr = e / DMAX, d = e % DMAX;
      const bool in = rr < k_rows && d < D;
      ks[e] = in ? vload_half(rr * D + d, (__local const half*)kh) : 0.0f;
      vs[e] = in ? vload_half(rr * D + d, (__local const half*)vh) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Scores: member `lane` takes keys lane, lane + TEAM, ...
    const int n = i < S ? min(BLOCK_N, i + 1 - n0) : 0;  // keys of this tile that row i sees
    float mloc = -INFINITY;
    for (int c = lane; c < n; c += TEAM) {
      float dot = 0.0f;
      for (int d = 0; d < DMAX; ++d) dot += qs[r * DMAX + d] * ks[c * DMAX + d];
      ps[r * BLOCK_N + c] = dot * scale;
      mloc = fmax(mloc, dot * scale);
    }
    red[lid] = mloc;
    barrier(CLK_LOCAL_MEM_FENCE);
    float m_new = m;
    for (int w = 0; w < TEAM; ++w) m_new = fmax(m_new, red[r * TEAM + w]);
    const float alpha = n > 0 ? exp(m - m_new) : 1.0f;  // 0 at the first tile, where m = -inf
    l *= alpha;
    for (int c = lane; c < n; c += TEAM) {
      const float p = exp(ps[r * BLOCK_N + c] - m_new);
      ps[r * BLOCK_N + c] = p;
      l += p;
    }
    m = m_new;
    barrier(CLK_LOCAL_MEM_FENCE);

    // P * V: member `lane` owns dims lane, lane + TEAM, ...
    for (int u = 0; u < DPT; ++u) {
      const int d = lane + u * TEAM;
      float a = acc[u] * alpha;
      for (int c = 0; c < n; ++c) a += ps[r * BLOCK_N + c] * vs[c * DMAX + d];
      acc[u] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the tiles are rewritten next
  }

  red[lid] = l;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < S) {
    float sum = 0.0f;
    for (int w = 0; w < TEAM; ++w) sum += red[r * TEAM + w];
    const float inv = 1.0f / sum;
    for (int u = 0; u < DPT; ++u) {
      const int d = lane + u * TEAM;
      if (d < D) vstore_half_rte(acc[u] * inv, head + (long)i * D + d, o);
    }
  }
}
