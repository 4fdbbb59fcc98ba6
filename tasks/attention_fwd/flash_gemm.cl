// FlashAttention as two register-tiled matrix products per key tile: one work-group per (b, h,
// tile of BLOCK_M queries), tiles staged in local memory with vload_half4 (fp32, zero past D
// and S). S = Q K^T is computed in unrolled RM x RN micro-tiles of float4 dot products; one
// work-item per row then does the online-softmax step for the tile (new max, rescale factor,
// sum); for O += P V each work-item owns an RM x DV block of the output in private registers.
// @kernel flash_gemm
// @grid ceil_div(S, BLOCK_M), B * H
// @block (BLOCK_M // RM) * (128 // DV), 1
// @param BLOCK_M in [16, 32, 64] default 32
// @param BLOCK_N in [16, 32, 64] default 32
// @param RM in [1, 2, 4] default 2
// @param RN in [1, 2, 4] default 4
// @param DV in [4, 8, 16] default 8
// @constraint D <= 128
// @constraint (BLOCK_M // RM) * (128 // DV) <= max_work_group_size
// @constraint ((BLOCK_M + 2 * BLOCK_N) * 128 + BLOCK_M * BLOCK_N + 3 * BLOCK_M) * 4 <= local_mem_bytes

#define DMAX 128
#define NT ((BLOCK_M / RM) * (DMAX / DV))  // work-items per group

// Loads row r of an fp16 [.., D] tile into fp32 local memory as 4-wide chunks, zero past D.
inline void load_chunk(__global const half* src, long at, int d, int D, __local float* dst) {
  float4 x = (float4)(0.0f);
  if (d + 4 <= D) {
    x = vload_half4(0, src + at);
  } else {
    if (d < D) x.s0 = vload_half(at, src);
    if (d + 1 < D) x.s1 = vload_half(at + 1, src);
    if (d + 2 < D) x.s2 = vload_half(at + 2, src);
  }
  vstore4(x, 0, dst);
}

__kernel void flash_gemm(__global const half* restrict q, __global const half* restrict k,
                         __global const half* restrict v, __global half* restrict o, int B, int H,
                         int S, int D, float scale) {
  __local float qs[BLOCK_M * DMAX];
  __local float ks[BLOCK_N * DMAX];
  __local float vs[BLOCK_N * DMAX];
  __local float ps[BLOCK_M * BLOCK_N];                   // scores, then probabilities
  __local float ms[BLOCK_M], ls[BLOCK_M], als[BLOCK_M];  // running max, sum, this tile's rescale
  const int lid = get_local_id(0);
  const int i0 = get_group_id(0) * BLOCK_M;
  const long head = (long)get_group_id(1) * S * D;

  for (int e = lid; e < BLOCK_M * DMAX / 4; e += NT) {
    const int r = e / (DMAX / 4), d = (e % (DMAX / 4)) * 4;
    if (i0 + r < S)
      load_chunk(q, head + (long)(i0 + r) * D + d, d, D, qs + 4 * e);
    else
      vstore4((float4)(0.0f), e, qs);
  }
  for (int r = lid; r < BLOCK_M; r += NT) {
    ms[r] = -INFINITY;
    ls[r] = 0.0f;
  }

  const int r0 = (lid / (DMAX / DV)) * RM, d0 = (lid % (DMAX / DV)) * DV;  // this output block
  float4 acc[RM][DV / 4];
#pragma unroll
  for (int a = 0; a < RM; ++a)
#pragma unroll
    for (int u = 0; u < DV / 4; ++u) acc[a][u] = (float4)(0.0f);

  const int kv_end = min(S, i0 + BLOCK_M);
  for (int n0 = 0; n0 < kv_end; n0 += BLOCK_N) {
    for (int e = lid; e < BLOCK_N * DMAX / 4; e += NT) {
      const int r = e / (DMAX / 4), d = (e % (DMAX / 4)) * 4;
      const long at = head + (long)(n0 + r) * D + d;
      if (n0 + r < S) {
        load_chunk(k, at, d, D, ks + 4 * e);
        load_chunk(v, at, d, D, vs + 4 * e);
      } else {
        vstore4((float4)(0.0f), e, ks);
        vstore4((float4)(0.0f), e, vs);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // S = Q K^T * scale, causal mask as -inf.
    for (int tile = lid; tile < (BLOCK_M / RM) * (BLOCK_N / RN); tile += NT) {
      const int rm = (tile / (BLOCK_N / RN)) * RM, cn = (tile % (BLOCK_N / RN)) * RN;
      float s[RM][RN];
#pragma unroll
      for (int a = 0; a < RM; ++a)
#pragma unroll
        for (int b = 0; b < RN; ++b) s[a][b] = 0.0f;
      for (int d = 0; d < DMAX; d += 4) {
        float4 kv[RN];
#pragma unroll
        for (int b = 0; b < RN; ++b) kv[b] = vload4(0, ks + (cn + b) * DMAX + d);
#pragma unroll
        for (int a = 0; a < RM; ++a) {
          const float4 qv = vload4(0, qs + (rm + a) * DMAX + d);
#pragma unroll
          for (int b = 0; b < RN; ++b) s[a][b] += dot(qv, kv[b]);
        }
      }
#pragma unroll
      for (int a = 0; a < RM; ++a)
#pragma unroll
        for (int b = 0; b < RN; ++b) {
          const int j = n0 + cn + b;
          const bool seen = j <= i0 + rm + a && j < S;
          ps[(rm + a) * BLOCK_N + cn + b] = seen ? s[a][b] * scale : -INFINITY;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Online softmax, one work-item per row: every row sees key 0 in the first tile, so the
    // running max is finite from then on.
    for (int r = lid; r < BLOCK_M; r += NT) {
      float mx = ms[r];
      for (int c = 0; c < BLOCK_N; ++c) mx = fmax(mx, ps[r * BLOCK_N + c]);
      const float alpha = exp(ms[r] - mx);
      float sum = 0.0f;
      for (int c = 0; c < BLOCK_N; ++c) {
        const float p = exp(ps[r * BLOCK_N + c] - mx);
        ps[r * BLOCK_N + c] = p;
        sum += p;
      }
      ls[r] = ls[r] * alpha + sum;
      ms[r] = mx;
      als[r] = alpha;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // O = O * alpha + P V on this work-item's RM x DV block.
    const int n = min(BLOCK_N, kv_end - n0);
#pragma unroll
    for (int a = 0; a < RM; ++a) {
      const float alpha = als[r0 + a];
#pragma unroll
      for (int u = 0; u < DV / 4; ++u) acc[a][u] *= alpha;
    }
    for (int c = 0; c < n; ++c) {
      float4 vv[DV / 4];
#pragma unroll
      for (int u = 0; u < DV / 4; ++u) vv[u] = vload4(0, vs + c * DMAX + d0 + 4 * u);
#pragma unroll
      for (int a = 0; a < RM; ++a) {
        const float p = ps[(r0 + a) * BLOCK_N + c];
#pragma unroll
        for (int u = 0; u < DV / 4; ++u) acc[a][u] += p * vv[u];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the tiles are rewritten next
  }

#pragma unroll
  for (int a = 0; a < RM; ++a) {
    const int i = i0 + r0 + a;
    if (i >= S) break;
    const float inv = 1.0f / ls[r0 + a];
#pragma unroll
    for (int u = 0; u < DV / 4; ++u) {
      const float4 x = acc[a][u] * inv;
      const int d = d0 + 4 * u;
      const long at = head + (long)i * D + d;
      if (d + 4 <= D) {
        vstore_half4_rte(x, 0, o + at);
      } else {
        if (d < D) vstore_half_rte(x.s0, at, o);
        if (d + 1 < D) vstore_half_rte(x.s1, at + 1, o);
        if (d + 2 < D) vstore_half_rte(x.s2, at + 2, o);
      }
    }
  }
}
