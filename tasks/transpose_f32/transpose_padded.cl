// Tiled and padded: as the plain tiled transpose, but each tile row has one extra element
// (TILE x (TILE + 1)), so the column reads of the write phase fall in different local-memory
// banks.
// @kernel transpose_padded
// @grid ceil_div(C, TILE), ceil_div(R, TILE)
// @block TILE, TILE
// @param TILE in [8, 16, 32] default 16
// @constraint TILE * TILE <= max_work_group_size and TILE * (TILE + 1) * 4 <= local_mem_bytes

__kernel void transpose_padded(__global const float* restrict src, __global float* restrict dst,
                               int R, int C) {
  __local float tile[TILE][TILE + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int r = get_group_id(1) * TILE + ty, c = get_group_id(0) * TILE + tx;
  if (r < R && c < C) tile[ty][tx] = src[(long)r * C + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  // Write the tile's transpose: local id 0 now runs along a dst row, and
  // dst[dr, dc] = src[dc, dr] sits at tile[tx][ty].
  const int dr = get_group_id(0) * TILE + ty, dc = get_group_id(1) * TILE + tx;
  if (dr < C && dc < R) dst[(long)dr * R + dc] = tile[tx][ty];
}
