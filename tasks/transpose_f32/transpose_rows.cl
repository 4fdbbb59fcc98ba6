// Several rows per work-item: a TILE x BLOCK_ROWS work-group moves a padded TILE x (TILE + 1)
// tile, each work-item copying TILE / BLOCK_ROWS elements in each phase, so fewer work-items keep
// more loads in flight and the tile's index arithmetic is shared.
// @kernel transpose_rows
// @grid ceil_div(C, TILE), ceil_div(R, TILE)
// @block TILE, BLOCK_ROWS
// @param TILE in [16, 32, 64] default 32
// @param BLOCK_ROWS in [2, 4, 8, 16] default 8
// @constraint TILE % BLOCK_ROWS == 0 and TILE * BLOCK_ROWS <= max_work_group_size
// @constraint TILE * (TILE + 1) * 4 <= local_mem_bytes

__kernel void transpose_rows(__global const float* restrict src, __global float* restrict dst,
                             int R, int C) {
  __local float tile[TILE][TILE + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;
  if (c0 + tx < C) {
    for (int j = ty; j < TILE; j += BLOCK_ROWS)
      if (r0 + j < R) tile[j][tx] = src[(long)(r0 + j) * C + c0 + tx];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // dst[c0 + j, r0 + tx] = src[r0 + tx, c0 + j] sits at tile[tx][j].
  if (r0 + tx < R) {
    for (int j = ty; j < TILE; j += BLOCK_ROWS)
      if (c0 + j < C) dst[(long)(c0 + j) * R + r0 + tx] = tile[tx][j];
  }
}
