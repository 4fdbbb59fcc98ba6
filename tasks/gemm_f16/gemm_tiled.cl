// Local-memory tiling: a TILE x TILE work-group computes a TILE x TILE tile of C, one element per
// work-item, staging TILE x TILE tiles of A and B in local memory as fp32 (converted once on the
// way in, zeros past the matrix edges), so each global element is read once per group.
// @kernel gemm_tiled
// @grid ceil_div(N, TILE), ceil_div(M, TILE)
// @block TILE, TILE
// @param TILE in [4, 8, 16, 32] default 16
// @constraint TILE * TILE <= max_work_group_size

__kernel void gemm_tiled(__global const half* restrict A, __global const half* restrict B,
                         __global half* restrict C, int M, int N, int K) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int n = get_group_id(0) * TILE + tx;
  const int m = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (m < M && k0 + tx < K) ? vload_half((long)m * K + k0 + tx, A) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && n < N) ? vload_half((long)(k0 + ty) * N + n, B) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (m < M && n < N) vstore_half_rte(acc, (long)m * N + n, C);
}
